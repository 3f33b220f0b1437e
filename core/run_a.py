"""Run A, the out-of-memory run: its configuration, the four first experiments run on the model,
budget against leak, and the learner's decision and reflection.

Every figure comes from the lesson's five-term budget (`core.memory_lesson`) played out moment
by moment (`core.step_timeline`); the page's texts come from `data/run_a.json`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from core import validate
from core.datafiles import positive_number, read_json, require
from core.learner_text import MAX_CHARS
from core.memory import BYTES_PER_GB, OPTIMIZER_LABELS, to_gb
from core.memory_lesson import LessonSetup, lesson_parameter_count, lesson_terms
from core.report import FIRST_EXPERIMENTS
from core.step_timeline import ITERATIONS, PHASE_LABELS, PHASES, StepTimeline, TimelinePoint, step_timeline
from core.workloads import BYTES_PER_MB

EXPERIMENTS = tuple(FIRST_EXPERIMENTS)  # batch, optim, gpu, model: the ids the report reads
MAX_TEXT_CHARS = MAX_CHARS
REPLACEMENT_OPTIMIZER = "sgd"
_PHASE_WORDS = {"forward": "the forward pass", "backward": "`loss.backward()`", "step": "`optimizer.step()`"}


@dataclass(frozen=True)
class Scenario:
    """Run A's configuration: the model and how it is run, and the two device sizes in play."""

    setup: LessonSetup
    device_gb: float
    larger_device_gb: float


def _scenario(raw: Mapping[str, Any]) -> Scenario:
    require(isinstance(raw, Mapping), "run_a.json needs a 'scenario' object.")
    # LessonSetup checks every value's type and range itself.
    values: dict[str, Any] = {
        name: raw.get(name) for name in ("hidden", "layers", "dtype", "optimizer", "batch", "seq_len")
    }
    setup = LessonSetup(**values)
    require(setup.batch % 2 == 0, "Run A's batch must be even, so that it can be halved.")
    device_gb = positive_number(raw.get("device_gb"), "Run A's device memory")
    larger_gb = positive_number(raw.get("larger_device_gb"), "The larger device's memory")
    require(larger_gb > device_gb, "The larger device must hold more memory than Run A's.")
    return Scenario(setup=setup, device_gb=device_gb, larger_device_gb=larger_gb)


def _prose(value: Any, what: str) -> str:
    require(isinstance(value, str) and value.strip() != "", f"run_a.json: '{what}' must be text.")
    return value


def _texts(raw: Any, names: Sequence[str], what: str) -> dict[str, str]:
    require(
        isinstance(raw, Mapping) and set(raw) == set(names),
        f"run_a.json: '{what}' needs exactly these entries: {', '.join(names)}.",
    )
    return {n: _prose(raw[n], f"{what}.{n}") for n in names}


@dataclass(frozen=True)
class RunAContent:
    """Everything the Run A page reads from `data/run_a.json`, validated."""

    scenario: Scenario
    phases: Mapping[str, str]
    feedback: Mapping[str, str]
    principle: str
    budget_launches: int
    leak_experiments: tuple[str, ...]
    leak_max_iterations: int
    leak_retained: str
    leak_causes: tuple[str, ...]
    measure: tuple[Mapping[str, str], ...]
    reflection_prompt: str


