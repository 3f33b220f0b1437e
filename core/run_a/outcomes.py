"""The first experiments run on the phase model: what each changes, where the run gets to, and the
tables of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache

from core import lessons
from core.datafiles import require
from core.memory import BYTES_PER_GB
from core.memory.reference import matching_run_a
from core.memory.settings import Optimizer
from core.memory.setup import StepSetup
from core.memory.timeline import ITERATIONS, PHASES, StepTimeline, TimelinePoint, step_timeline
from core.memory.verdict import capped
from core.run_a.experiments import (
    EXPERIMENTS,
    FIRST_EXPERIMENTS,
    PAIR_SEPARATOR,
    SHORT_NAMES,
    check_experiment,
    pair_experiments,
)
from core.run_a.scenario import Scenario, load_content, run_a_timeline

REPLACEMENT_OPTIMIZER = "sgd"
_PHASE_WORDS = {"forward": "the forward pass", "backward": "`loss.backward()`", "step": "`optimizer.step()`"}


@dataclass(frozen=True)
class ExperimentOutcome:
    """One first experiment, run on the model: what changed, where the run gets to now, and what the H200
    did."""

    experiment: str
    label: str
    change: str  # lower case, for use inside a sentence
    timeline: StepTimeline
    summary: str
    measured: str | None  # the H200's outcome for the same run ("ok", "step 1 backward", ...), if it was run

    @property
    def change_title(self) -> str:
        """The change with a capital first letter, to open a sentence or fill a table cell."""
        return capital(self.change)


def capital(text: str) -> str:
    """The text with a capital first letter."""
    return text[:1].upper() + text[1:]


def same_moment(a: TimelinePoint | None, b: TimelinePoint | None) -> bool:
    """Whether two moments of runs (either may be None) are the same point of the same step."""
    return (
        a is not None and b is not None and (a.iteration, a.phase, a.block) == (b.iteration, b.phase, b.block)
    )


def _with_layers(setup: StepSetup, layers: int) -> StepSetup:
    return replace(setup, model=replace(setup.model, layers=layers))


def _shrunk(scenario: Scenario, setup: StepSetup, gib: float) -> tuple[StepSetup, float]:
    """The deepest model with fewer blocks that runs steadily (one block if none does)."""
    for layers in range(setup.model.layers - 1, 0, -1):
        candidate = _with_layers(setup, layers)
        if step_timeline(candidate, capacity=capped(gib)).failure is None:
            return candidate, gib
    return _with_layers(setup, 1), gib


def _halved(setup: StepSetup) -> StepSetup:
    """Half the tokens of a step: half the batch when it is even, else half the sequence."""
    if setup.batch % 2 == 0:
        return replace(setup, batch=setup.batch // 2)
    return replace(setup, seq_len=setup.seq_len // 2)


# Each experiment changes one thing about a run: (setup, cap in GiB) -> (setup, cap in GiB).
_CHANGES: dict[str, Callable[[Scenario, StepSetup, float], tuple[StepSetup, float]]] = {
    "batch": lambda scenario, setup, gib: (_halved(setup), gib),
    "optim": lambda scenario, setup, gib: (replace(setup, optimizer=REPLACEMENT_OPTIMIZER), gib),
    "gpu": lambda scenario, setup, gib: (setup, scenario.larger_device_gib),
    "model": _shrunk,
}


def applied(experiments: Sequence[str], scenario: Scenario) -> tuple[StepSetup, float]:
    """Run A's setup and memory cap (GiB) after `experiments`, applied in order."""
    setup, gib = scenario.setup, scenario.device_gib
    for experiment in experiments:
        require(
            experiment in _CHANGES,
            f"Unknown experiment {experiment!r}: pick one of {', '.join(EXPERIMENTS)}.",
        )
        setup, gib = _CHANGES[experiment](scenario, setup, gib)
    return setup, gib


def _optimizer_name(optimizer: str) -> str:
    return Optimizer.label_of(optimizer).split(" (")[0]


def describe_change(before: StepSetup, after: StepSetup, before_gib: float, after_gib: float) -> str:
    """What differs between two runs, as a lower-case phrase ("tokens 1 × 1,536 → 1 × 768, ...")."""
    words = []
    if (after.batch, after.seq_len) != (before.batch, before.seq_len):
        words.append(
            lessons.sentence(
                "run_a",
                "change_tokens",
                batch_before=before.batch,
                seq_len_before=before.seq_len,
                batch_after=after.batch,
                seq_len_after=after.seq_len,
            )
        )
    if after.optimizer != before.optimizer:
        words.append(
            lessons.sentence(
                "run_a",
                "change_optimizer",
                before=_optimizer_name(before.optimizer),
                after=_optimizer_name(after.optimizer),
            )
        )
    if after_gib != before_gib:
        words.append(lessons.sentence("run_a", "change_memory", gib_before=before_gib, gib_after=after_gib))
    if after.model.layers != before.model.layers:
        weights = [s.parameters * s.convention.weight_bytes / BYTES_PER_GB for s in (before, after)]
        words.append(
            lessons.sentence(
                "run_a",
                "change_blocks",
                layers_before=before.model.layers,
                layers_after=after.model.layers,
                weights_before_gb=weights[0],
                weights_after_gb=weights[1],
            )
        )
    return ", ".join(words) or lessons.sentence("run_a", "change_nothing")


