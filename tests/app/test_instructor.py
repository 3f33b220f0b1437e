"""The Instructor page through AppTest: no key means nothing is created; with a key an instructor
creates a room, a learner joins it, answers show up in the class view, and a reveal shows the
learner the room's answers only after they answered."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from streamlit.testing.v1 import AppTest

from core import lessons
from store.ids import new_learner_id
from tests.app.conftest import HOME, answer, chart_rows, open_box
from ui import state
from ui.identity import RUNS
from ui.instructor import KEY_ENV, ROOM
from ui.rooms import ROOM_OPEN, room_store

INSTRUCTOR = "pages/instructor.py"
HOUR = timedelta(hours=1)
KEY = "workshop-key-for-tests-0123456789"


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def _instructor(secret: str | None = KEY) -> AppTest:
    at = AppTest.from_file(str(HOME), default_timeout=60)
    if secret is not None:
        at.secrets["instructor_key"] = secret
    return at.run().switch_page(INSTRUCTOR).run()


def _sign_in(at: AppTest, typed: str) -> AppTest:
    at.text_input(key="instructor.key_typed").input(typed)
    [button] = [b for b in at.button if b.label == "Sign in"]
    button.click()
    return at.run()


def _learner(page: str = "pages/four_runs.py") -> AppTest:
    at = AppTest.from_file(str(HOME), default_timeout=60)
    at.session_state[state.LEARNER_ID] = new_learner_id()
    return at.run().switch_page(page).run()


def _join(at: AppTest, code: str, name: str = "") -> AppTest:
    if not [box for box in at.text_input if box.key == "room.code"]:
        open_box(at, ROOM_OPEN)  # the box is built only while open
    at.text_input(key="room.code").input(code)
    at.text_input(key="room.name").input(name)
    [button] = [b for b in at.button if b.label == "Join"]
    button.click()
    return at.run()


def test_without_a_key_the_page_explains_and_creates_nothing() -> None:
    at = _instructor(secret=None)
    assert not at.exception
    assert "instructor_key" in at.info[0].value and KEY_ENV in at.info[0].value
    assert not [b for b in at.button if b.label in ("Sign in", "Create a room")]


def test_the_key_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    at = _sign_in(_instructor(secret=None), KEY)
    assert not at.exception
    assert [b for b in at.button if b.label == "Create a room"]


def test_a_wrong_key_opens_nothing() -> None:
    at = _sign_in(_instructor(), KEY + "x")
    assert not at.exception
    assert at.error[0].value == lessons.sentence("instructor", "wrong_key")
    assert not [b for b in at.button if b.label == "Create a room"]


def _room(at: AppTest) -> tuple[AppTest, str]:
    at = _sign_in(at, KEY)
    [create] = [b for b in at.button if b.label == "Create a room"]
    create.click()
    at = at.run()
    assert not at.exception
    return at, at.session_state[ROOM]


def _learners_metric(at: AppTest) -> str:
    [metric] = [m for m in at.metric if m.label == "Learners in the room"]
    return metric.value


def test_answers_reach_the_class_view_and_a_reveal_waits_for_the_learners_answer() -> None:
    teacher, code = _room(_instructor())
    assert any(f"?room={code}" in c.value for c in teacher.code)
    assert _learners_metric(teacher) == "0"

    learner = _join(_learner(), code, "Ada <b>")
    assert not learner.exception and learner.success[0].value == lessons.sentence("rooms", "joined")
    learner = answer(learner, "r1", "speed")
    assert room_store().first_answers(code, "r1") == ["speed"]

    teacher = teacher.run()
    assert _learners_metric(teacher) == "1"
    chart = teacher.get("vega_lite_chart")[0]
    rows = chart_rows(chart, json.loads(chart.proto.spec)["data"]["name"])
    counts = {row["option"]: row["count"] for row in rows}
    assert sorted(counts.values()) == [0, 0, 0, 1]
    assert [t.value for t in teacher.text] == ["Ada <b>"]  # shown as text, exactly as typed

    other = _join(_learner(), code)  # joins, has not answered r2 yet
    teacher.toggle(key="instructor.reveal.r1").set_value(True)
    teacher.toggle(key="instructor.reveal.r2").set_value(True)
    teacher = teacher.run()
    assert room_store().revealed(code) == {"r1", "r2"}

    learner = learner.run()
    # r1 is revealed and this learner answered it: the room's one first answer so far.
    assert lessons.sentence("rooms", "room_answered", answered=1) in [c.value for c in learner.caption]
    other = other.run()
    assert lessons.sentence("rooms", "room_answered", answered=1) not in [c.value for c in other.caption]


def test_a_full_room_turns_the_next_learner_away() -> None:
    room = room_store().create_room(capacity=1, lifetime=HOUR)
    first = _join(_learner(), room.code)
    assert first.success[0].value == lessons.sentence("rooms", "joined")
    second = _join(_learner(), room.code)
    assert second.error[0].value == lessons.sentence("rooms", "room_full")


def test_joining_reruns_the_whole_app_and_a_code_that_joins_nothing_only_the_box() -> None:
    # AppTest runs the whole script for a click; in a browser the box's fragment runs alone, and a
    # join asks for the second run, which draws the room's answers under the page's questions.
    room = room_store().create_room(capacity=5, lifetime=HOUR)
    at = open_box(_learner(), ROOM_OPEN)
    runs = at.session_state[RUNS]
    _join(at, "ZZZZZZ")
    assert at.session_state[RUNS] == runs + 1
    assert [e.value for e in at.sidebar.error] == [lessons.sentence("rooms", "unknown_room")]
    _join(at, room.code)
    assert at.session_state[RUNS] == runs + 3
    assert [s.value for s in at.sidebar.success] == [lessons.sentence("rooms", "joined")]
    assert [c.value for c in at.sidebar.code] == [room.code]  # the box shows the room it is in


def test_a_join_link_fills_in_the_code() -> None:
    room = room_store().create_room(capacity=5, lifetime=HOUR)
    at = AppTest.from_file(str(HOME), default_timeout=60)
    at.session_state[state.LEARNER_ID] = new_learner_id()
    at.query_params["room"] = room.code
    at = at.run()
    assert at.text_input(key="room.code").value == room.code
    assert room_store().class_work(room.code) == []  # a link alone joins nobody
