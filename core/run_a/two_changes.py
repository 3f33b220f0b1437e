"""Two first experiments alone and together, what the three runs say between them, and the prediction
the learner locks before seeing them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core import lessons
from core.memory.timeline import StepTimeline
from core.run_a.experiments import SHORT_NAMES, pair_experiments
from core.run_a.outcomes import (
    ExperimentOutcome,
    capital,
    outcome_of,
    pair_label,
    run_experiment,
    same_moment,
)
from core.run_a.scenario import run_a_timeline


@dataclass(frozen=True)
class PairOutcome:
    """Two first experiments, each alone and both together, and what the three runs say between them."""

    first: ExperimentOutcome
    second: ExperimentOutcome
    together: ExperimentOutcome
    verdict: str

    @property
    def wall_mover(self) -> ExperimentOutcome | None:
        """The experiment that, alone, gets Run A past its failure only to fail later (a second wall)."""
        return _wall_mover(self.first, self.second)


def _fails_later(timeline: StepTimeline, baseline: StepTimeline) -> bool:
    failure, before = timeline.failure, baseline.failure
    return (
        failure is not None
        and before is not None
        and timeline.points.index(failure) > baseline.points.index(before)
    )


def _wall_mover(*outcomes: ExperimentOutcome) -> ExperimentOutcome | None:
    return next((o for o in outcomes if _fails_later(o.timeline, run_a_timeline())), None)


def _fate(outcome: ExperimentOutcome, baseline: StepTimeline) -> str:
    """What one run does, as the end of a sentence that starts with its name."""
    timeline = outcome.timeline
    failure = timeline.failure
    if failure is None:
        return lessons.sentence(
            "run_a", "fate_runs", peak_gb=timeline.peak_reached_gb, device_gb=timeline.device_gb
        )
    where = failure.where(timeline.layers)
    if same_moment(failure, baseline.failure):
        return lessons.sentence("run_a", "fate_unchanged", where=where)
    if _fails_later(timeline, baseline):
        return lessons.sentence("run_a", "fate_further", where=where)
    return lessons.sentence("run_a", "fate_dies", where=where)


def _pair_verdict(first: ExperimentOutcome, second: ExperimentOutcome, together: ExperimentOutcome) -> str:
    baseline = run_a_timeline()
    alone = lessons.sentence(
        "run_a",
        "pair_alone",
        first=SHORT_NAMES[first.experiment],
        first_fate=_fate(first, baseline),
        second=SHORT_NAMES[second.experiment],
        second_fate=_fate(second, baseline),
    )
    timeline, device_gb = together.timeline, together.timeline.device_gb
    peak_gb = timeline.peak_reached_gb
    if timeline.failure is not None:
        return lessons.sentence(
            "run_a",
            "pair_fails",
            alone=alone,
            fate=_fate(together, baseline),
            asked_gb=peak_gb,
            device_gb=device_gb,
        )
    runs = lessons.sentence(
        "run_a", "pair_runs", alone=alone, peak_gb=peak_gb, device_gb=device_gb, spare_gb=device_gb - peak_gb
    )
    ran_alone = " and ".join(SHORT_NAMES[o.experiment] for o in (first, second) if o.timeline.failure is None)
    if ran_alone:
        return lessons.sentence("run_a", "pair_ran_alone", together=runs, ran_alone=capital(ran_alone))
    mover = _wall_mover(first, second)
    if mover is None or baseline.failure is None or mover.timeline.failure is None:
        return lessons.sentence("run_a", "pair_neither", together=runs)
    other = second if mover is first else first
    return lessons.sentence(
        "run_a",
        "pair_two_walls",
        together=runs,
        mover=capital(SHORT_NAMES[mover.experiment]),
        first_wall=baseline.failure.where(baseline.layers),
        second_wall=mover.timeline.failure.where(mover.timeline.layers),
        other=SHORT_NAMES[other.experiment],
    )


# The lesson prediction (data/lab.json) asked before the two changes are shown, and the pair its prompt names.
PAIR_PREDICTION = "run_a.pair"
PREDICTED_PAIR = "batch+optim"
# How far a run gets, in the order a step runs: the ids of that prediction's options.
REACHES = ("forward", "backward", "step", "later", "runs")


def reach(timeline: StepTimeline) -> str:
    """How far a run gets, one of `REACHES`: the phase of iteration 1 it dies in, a later iteration, or it
    runs."""
    failure = timeline.failure
    if failure is None:
        return "runs"
    if failure.iteration > 1:
        return "later"
    return "forward" if failure.phase in ("start", "forward") else failure.phase


@cache
def run_pair(pair: str) -> PairOutcome:
    """Two first experiments alone and together, recomputed from the phase model (once per process)."""
    first_id, second_id = pair_experiments(pair)
    first, second = run_experiment(first_id), run_experiment(second_id)
    together = outcome_of((first_id, second_id), pair_label(pair))
    return PairOutcome(first, second, together, _pair_verdict(first, second, together))
