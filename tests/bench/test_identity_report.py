"""How a visit learns whose work it is. A returning browser's cookie opens its work in the visit's first
run; without it, the browser's report of its learner id reruns the identity check alone, and the whole
app only when the id opens something the page must show (stored work, a room). A cookie that disagrees
with the browser's storage gives way to it, and no work moves between the two learners.

A real `streamlit run Home.py` on a free loopback port, driven over Streamlit's own protocol by the
benchmark's client, which answers the identity component as the browser's JavaScript does.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.class_at_once import NO_WORK
from core.questions import load_bank
from store.ids import new_learner_id
from tests.harness.browser import Browser, identify, identity_component, rerun_here
from tests.harness.load_client import RunResult, Session, open_root_once
from ui.database import learner_store
from ui.identity import COOKIE
from ui.rooms import room_store

FRAGMENT_OK, WHOLE_OK = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY, ForwardMsg.FINISHED_SUCCESSFULLY


def _locked_radios(session: Session) -> int:
    return sum(w.kind == "radio" and w.disabled for w in session.model.widgets.values())


@dataclass(frozen=True)
class Visit:
    first: RunResult  # the visit's first run
    report: RunResult | None  # the run the browser's report of its id led to; None if it had none
    learner: str  # the id the browser keeps
    locked: int  # how many answers the page shows locked once the id is settled
    symptom_kept: bool  # whether the learner's next change, a symptom picked, reached the store


async def _visit(port: int, stored_id: str | None, cookie_id: str | None = None) -> Visit:
    """Open Execution stack in a browser whose storage holds `stored_id` and whose cookie holds
    `cookie_id` (None: nothing), do what the component's JavaScript does, then pick another symptom."""
    await open_root_once(port, timeout_s=60)
    browser = Browser(cookies={} if cookie_id is None else {COOKIE: cookie_id}, stored_id=stored_id)
    session = Session(port=port, marker="bench-s912-visit", timeout_s=60, cookies=browser.cookies)
    try:
        first = await session.connect("execution-stack")
        component = identity_component(session)
        assert component.fragment_id, "the identity component is drawn inside a fragment"
        report = await identify(session, browser)
        if report is not None:
            assert report.fragment_id == component.fragment_id  # the browser asks for the fragment alone
        kept = browser.stored_id
        assert kept is not None
        locked = _locked_radios(session)
        before = learner_store().load(kept)["settings"]
        assert before, "the app took the id: the defaults the page showed are in that learner's record"
        [symptom] = [w for w in session.model.widgets.values() if w.kind == "radio" and w.label == "Symptom"]
        shown = session.model.values.get(symptom.id, symptom.pushed_value)
        session.model.set_value(symptom.id, next(option for option in symptom.options if option != shown))
        await rerun_here(session)
        return Visit(first, report, kept, locked, learner_store().load(kept)["settings"] != before)
    finally:
        await session.close()


def _returning_learner(*, answered: bool = True) -> str:
    """A learner with a locked answer on Execution stack (or, with `answered` false, in a room)."""
    learner = new_learner_id()
    learner_store().open_record(learner, NO_WORK, shown={})
    if answered:
        learner_store().add_answer(learner, "c1", load_bank().question("c1").correct)
    else:
        room = room_store().create_room(capacity=5, lifetime=timedelta(hours=1))
        room_store().join(room.code, learner, None)
    return learner


def test_a_new_learners_report_reruns_only_the_identity_check(server) -> None:
    visit = asyncio.run(_visit(server.port, None))
    assert visit.report is not None
    assert (visit.report.script_runs, visit.report.status) == (
        1,
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
    )
    assert visit.locked == 0
    # The page's widgets were not drawn again; a change to one after the report still counts.
    assert visit.symptom_kept
    assert server.log_problems() == 0


@pytest.mark.parametrize("answered", [True, False], ids=["stored-answer", "in-a-room"])
def test_a_returning_learners_report_without_a_cookie_reruns_the_whole_app(server, answered: bool) -> None:
    learner = _returning_learner(answered=answered)
    visit = asyncio.run(_visit(server.port, learner))
    assert visit.report is not None
    # The fragment's run, then the whole app's, which draws the learner's work.
    assert (visit.report.script_runs, visit.report.status) == (2, WHOLE_OK)
    assert visit.locked == (1 if answered else 0)
    assert visit.symptom_kept
    assert server.log_problems() == 0


def test_a_returning_browsers_cookie_opens_its_work_in_the_first_run(server) -> None:
    learner = _returning_learner()
    visit = asyncio.run(_visit(server.port, learner, cookie_id=learner))
    assert visit.first.script_runs == 1
    assert visit.report is None  # the component finds the id the script knows: nothing to report
    assert visit.locked == 1
    assert visit.symptom_kept
    assert server.log_problems() == 0


def test_a_cookie_that_disagrees_with_the_browsers_storage_gives_way_and_copies_nothing(server) -> None:
    theirs, mine = _returning_learner(), new_learner_id()
    visit = asyncio.run(_visit(server.port, mine, cookie_id=theirs))
    assert visit.report is not None
    assert (visit.report.script_runs, visit.report.status) == (2, WHOLE_OK)
    assert visit.locked == 0  # the browser's own work, empty, not the cookie's learner's
    assert learner_store().load(mine)["answers"] == {}
    assert list(learner_store().load(theirs)["answers"]) == ["c1"]
    assert server.log_problems() == 0
