"""The class-opens benchmark: counts of whole-app runs read off the protocol, and one small real run."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.class_opens import describe, run_class, whole_runs_of_report
from tests.harness.load_client import RunResult

FRAGMENT = "d873f16ab2f8f1a48b848421b106d8e9"


def _report(status: int, script_runs: int, fragment_id: str) -> RunResult:
    return RunResult(10.0, status, script_runs, page_hash="p", exceptions=(), fragment_id=fragment_id)


def test_a_report_counts_the_whole_app_runs_it_started() -> None:
    # An identity check outside any fragment: its report is a whole run.
    assert whole_runs_of_report(_report(ForwardMsg.FINISHED_SUCCESSFULLY, 1, "")) == 1
    # In a fragment: alone, or followed by the whole app when the id opened stored work.
    assert whole_runs_of_report(_report(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY, 1, FRAGMENT)) == 0
    assert whole_runs_of_report(_report(ForwardMsg.FINISHED_SUCCESSFULLY, 2, FRAGMENT)) == 1


@pytest.mark.parametrize("returning", [False, True], ids=["new", "returning"])
def test_three_browsers_opening_a_lesson_cost_one_whole_run_each(tmp_path: Path, returning: bool) -> None:
    outcome = run_class(3, "four-runs", returning=returning, log_dir=tmp_path)
    assert outcome.drawn.count == outcome.saved.count == 3
    assert outcome.whole_runs_per_learner == 1.0
    assert outcome.messages_per_learner > 0 and outcome.server_cpu_ms_per_learner > 0
    kind = "returning" if returning else "new"
    assert f"3 {kind} browsers open /four-runs at once" in describe(outcome)
    assert "Traceback" not in (tmp_path / "class_opens_server.log").read_text()
