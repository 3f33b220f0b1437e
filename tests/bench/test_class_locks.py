"""The class-locks benchmark: learners take turns over the options, and one small real run in which every
lock holds, shows the learner's own option, and runs no more than the question and the summary."""

from __future__ import annotations

from pathlib import Path

from bench.class_locks import describe, option_for, run_locks
from core.questions import load_bank


def test_learners_take_turns_over_the_options() -> None:
    question = load_bank().question("r1")
    picked = [option_for(question, index) for index in range(2 * len(question.options))]
    assert picked == [o.id for o in question.options] * 2


def test_three_learners_locking_at_once_each_hold_their_own_answer(tmp_path: Path) -> None:
    outcome = run_locks(3, "four-runs", "r1", log_dir=tmp_path)
    assert outcome.lock.count == 3
    assert outcome.held == 3
    assert outcome.whole_runs_per_lock == 0.0  # the question and the summary ran, not the app
    assert outcome.messages_per_lock > 0 and outcome.server_cpu_ms_per_lock > 0
    assert "3 learners lock r1 on /four-runs at once" in describe(outcome)
    assert "held:     3 of 3" in describe(outcome)
    assert "Traceback" not in (tmp_path / "class_locks_server.log").read_text()
