"""The Instructor page through AppTest: no key means nothing is created; with a key an instructor
creates a room, a learner joins it, answers show up in the class view, and a reveal shows the
learner the room's answers only after they answered."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from core import lessons
from core.attempts import ProcessTally
from core.rooms import ROOM_CODE_ALPHABET
from core.signing import MAKE_A_KEY
from store.guard_schema import failed_attempts
from store.ids import new_learner_id
from tests.app.conftest import HOME, answer, chart_rows, open_box
from ui import instructor, rooms, state
from ui.database import learner_store
from ui.identity import RUNS
from ui.instructor import KEY_ENV, ROOM, SIGN_IN_BACKOFF
from ui.rooms import ROOM_OPEN, room_store

INSTRUCTOR = "pages/instructor.py"
HOUR = timedelta(hours=1)
KEY = "Jb1m0lJ5m2Qe8XfR0aK7tqWc4yZpL9sVnE3uHdG6oTw"  # secrets.token_urlsafe(32)


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.fixture(autouse=True)
def _no_failures_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no wrong keys or refused codes counted, in the process or the store."""
    monkeypatch.setattr(instructor, "_PROCESS", ProcessTally(SIGN_IN_BACKOFF))
    with learner_store().engine.begin() as connection:
        connection.execute(sa.delete(failed_attempts))


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
    assert second.error[0].value == lessons.sentence("rooms", "refused")


def test_joining_reruns_the_whole_app_and_a_code_that_joins_nothing_only_the_box() -> None:
    # AppTest runs the whole script for a click; in a browser the box's fragment runs alone, and a
    # join asks for the second run, which draws the room's answers under the page's questions.
    room = room_store().create_room(capacity=5, lifetime=HOUR)
    at = open_box(_learner(), ROOM_OPEN)
    runs = at.session_state[RUNS]
    _join(at, "ZZZZZZ")
    assert at.session_state[RUNS] == runs + 1
    assert [e.value for e in at.sidebar.error] == [lessons.sentence("rooms", "refused")]
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


class _Clock:
    """A wall clock the test moves by hand, for the sign-in and join limits."""

    def __init__(self, now_s: float) -> None:
        self.now_s = now_s

    def time(self) -> float:
        return self.now_s


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    moved = _Clock(1_000_000.0)
    monkeypatch.setattr(instructor, "time", moved)
    monkeypatch.setattr(rooms, "time", moved)
    return moved