def parse_content(raw: Any) -> RunAContent:
    """Validated page content from the JSON form of `data/run_a.json`."""
    require(isinstance(raw, Mapping), "run_a.json must hold an object.")
    leak = raw.get("leak")
    require(isinstance(leak, Mapping), "run_a.json needs a 'leak' object.")
    base = leak.get("base_experiments")
    require(
        isinstance(base, list) and all(e in EXPERIMENTS for e in base),
        f"The leak's base experiments must come from {', '.join(EXPERIMENTS)}.",
    )
    measure = validate.items(raw.get("measure"), "run_a.json needs a 'measure' table.", at_least=1)
    rows = tuple(_texts(row, ("question", "call", "reading", "source"), "measure") for row in measure)
    causes = raw.get("leak_causes")
    require(isinstance(causes, list) and causes != [], "run_a.json needs a list of 'leak_causes'.")
    launches = raw.get("budget_launches")
    require(
        isinstance(launches, int) and launches >= 2,
        "run_a.json: 'budget_launches' must be a whole number of at least 2.",
    )
    require(
        isinstance(leak.get("max_iterations"), int) and leak["max_iterations"] > 2,
        "The leak needs a whole 'max_iterations' above 2.",
    )
    content = RunAContent(
        scenario=_scenario(raw.get("scenario")),
        phases=_texts(raw.get("phases"), PHASES, "phases"),
        feedback=_texts(raw.get("feedback"), EXPERIMENTS, "feedback"),
        principle=_prose(raw.get("principle"), "principle"),
        budget_launches=launches,
        leak_experiments=tuple(base),
        leak_max_iterations=leak["max_iterations"],
        leak_retained=_prose(leak.get("retained"), "leak.retained"),
        leak_causes=tuple(_prose(c, "leak_causes") for c in causes),
        measure=rows,
        reflection_prompt=_prose(raw.get("reflection_prompt"), "reflection_prompt"),
    )
    for choice in EXPERIMENTS:  # every placeholder must be one we fill
        try:
            content.feedback[choice].format(weights_gb=1.0, device_gb=1.0, other_gb=1.0)
        except (KeyError, IndexError, ValueError) as err:
            raise ValueError(
                f"run_a.json: the feedback for '{choice}' names a figure we do not compute: {err}."
            ) from None
    return content


@lru_cache(maxsize=1)
def load_content() -> RunAContent:
    """The Run A page's content, read and validated once per process."""
    return parse_content(read_json("run_a.json"))


@cache
def run_a_timeline() -> StepTimeline:
    """Run A as briefed: its configuration on its own device."""
    scenario = load_content().scenario
    return step_timeline(scenario.setup, device_gb=scenario.device_gb)


@dataclass(frozen=True)
class BriefFigures:
    """The numbers that turn Run A's brief into a hypothesis."""

    parameter_count: int
    weights_gb: float
    device_gb: float
    other_gb: float  # what the weights leave unexplained: device minus weights
    forward_peak_gb: float
    backward_peak_gb: float
    activations_gb: float
    workspace_gb: float
    first_gradients_gb: float  # the gradients of the first block backward visits
    failure_where: str


def brief_figures() -> BriefFigures:
    """Run A's brief, computed: weights, what they leave unexplained, and each pass's peak."""
    timeline = run_a_timeline()
    setup, failure = timeline.setup, timeline.failure
    if failure is None:
        raise ValueError("Run A's configuration no longer fails; check data/run_a.json.")
    terms = lesson_terms(setup)
    return BriefFigures(
        parameter_count=lesson_parameter_count(hidden=setup.hidden, layers=setup.layers),
        weights_gb=to_gb(terms.parameters_bytes),
        device_gb=timeline.device_gb,
        other_gb=timeline.device_gb - to_gb(terms.parameters_bytes),
        forward_peak_gb=timeline.phase_peak_gb(iteration=1, phase="forward"),
        backward_peak_gb=timeline.phase_peak_gb(iteration=1, phase="backward"),
        activations_gb=to_gb(terms.activations_bytes),
        workspace_gb=to_gb(terms.workspace_bytes),
        first_gradients_gb=to_gb(failure.live.gradients_bytes),
        failure_where=failure.where(setup.layers),
    )


def _phase_outcome(timeline: StepTimeline, iteration: int, phase: str) -> str:
    failure = timeline.failure
    if failure is not None and (failure.iteration, failure.phase) == (iteration, phase):
        return "over the device: the run dies here"
    if not any(p.iteration == iteration and p.phase == phase for p in timeline.ran):
        return "never reached"
    return "fits"


