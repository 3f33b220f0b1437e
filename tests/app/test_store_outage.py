"""While the store cannot be reached the lab keeps working in memory; when it is back, what the store
had locked meanwhile wins over what the tab did offline, and nothing stored is lost or overwritten."""

from __future__ import annotations

import pytest

from store.ids import new_learner_id
from tests.app.conftest import answer, predict
from tests.app.test_learner_record import _saved_note, _session_of
from tests.harness.server import free_port
from ui.database import learner_store

LINEAR = "pages/linear_layer.py"
GELU = "predict.linear.gelu"
HELD = {"choice": "memory-bound", "actual": "memory-bound"}  # with the page's defaults


def test_work_done_offline_never_replaces_what_another_tab_locked_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
):
    learner = new_learner_id()
    at = _session_of(learner)
    # Another tab, still connected, locks both before this tab loses the store.
    learner_store().add_answer(learner, "q1", "a")
    learner_store().put_record(learner, GELU, HELD)
    monkeypatch.setenv("LAB_DATABASE_URL", f"postgresql://lab@127.0.0.1:{free_port()}/lab")
    answer(at, "q1", "b")
    predict(at.switch_page(LINEAR).run(), "linear.gelu", "compute-bound")
    assert at.session_state["answers"] == {"q1": "b"}  # the tab kept working in memory
    assert at.session_state["records"][GELU]["choice"] == "compute-bound"
    assert "not_saved" in _saved_note(at)
    monkeypatch.delenv("LAB_DATABASE_URL")
    at.run()  # any click: the app tries again
    assert "saved" in _saved_note(at)
    stored = learner_store().load(learner)
    assert stored["answers"] == {"q1": "a"} and stored["records"][GELU] == HELD
    assert at.session_state["answers"] == {"q1": "a"}  # the tab now shows what the store kept
    assert at.session_state["records"][GELU] == HELD