@pytest.mark.parametrize(
    "weak", ["teach", "workshop2026" * 4, "0123456789" * 7, "e2e-instructor-key-0123456789abcdef"]
)
def test_a_weak_instructor_key_opens_nothing_and_says_how_to_make_one(
    weak: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _instructor(secret=weak)
    assert not at.exception
    [error] = at.error
    monkeypatch.setenv(KEY_ENV, weak)  # the same key, read as the page reads it, outside a page run
    with pytest.raises(ValueError) as refused:
        instructor.instructor_key()
    assert str(refused.value) in error.value and MAKE_A_KEY in error.value  # core's sentence: how to make one
    assert weak not in error.value
    assert not [b for b in at.button if b.label in ("Sign in", "Create a room")]


def test_wrong_keys_earn_a_doubling_wait_and_a_key_typed_while_waiting_is_not_compared(
    clock: _Clock, caplog: pytest.LogCaptureFixture
) -> None:
    at = _instructor()
    wrong = lessons.sentence("instructor", "wrong_key")
    for typed in ("teach", "Teach", "teach1", "teach2", "teach3"):  # five typos cost nothing
        at = _sign_in(at, typed)
        assert [e.value for e in at.error] == [wrong]
    at = _sign_in(at, "teach4")  # the sixth waits 2 s
    assert [e.value for e in at.error] == [f"{wrong} {lessons.sentence('instructor', 'wait', seconds=2)}"]
    clock.now_s += 1.0
    at = _sign_in(at, KEY)  # the right key, a second too early: refused without being compared
    assert [e.value for e in at.error] == [lessons.sentence("instructor", "wait", seconds=1)]
    assert not [b for b in at.button if b.label == "Create a room"]
    clock.now_s += 1.0
    at = _sign_in(at, "teach5")  # the seventh waits 4 s
    assert lessons.sentence("instructor", "wait", seconds=4) in at.error[0].value
    clock.now_s += 4.0
    at = _sign_in(at, KEY)
    assert [b for b in at.button if b.label == "Create a room"]
    # One log line per wrong key, with counts and never what was typed.
    lines = [r.getMessage() for r in caplog.records if r.name == "ui.instructor"]
    assert len(lines) == 7
    assert lines[-1].startswith("Instructor sign-in refused: wrong key (7 in this session, 7 in this process")
    assert not any("teach" in line or KEY in line for line in lines)


def test_a_new_session_or_another_replica_does_not_start_a_guesser_afresh(
    clock: _Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _instructor()
    for attempt in range(6):
        at = _sign_in(at, f"guess{attempt}")
    clock.now_s += 1.0
    fresh = _sign_in(_instructor(), KEY)  # a new session of the same process
    assert [e.value for e in fresh.error] == [lessons.sentence("instructor", "wait", seconds=1)]
    monkeypatch.setattr(instructor, "_PROCESS", ProcessTally(SIGN_IN_BACKOFF))  # another replica
    elsewhere = _sign_in(_instructor(), KEY)
    assert [e.value for e in elsewhere.error] == [lessons.sentence("instructor", "wait", seconds=1)]
    clock.now_s += 1.0
    assert [b for b in _sign_in(_instructor(), KEY).button if b.label == "Create a room"]


def test_unknown_full_and_closed_codes_get_the_same_sentence() -> None:
    full = room_store().create_room(capacity=1, lifetime=HOUR)
    _join(_learner(), full.code)
    closed = room_store().create_room(capacity=5, lifetime=HOUR)
    room_store().close_room(closed.code)
    refused = [
        [e.value for e in _join(_learner(), code).sidebar.error]
        for code in ("ZZZZZZ", full.code, closed.code, "not a code")
    ]
    assert refused == [[lessons.sentence("rooms", "refused")]] * 4


def test_one_address_may_try_twenty_codes_that_open_nothing_then_waits(
    clock: _Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rooms, "client_address", lambda: "127.0.0.42")
    room = room_store().create_room(capacity=50, lifetime=HOUR)
    prober = open_box(_learner(), ROOM_OPEN)
    for attempt in range(21):
        never_made = f"ZZZZ{ROOM_CODE_ALPHABET[attempt % 10]}{ROOM_CODE_ALPHABET[attempt // 10]}"
        prober = _join(prober, never_made)
    assert [e.value for e in prober.sidebar.error] == [lessons.sentence("rooms", "refused")]
    clock.now_s += 0.5
    # Another browser behind the same address, with a real code: the address waits 2 s first.
    classmate = _join(_learner(), room.code)
    assert [e.value for e in classmate.sidebar.error] == [lessons.sentence("rooms", "wait", seconds=2)]
    assert room_store().class_work(room.code) == []
    clock.now_s += 1.5
    classmate = _join(classmate, room.code)
    assert [s.value for s in classmate.sidebar.success] == [lessons.sentence("rooms", "joined")]


def test_a_learner_joins_without_a_name_and_is_told_what_the_instructor_sees() -> None:
    room = room_store().create_room(capacity=5, lifetime=HOUR)
    at = _join(_learner(), room.code, "")
    assert [s.value for s in at.sidebar.success] == [lessons.sentence("rooms", "joined")]
    [work] = room_store().class_work(room.code)
    assert work.name is None
    assert lessons.text("rooms", "what_instructor_sees") in [c.value for c in at.sidebar.caption]