def phase_rows(timeline: StepTimeline, *, iteration: int = 1) -> list[dict[str, str]]:
    """One row per phase of an iteration: what happens, what is live at its peak, and how it ends."""
    descriptions = load_content().phases
    rows = []
    for phase in PHASES:
        peak = timeline.peak_point(iteration=iteration, phase=phase)
        rows.append(
            {
                "Phase": PHASE_LABELS[phase],
                "What happens": descriptions[phase],
                "Live at its peak": ", ".join(share.label for share in peak.live.shares()),
                "Peak needed (GB)": f"{peak.total_gb:.2f}",
                "Outcome": _phase_outcome(timeline, iteration, phase),
            }
        )
    return rows


def measure_rows() -> list[dict[str, str]]:
    """The measure-rather-than-guess table: a question, the PyTorch call that answers it, what the reading
    means."""
    return [
        {
            "What to ask": row["question"],
            "What answers it": row["call"],
            "What the reading means": row["reading"],
        }
        for row in load_content().measure
    ]


@dataclass(frozen=True)
class ExperimentOutcome:
    """One first experiment, run on the model: what changed and where the run gets to now."""

    experiment: str
    label: str
    change: str  # lower case, for use inside a sentence
    timeline: StepTimeline
    summary: str

    @property
    def change_title(self) -> str:
        """The change with a capital first letter, to open a sentence or fill a table cell."""
        return self.change[:1].upper() + self.change[1:]


def _same_moment(a: TimelinePoint | None, b: TimelinePoint | None) -> bool:
    return (
        a is not None and b is not None and (a.iteration, a.phase, a.block) == (b.iteration, b.phase, b.block)
    )


def _shrunk(scenario: Scenario, setup: LessonSetup, device_gb: float) -> tuple[LessonSetup, float]:
    """The deepest model with fewer blocks that runs steadily (one block if none does)."""
    for layers in range(setup.layers - 1, 0, -1):
        candidate = replace(setup, layers=layers)
        if step_timeline(candidate, device_gb=device_gb).failure is None:
            return candidate, device_gb
    return replace(setup, layers=1), device_gb


