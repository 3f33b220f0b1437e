"""The browser's report of its learner id reruns the identity check alone, and the whole app only when
the id opens something the page must show: stored work, or a room the learner is in.

A real `streamlit run Home.py` on a free loopback port, driven over Streamlit's own protocol by the
benchmark's client, which answers the identity component as the browser's JavaScript does.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.load_client import RunResult, Session, open_root_once
from bench.page_model import WidgetInfo
from bench.workshop import IDENTITY_COMPONENT, rerun_here
from core.questions import load_bank
from store.ids import new_learner_id
from ui.database import learner_store
from ui.rooms import room_store

EMPTY_WORK: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}


def _component(session: Session) -> WidgetInfo:
    [found] = [
        w
        for w in session.model.widgets.values()
        if w.kind == "bidi_component" and IDENTITY_COMPONENT in w.label
    ]
    return found


def _locked_radios(session: Session) -> int:
    return sum(w.kind == "radio" and w.disabled for w in session.model.widgets.values())


@dataclass(frozen=True)
class Visit:
    report: RunResult  # the run the browser's report of its id led to
    locked: int  # how many answers the page then shows locked
    symptom_kept: bool  # whether the learner's next change, a symptom picked, reached the store


async def _visit(port: int, stored_id: str | None) -> Visit:
    """Open Execution stack in a browser whose storage holds `stored_id` (None: a new browser, which keeps
    the id the page offers), report it as the component's JavaScript does, then pick another symptom."""
    await open_root_once(port, timeout_s=60)
    session = Session(port=port, marker="bench-s912-visit", timeout_s=60)
    try:
        await session.connect("execution-stack")
        component = _component(session)
        assert component.fragment_id, "the identity component is drawn inside a fragment"
        reported = stored_id or json.loads(component.data)["candidate"]
        session.model.set_value(component.id, json.dumps({"learner_id": reported}))
        report = await rerun_here(session)
        assert report.fragment_id == component.fragment_id  # the browser asks for the fragment alone
        locked = _locked_radios(session)
        before = learner_store().load(reported)["settings"]
        assert before, "the app took the id: the defaults the page showed are in that learner's record"
        [symptom] = [w for w in session.model.widgets.values() if w.kind == "radio" and w.label == "Symptom"]
        shown = session.model.values.get(symptom.id, symptom.pushed_value)
        session.model.set_value(symptom.id, next(option for option in symptom.options if option != shown))
        await rerun_here(session)
        return Visit(report, locked, learner_store().load(reported)["settings"] != before)
    finally:
        await session.close()


def test_a_new_learners_report_reruns_only_the_identity_check(server) -> None:
    visit = asyncio.run(_visit(server.port, None))
    assert (visit.report.script_runs, visit.report.status) == (
        1,
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
    )
    assert visit.locked == 0
    # The page's widgets were not drawn again; a change to one after the report still counts.
    assert visit.symptom_kept
    assert server.log_problems() == 0


@pytest.mark.parametrize("answered", [True, False], ids=["stored-answer", "in-a-room"])
def test_a_returning_learners_report_reruns_the_whole_app(server, answered: bool) -> None:
    learner = new_learner_id()
    learner_store().open_record(learner, EMPTY_WORK, shown={})
    if answered:
        learner_store().add_answer(learner, "c1", load_bank().question("c1").correct)
    else:
        room = room_store().create_room(capacity=5, lifetime=timedelta(hours=1))
        room_store().join(room.code, learner, None)
    visit = asyncio.run(_visit(server.port, learner))
    # The fragment's run, then the whole app's, which draws the learner's work.
    assert (visit.report.script_runs, visit.report.status) == (2, ForwardMsg.FINISHED_SUCCESSFULLY)
    assert visit.locked == (1 if answered else 0)
    assert visit.symptom_kept
    assert server.log_problems() == 0
