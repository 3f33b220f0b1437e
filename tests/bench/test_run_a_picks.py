"""`bench.run_a_picks`: one figure for each pick it makes, all of them real run times."""

from __future__ import annotations

from bench.run_a_picks import EXPERIMENT_PICKS, picks
from core.run_a import pairs


def test_a_warm_process_reports_each_pair_and_each_experiment_once():
    figures = picks(warm=True)
    assert len(figures["pairs"]) == len(pairs()) - 1  # the first pair is drawn before any pick
    assert len(figures["experiments"]) == len(EXPERIMENT_PICKS)
    assert all(ms > 0 for series in figures.values() for ms in series)