# Each experiment changes one thing about a run: (setup, device_gb) -> (setup, device_gb).
_CHANGES: dict[str, Callable[[Scenario, LessonSetup, float], tuple[LessonSetup, float]]] = {
    "batch": lambda scenario, setup, device: (replace(setup, batch=setup.batch // 2), device),
    "optim": lambda scenario, setup, device: (replace(setup, optimizer=REPLACEMENT_OPTIMIZER), device),
    "gpu": lambda scenario, setup, device: (setup, scenario.larger_device_gb),
    "model": _shrunk,
}


def applied(experiments: Sequence[str], scenario: Scenario) -> tuple[LessonSetup, float]:
    """Run A's setup and device after `experiments`, applied in order."""
    setup, device_gb = scenario.setup, scenario.device_gb
    for experiment in experiments:
        require(
            experiment in _CHANGES,
            f"Unknown experiment {experiment!r}: pick one of {', '.join(EXPERIMENTS)}.",
        )
        setup, device_gb = _CHANGES[experiment](scenario, setup, device_gb)
    return setup, device_gb


def _change(before: LessonSetup, after: LessonSetup, before_gb: float, after_gb: float) -> str:
    """What differs between two runs, as a lower-case phrase ("batch 10 → 5, device 24 GB → 40 GB")."""
    words = []
    if after.batch != before.batch:
        words.append(f"batch {before.batch} → {after.batch}")
    if after.optimizer != before.optimizer:
        words.append(
            f"optimizer {OPTIMIZER_LABELS[before.optimizer].split(',')[0]} → "
            f"{OPTIMIZER_LABELS[after.optimizer].split(',')[0]}"
        )
    if after_gb != before_gb:
        words.append(f"device {before_gb:g} GB → {after_gb:g} GB")
    if after.layers != before.layers:
        weights = [to_gb(lesson_terms(s).parameters_bytes) for s in (before, after)]
        words.append(
            f"blocks {before.layers} → {after.layers} (weights {weights[0]:.2f} GB → {weights[1]:.2f} GB)"
        )
    return ", ".join(words) or "nothing changes"


def _summary(timeline: StepTimeline, baseline: StepTimeline) -> str:
    failure, layers, device = timeline.failure, timeline.setup.layers, timeline.device_gb
    if failure is None:
        steady, first = timeline.iteration_peak_gb(ITERATIONS), timeline.iteration_peak_gb(1)
        later = (
            f" Later iterations need more than the first ({steady:.2f} GB against {first:.2f} GB): "
            "the optimizer state stays once created."
            if steady > first
            else ""
        )
        return (
            f"Iteration 1 completes, and so does every later one: the peak is {steady:.2f} GB of "
            f"{device:g} GB, {device - steady:.2f} GB to spare.{later}"
        )
    asked = f"asking for {failure.total_gb:.2f} GB of {device:g} GB"
    if _same_moment(failure, baseline.failure):
        return (
            f"No change where it matters: it still fails in {failure.where(layers)}, {asked}, exactly as "
            "before."
        )
    if failure.iteration > 1:
        return (
            f"Iteration 1 completes (peak {timeline.iteration_peak_gb(1):.2f} GB), but it fails in "
            f"{failure.where(layers)}, {asked}: the optimizer state is now resident through forward and "
            "backward."
        )
    passed = [_PHASE_WORDS[p] for p in PHASES[1 : PHASES.index(failure.phase)]]
    if not passed:
        return f"It fails in {failure.where(layers)}, {asked}."
    return (
        f"It gets further: it survives {' and '.join(passed)}, then fails in {failure.where(layers)}, "
        f"{asked}."
    )


@cache
def run_experiment(experiment: str) -> ExperimentOutcome:
    """Run A with one first experiment applied, recomputed from the budget (once per process: it depends on
    data only)."""
    scenario = load_content().scenario
    setup, device_gb = applied((experiment,), scenario)
    timeline = step_timeline(setup, device_gb=device_gb)
    return ExperimentOutcome(
        experiment=experiment,
        label=FIRST_EXPERIMENTS[experiment],
        change=_change(scenario.setup, setup, scenario.device_gb, device_gb),
        timeline=timeline,
        summary=_summary(timeline, run_a_timeline()),
    )


def outcome_rows(outcomes: Sequence[ExperimentOutcome]) -> list[dict[str, str]]:
    """A table of experiments: what each changed and where the run gets to."""
    return [
        {
            "Experiment": o.label,
            "Change": o.change_title,
            "Iteration 1 completes": "yes" if o.timeline.first_iteration_completes else "no",
            "First failure": o.timeline.failure.where(o.timeline.setup.layers)
            if o.timeline.failure
            else "none: it keeps running",
            "Peak needed (GB)": f"{o.timeline.peak_reached_gb:.2f}",
        }
        for o in outcomes
    ]


@dataclass(frozen=True)
class IterationSeries:
    """Peak memory asked for in each iteration (or each launch) of a run, and where it fails."""

    x_label: str
    x: tuple[int, ...]
    peak_gb: tuple[float, ...]
    device_gb: float

    @property
    def fails(self) -> tuple[bool, ...]:
        """Whether each iteration asks for more than the device holds."""
        return tuple(gb > self.device_gb for gb in self.peak_gb)

    @property
    def failed_at(self) -> int | None:
        """The first iteration (or launch) that fails, if any does."""
        return next((x for x, failed in zip(self.x, self.fails, strict=True) if failed), None)


def budget_series() -> IterationSeries:
    """Run A launched again and again: each launch asks for the same memory and dies in iteration 1."""
    content = load_content()
    failure = run_a_timeline().failure
    if failure is None:
        raise ValueError("Run A's configuration no longer fails; check data/run_a.json.")
    launches = range(1, content.budget_launches + 1)
    return IterationSeries(
        x_label="Launch",
        x=tuple(launches),
        peak_gb=tuple(failure.total_gb for _ in launches),
        device_gb=content.scenario.device_gb,
    )


@dataclass(frozen=True)
class Leak:
    """A run that fits, plus one tensor kept from every step: what it is, and its peaks until it fails."""

    change: str  # how the base run differs from Run A
    steady_peak_gb: float  # the base run's peak without the leak
    retained_mb_per_iteration: float
    series: IterationSeries


@cache
def leak() -> Leak:
    """The leak example: a fitting run (Run A after the data file's experiments) that keeps one B·S·H tensor
    per step."""
    content = load_content()
    setup, device_gb = applied(content.leak_experiments, content.scenario)
    timeline = step_timeline(setup, device_gb=device_gb)
    require(
        timeline.failure is None, "The leak example must start from a run that fits; check data/run_a.json."
    )
    retained_bytes = setup.batch * setup.seq_len * setup.hidden * setup.precision.activation_bytes
    peaks: list[float] = []
    for iteration in range(1, content.leak_max_iterations + 1):
        planned = timeline.iteration_peak_gb(min(iteration, ITERATIONS))
        peaks.append(planned + (iteration - 1) * retained_bytes / BYTES_PER_GB)
        if peaks[-1] > device_gb:
            break
    series = IterationSeries(
        x_label="Iteration", x=tuple(range(1, len(peaks) + 1)), peak_gb=tuple(peaks), device_gb=device_gb
    )
    require(
        series.failed_at is not None,
        "The leak example never fails within its iterations; check data/run_a.json.",
    )
    return Leak(
        change=_change(content.scenario.setup, setup, content.scenario.device_gb, device_gb),
        steady_peak_gb=timeline.iteration_peak_gb(ITERATIONS),
        retained_mb_per_iteration=retained_bytes / BYTES_PER_MB,
        series=series,
    )


def _text(value: Any, *, empty: str, what: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    require(text != "", empty)
    require(
        len(text) <= MAX_TEXT_CHARS,
        f"{what} is {len(text):,} characters long; please keep it to {MAX_TEXT_CHARS:,}.",
    )
    return text


def decision_record(*, choice: str | None, why: str | None) -> dict[str, str]:
    """The `run_a.decision` record for a submitted form, or a ValueError telling the learner what is
    missing."""
    if choice is None or choice not in EXPERIMENTS:
        raise ValueError("Pick one of the four experiments first.")
    return {
        "choice": choice,
        "why": _text(
            why,
            empty="Add your reasoning: why this experiment, and what would each result rule out?",
            what="Your reasoning",
        ),
    }


def reflection_record(*, text: str | None) -> dict[str, str]:
    """The `run_a.reflection` record for a submitted form, or a ValueError asking for text."""
    return {
        "text": _text(text, empty="Write a sentence or two about Run B, then submit.", what="Your answer")
    }


def stored_text(record: Any, field: str) -> str:
    """The text a stored record holds in `field` ("" when there is none), to refill its form."""
    value = record.get(field) if isinstance(record, Mapping) else None
    return value if isinstance(value, str) else ""


def saved_choice_index(record: Any) -> int | None:
    """Where a stored decision's choice sits among the experiments (None when nothing valid is stored)."""
    choice = record.get("choice") if isinstance(record, Mapping) else None
    return EXPERIMENTS.index(choice) if choice in EXPERIMENTS else None


def feedback(choice: str) -> str:
    """The feedback for one first experiment, its figures filled from Run A's computed brief."""
    require(choice in EXPERIMENTS, f"Unknown experiment {choice!r}: pick one of {', '.join(EXPERIMENTS)}.")
    figures = brief_figures()
    return (
        load_content()
        .feedback[choice]
        .format(weights_gb=figures.weights_gb, device_gb=figures.device_gb, other_gb=figures.other_gb)
    )
