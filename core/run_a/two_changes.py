"""Two first experiments alone and together, what the three runs say between them, and the prediction
the learner locks before seeing them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core.memory.timeline import StepTimeline
from core.run_a.experiments import pair_experiments
from core.run_a.outcomes import (
    ExperimentOutcome,
    capital,
    outcome_of,
    pair_label,
    run_experiment,
    same_moment,
)
from core.run_a.scenario import load_content, run_a_timeline


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
        return f"runs, peaking at {timeline.peak_reached_gb:.2f} GB of {timeline.device_gb:.2f} GB"
    where = failure.where(timeline.layers)
    if same_moment(failure, baseline.failure):
        return f"still dies in {where}"
    return f"{'gets further and ' if _fails_later(timeline, baseline) else ''}dies in {where}"


def _pair_verdict(first: ExperimentOutcome, second: ExperimentOutcome, together: ExperimentOutcome) -> str:
    baseline = run_a_timeline()
    name = load_content().short_names
    alone = (
        f"Alone, {name[first.experiment]} {_fate(first, baseline)}; alone, {name[second.experiment]} "
        f"{_fate(second, baseline)}."
    )
    timeline, device = together.timeline, f"{together.timeline.device_gb:.2f} GB"
    if timeline.failure is not None:
        asked = f"asking for {timeline.peak_reached_gb:.2f} GB of {device}"
        return f"{alone} Together it {_fate(together, baseline)}, {asked}."
    peak = timeline.peak_reached_gb
    both = (
        f"{alone} Together, every iteration completes: the peak is {peak:.2f} GB of {device}, "
        f"{timeline.device_gb - peak:.2f} GB to spare."
    )
    runs_alone = " and ".join(name[o.experiment] for o in (first, second) if o.timeline.failure is None)
    if runs_alone:
        return f"{both} {capital(runs_alone)} already ran alone, so the pair adds headroom, not a diagnosis."
    mover = _wall_mover(first, second)
    if mover is None or baseline.failure is None or mover.timeline.failure is None:
        return f"{both} Neither change was enough alone."
    other = second if mover is first else first
    return (
        f"{both} So Run A had two walls. {capital(name[mover.experiment])} clears the first "
        f"({baseline.failure.where(baseline.layers)}) and meets the second "
        f"({mover.timeline.failure.where(mover.timeline.layers)}); {name[other.experiment]} clears that one."
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
