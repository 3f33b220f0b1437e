"""Store round trips per interaction (issue 21): a first visit stores its defaults in one write per
section, a plain rerun asks the store nothing, and a changed setting is one write."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.settings_schema import section
from store import LearnerStore
from store.ids import new_learner_id
from store.rooms import RoomStore
from tests.app.conftest import HOME, answer
from ui import state
from ui.database import learner_store

MEMORY = "pages/memory_budget.py"


@pytest.fixture
def store_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The name of every LearnerStore and RoomStore method called, in order (each is one round trip)."""
    calls: list[str] = []

    def counted(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return method(*args, **kwargs)

        return call

    for kind in (LearnerStore, RoomStore):
        for name, method in inspect.getmembers(kind, inspect.isfunction):
            if not name.startswith("_"):
                monkeypatch.setattr(kind, name, counted(name, method))
    yield calls


def _loaded_session(learner: str) -> AppTest:
    """A session the browser says belongs to `learner`, with their record loaded (on Home)."""
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.session_state[state.LEARNER_ID] = learner
    return at.run()


# Linear layer cost ends early until its placements are locked (its `draw` returns).
@pytest.mark.parametrize(("page", "name"), [(MEMORY, "memory"), ("pages/linear_layer.py", "linear")])
def test_a_first_visit_stores_the_page_s_defaults_in_one_write(store_calls: list[str], page: str, name: str):
    learner = new_learner_id()
    at = _loaded_session(learner)
    store_calls.clear()
    at.switch_page(page).run()
    assert not at.exception
    seeded = at.session_state[state.SETTINGS][name]
    assert len(seeded) >= 5  # a page with many settings: each used to be a write of its own
    assert at.session_state[state.SEEDED] == {}
    assert store_calls == ["put_settings_if_absent"]
    assert learner_store().load(learner)["settings"][name] == seeded
    assert set(seeded) <= {f.name for f in section(name).fields}


def test_a_session_s_first_load_opens_its_record_and_reads_its_room_once(store_calls: list[str]):
    at = _loaded_session(new_learner_id())
    assert store_calls == ["open_record", "membership"]
    store_calls.clear()
    at.run()
    assert store_calls == []


def test_a_plain_rerun_asks_the_store_nothing_and_a_change_is_one_write(store_calls: list[str]):
    learner = new_learner_id()
    at = _loaded_session(learner).switch_page("pages/linear_layer.py").run()
    store_calls.clear()
    at.run()
    assert store_calls == []
    at.slider(key="linear.batch").set_value(64).run()
    assert store_calls == ["put_setting"]
    assert learner_store().load(learner)["settings"]["linear"]["batch"] == 64
    store_calls.clear()
    answer(at, "c2", "a")
    assert store_calls == ["add_answer"]
    assert learner_store().load(learner)["answers"] == {"c2": "a"}