def _summary(timeline: StepTimeline, baseline: StepTimeline) -> str:
    """Where a changed run gets to, against Run A as briefed, in a sentence of data/lessons/run_a."""
    failure, device_gb = timeline.failure, timeline.device_gb
    if failure is None:
        peak_gb, first_gb = timeline.iteration_peak_gb(ITERATIONS), timeline.iteration_peak_gb(1)
        if peak_gb > first_gb:
            return lessons.sentence(
                "run_a",
                "summary_runs_needing_more",
                peak_gb=peak_gb,
                device_gb=device_gb,
                spare_gb=device_gb - peak_gb,
                first_gb=first_gb,
            )
        return lessons.sentence(
            "run_a", "summary_runs", peak_gb=peak_gb, device_gb=device_gb, spare_gb=device_gb - peak_gb
        )
    where, asked_gb = failure.where(timeline.layers), failure.total_gb
    if same_moment(failure, baseline.failure):
        return lessons.sentence(
            "run_a", "summary_unchanged", where=where, asked_gb=asked_gb, device_gb=device_gb
        )
    if failure.iteration > 1:
        return lessons.sentence(
            "run_a",
            "summary_fails_later",
            first_gb=timeline.iteration_peak_gb(1),
            where=where,
            asked_gb=asked_gb,
            device_gb=device_gb,
        )
    passed = [_PHASE_WORDS[p] for p in PHASES[1 : PHASES.index(failure.phase)]]
    if not passed:
        return lessons.sentence("run_a", "summary_fails", where=where, asked_gb=asked_gb, device_gb=device_gb)
    return lessons.sentence(
        "run_a",
        "summary_further",
        passed=" and ".join(passed),
        where=where,
        asked_gb=asked_gb,
        device_gb=device_gb,
    )


@cache
def outcome_of(experiments: tuple[str, ...], label: str) -> ExperimentOutcome:
    """Run A with `experiments` applied in order, recomputed from the phase model (once per process)."""
    scenario = load_content().scenario
    setup, gib = applied(experiments, scenario)
    timeline = step_timeline(setup, capacity=capped(gib))
    measured = matching_run_a(setup, gib)
    return ExperimentOutcome(
        experiment=PAIR_SEPARATOR.join(experiments),
        label=label,
        change=describe_change(scenario.setup, setup, scenario.device_gib, gib),
        timeline=timeline,
        summary=_summary(timeline, run_a_timeline()),
        measured=measured.outcome if measured else None,
    )


def run_experiment(experiment: str) -> ExperimentOutcome:
    """Run A with one first experiment applied, recomputed from the phase model (once per process)."""
    check_experiment(experiment)
    return outcome_of((experiment,), FIRST_EXPERIMENTS[experiment])


def _short(outcome: ExperimentOutcome) -> str:
    """An experiment, or a pair, in a few words."""
    experiment = outcome.experiment
    return pair_label(experiment) if PAIR_SEPARATOR in experiment else short_label(experiment)


# Two narrow tables rather than one wide one, so each fits a phone's width without scrolling sideways.
def change_rows(outcomes: Sequence[ExperimentOutcome]) -> list[dict[str, str]]:
    """A table of experiments: what each one changes, whether iteration 1 then completes, and the peak asked
    for."""
    return [
        {
            "Experiment": o.label,
            "Change": o.change_title,
            "Iteration 1 completes": "yes" if o.timeline.first_iteration_completes else "no",
            "Peak needed, reserve in (GB)": f"{o.timeline.peak_reached_gb:.2f}",
        }
        for o in outcomes
    ]


def reach_rows(outcomes: Sequence[ExperimentOutcome]) -> list[dict[str, str]]:
    """A table of experiments: where the phase model says each run first fails, beside what the H200 did."""
    return [
        {
            "Experiment": _short(o),
            "First failure": o.timeline.failure.where(o.timeline.layers)
            if o.timeline.failure
            else "none: it keeps running",
            "On the H200 (run_a.csv)": o.measured or "not run",
        }
        for o in outcomes
    ]


def short_label(experiment: str) -> str:
    """One experiment in a few words, for a chart title: "Half the tokens"."""
    check_experiment(experiment)
    return capital(SHORT_NAMES[experiment])


def pair_label(pair: str) -> str:
    """A pair of experiments in words: "Half the tokens + SGD instead of Adam"."""
    first, second = pair_experiments(pair)
    return f"{short_label(first)} + {SHORT_NAMES[second]}"
