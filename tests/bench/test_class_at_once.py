"""A class acting at once (`run_load --mode locks|opens`): learners take turns over the options, whole-app
runs are read off the protocol, and small real runs in which every lock holds and every opening costs
one whole run."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.class_at_once import describe, option_for, run_class, whole_runs_of_report
from core.questions import load_bank
from tests.harness.load_client import RunResult

FRAGMENT = "d873f16ab2f8f1a48b848421b106d8e9"


def _report(status: int, script_runs: int, fragment_id: str) -> RunResult:
    return RunResult(10.0, status, script_runs, page_hash="p", exceptions=(), fragment_id=fragment_id)


def test_learners_take_turns_over_the_options() -> None:
    question = load_bank().question("r1")
    picked = [option_for(question, index) for index in range(2 * len(question.options))]
    assert picked == [o.id for o in question.options] * 2


def test_a_report_counts_the_whole_app_runs_it_started() -> None:
    # An identity check outside any fragment: its report is a whole run.
    assert whole_runs_of_report(_report(ForwardMsg.FINISHED_SUCCESSFULLY, 1, "")) == 1
    # In a fragment: alone, or followed by the whole app when the id opened stored work.
    assert whole_runs_of_report(_report(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY, 1, FRAGMENT)) == 0
    assert whole_runs_of_report(_report(ForwardMsg.FINISHED_SUCCESSFULLY, 2, FRAGMENT)) == 1


def test_an_unknown_scenario_is_refused_before_any_server_starts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="locks or opens"):
        run_class("hands", 3, "four-runs", log_dir=tmp_path)
    assert not list(tmp_path.iterdir())


def test_three_learners_locking_at_once_each_hold_their_own_answer(tmp_path: Path) -> None:
    outcome = run_class("locks", 3, "four-runs", question_id="r1", log_dir=tmp_path)
    assert list(outcome.timed) == ["lock"]
    assert outcome.timed["lock"].count == 3
    assert outcome.held == 3
    assert outcome.whole_runs_per_learner == 0.0  # the question and the summary ran, not the app
    assert outcome.messages_per_learner > 0 and outcome.server_cpu_ms_per_learner > 0
    assert "3 learners at once: lock r1 on /four-runs" in describe(outcome)
    assert "3 of 3" in describe(outcome)
    assert "Traceback" not in (tmp_path / "class_locks_server.log").read_text()


@pytest.mark.parametrize("returning", [False, True], ids=["new", "returning"])
def test_three_browsers_opening_a_lesson_cost_one_whole_run_each(tmp_path: Path, returning: bool) -> None:
    outcome = run_class("opens", 3, "four-runs", returning=returning, log_dir=tmp_path)
    assert list(outcome.timed) == ["page drawn", "saved"]
    assert outcome.timed["page drawn"].count == outcome.timed["saved"].count == 3
    assert outcome.whole_runs_per_learner == 1.0
    assert outcome.messages_per_learner > 0 and outcome.server_cpu_ms_per_learner > 0
    kind = "returning" if returning else "new"
    assert f"3 learners at once: open /four-runs in {kind} browsers" in describe(outcome)
    assert "Traceback" not in (tmp_path / "class_opens_server.log").read_text()
