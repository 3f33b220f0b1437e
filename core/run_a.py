"""Run A, the out-of-memory run: its configuration, the four first experiments run on the model,
budget against leak, and the learner's decision and reflection.

Every figure comes from the phase model (`core.memory.phases`) played out moment by moment
(`core.memory.timeline`) on the Hugging Face stack Run A was run with; what the H200 really did comes
from the reference's run_a.csv (`core.memory.reference`); the page's texts come from `data/run_a.json`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from core import validate
from core.datafiles import positive_number, read_json, require
from core.learner_text import MAX_CHARS
from core.memory import BYTES_PER_GB, to_gb
from core.memory.reference import matching_run_a, run_a_measurements
from core.memory.settings import COMPUTE_BYTES, Optimizer
from core.memory.setup import StepSetup
from core.memory.timeline import ITERATIONS, PHASE_LABELS, PHASES, StepTimeline, TimelinePoint, step_timeline
from core.memory.verdict import Capacity, capped
from core.model_config import parse_config
from core.workloads import BYTES_PER_MB

DECISION_RECORD = "run_a.decision"
REFLECTION_RECORD = "run_a.reflection"

# The four first experiments offered for Run A, by the id the Run A page stores (the report and the
# room read them too).
FIRST_EXPERIMENTS = {
    "batch": "Halve the tokens per step (batch × sequence) and run it again",
    "optim": "Swap Adam for SGD to drop the optimizer state",
    "gpu": "Move the run to a bigger GPU",
    "model": "Shrink the model until it fits",
}

EXPERIMENTS = tuple(FIRST_EXPERIMENTS)  # batch, optim, gpu, model
MAX_TEXT_CHARS = MAX_CHARS
REPLACEMENT_OPTIMIZER = "sgd"
PAIR_SEPARATOR = "+"  # "batch+optim": two experiments applied together, as the settings name them
FEEDBACK_FIGURES = ("weights_gb", "device_gb", "device_gib", "other_gb", "activations_gb", "backward_peak_gb")
_PHASE_WORDS = {"forward": "the forward pass", "backward": "`loss.backward()`", "step": "`optimizer.step()`"}


@dataclass(frozen=True)
class Scenario:
    """Run A's configuration: the model and how it is run, and the two memory caps in play (GiB)."""

    setup: StepSetup
    device_gib: float
    larger_device_gib: float

    @property
    def capacity(self) -> Capacity:
        """Run A's device: the H200 run capped at `device_gib`."""
        return capped(self.device_gib)


def _scenario(raw: Mapping[str, Any]) -> Scenario:
    require(isinstance(raw, Mapping), "run_a.json needs a 'scenario' object.")
    config = raw.get("config")
    if not isinstance(config, Mapping):
        raise ValueError("run_a.json: the scenario needs a 'config' object (a config.json).")
    setup = StepSetup(
        model=parse_config(config),
        batch=raw.get("batch"),  # type: ignore[arg-type]  # StepSetup checks every value itself
        seq_len=raw.get("seq_len"),  # type: ignore[arg-type]
        precision=raw.get("precision"),  # type: ignore[arg-type]
        attention=raw.get("attention"),  # type: ignore[arg-type]
        optimizer=raw.get("optimizer"),  # type: ignore[arg-type]
        optimizer_impl=raw.get("optimizer_impl"),  # type: ignore[arg-type]
    )
    device_gib = positive_number(raw.get("device_gib"), "Run A's device memory")
    larger_gib = positive_number(raw.get("larger_device_gib"), "The larger device's memory")
    require(larger_gib > device_gib, "The larger device must hold more memory than Run A's.")
    return Scenario(setup=setup, device_gib=device_gib, larger_device_gib=larger_gib)


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
    short_names: Mapping[str, str]  # each experiment as a few lower-case words, to name a pair
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
        short_names=_texts(raw.get("short_names"), EXPERIMENTS, "short_names"),
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
            content.feedback[choice].format(**{name: 1.0 for name in FEEDBACK_FIGURES})
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
    return step_timeline(scenario.setup, capacity=scenario.capacity)


@dataclass(frozen=True)
class BriefFigures:
    """The numbers that turn Run A's brief into a hypothesis."""

    parameter_count: int
    weights_gb: float
    device_gb: float
    device_gib: float
    other_gb: float  # what the weights leave unexplained: device minus weights
    forward_peak_gb: float
    backward_peak_gb: float
    activations_gb: float  # saved by the blocks, all still held when backward starts
    loss_gb: float  # the loss's FP32 log-softmax and, at backward's start, its two gradients
    overhead_gb: float  # the allocator reserve the cap also has to hold
    failure_where: str


@cache
def brief_figures() -> BriefFigures:
    """Run A's brief, worked out once per process: weights, what they leave unexplained, each pass's peak."""
    timeline = run_a_timeline()
    failure = timeline.failure
    if failure is None:
        raise ValueError("Run A's configuration no longer fails; check data/run_a.json.")
    start = timeline.points[0]
    backward = timeline.peak_point(iteration=1, phase="backward")
    forward_end = next(p for p in timeline.points if p.phase == "forward" and p.block == timeline.layers)
    return BriefFigures(
        parameter_count=timeline.setup.parameters,
        weights_gb=to_gb(start.live.parameters_bytes),
        device_gb=timeline.device_gb,
        device_gib=timeline.capacity.total_gib,
        other_gb=timeline.device_gb - to_gb(start.live.parameters_bytes),
        forward_peak_gb=timeline.phase_peak_gb(iteration=1, phase="forward"),
        backward_peak_gb=backward.total_gb,
        activations_gb=to_gb(forward_end.live.activations_bytes),
        loss_gb=to_gb(backward.live.activations_bytes - forward_end.live.activations_bytes),
        overhead_gb=to_gb(timeline.capacity.overhead_bytes),
        failure_where=failure.where(timeline.layers),
    )


def brief_sentence() -> str:
    """Run A in one sentence, with the figures every page shows (Home, Four runs, Run A, the report)."""
    brief = brief_figures()
    return (
        f"Run A: {brief.weights_gb:.2f} GB of weights on a {brief.device_gib:g} GiB "
        f"({brief.device_gb:.2f} GB) device; forward peaks at {brief.forward_peak_gb:.2f} GB, then it dies "
        f"in {brief.failure_where}, asking for {brief.backward_peak_gb:.2f} GB."
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
        return _capital(self.change)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _same_moment(a: TimelinePoint | None, b: TimelinePoint | None) -> bool:
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


def _change(before: StepSetup, after: StepSetup, before_gib: float, after_gib: float) -> str:
    """What differs between two runs, as a lower-case phrase ("tokens 1 × 1,536 → 1 × 768, ...")."""
    words = []
    if (after.batch, after.seq_len) != (before.batch, before.seq_len):
        words.append(f"tokens {before.batch} × {before.seq_len:,} → {after.batch} × {after.seq_len:,}")
    if after.optimizer != before.optimizer:
        words.append(f"optimizer {_optimizer_name(before.optimizer)} → {_optimizer_name(after.optimizer)}")
    if after_gib != before_gib:
        words.append(f"memory {before_gib:g} GiB → {after_gib:g} GiB")
    if after.model.layers != before.model.layers:
        weights = [s.parameters * s.convention.weight_bytes / BYTES_PER_GB for s in (before, after)]
        words.append(
            f"blocks {before.model.layers} → {after.model.layers} (weights {weights[0]:.2f} GB → "
            f"{weights[1]:.2f} GB)"
        )
    return ", ".join(words) or "nothing changes"


def _summary(timeline: StepTimeline, baseline: StepTimeline) -> str:
    failure, layers = timeline.failure, timeline.layers
    device = f"{timeline.device_gb:.2f} GB"
    if failure is None:
        steady, first = timeline.iteration_peak_gb(ITERATIONS), timeline.iteration_peak_gb(1)
        later = (
            f" Later iterations need more than the first ({steady:.2f} GB against {first:.2f} GB): "
            "the optimizer state stays once created."
            if steady > first
            else ""
        )
        return (
            f"Iteration 1 completes, and so does every later one: the peak is {steady:.2f} GB of {device}, "
            f"{timeline.device_gb - steady:.2f} GB to spare.{later}"
        )
    asked = f"asking for {failure.total_gb:.2f} GB of {device}"
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


def estimated_outcome(timeline: StepTimeline) -> str:
    """The estimate's outcome in run_a.csv's words: "ok", or "step N forward/backward/optimizer.step"."""
    failure = timeline.failure
    if failure is None:
        return "ok"
    phase = "optimizer.step" if failure.phase == "step" else failure.phase
    return f"step {failure.iteration} {phase}"


@cache
def _outcome(experiments: tuple[str, ...], label: str) -> ExperimentOutcome:
    scenario = load_content().scenario
    setup, gib = applied(experiments, scenario)
    timeline = step_timeline(setup, capacity=capped(gib))
    measured = matching_run_a(setup, gib)
    return ExperimentOutcome(
        experiment=PAIR_SEPARATOR.join(experiments),
        label=label,
        change=_change(scenario.setup, setup, scenario.device_gib, gib),
        timeline=timeline,
        summary=_summary(timeline, run_a_timeline()),
        measured=measured.outcome if measured else None,
    )


def _check_experiment(experiment: str) -> None:
    require(
        experiment in EXPERIMENTS, f"Unknown experiment {experiment!r}: pick one of {', '.join(EXPERIMENTS)}."
    )


def run_experiment(experiment: str) -> ExperimentOutcome:
    """Run A with one first experiment applied, recomputed from the phase model (once per process)."""
    _check_experiment(experiment)
    return _outcome((experiment,), FIRST_EXPERIMENTS[experiment])


def outcome_rows(outcomes: Sequence[ExperimentOutcome]) -> list[dict[str, str]]:
    """A table of experiments: what each changed and where the run gets to."""
    return [
        {
            "Experiment": o.label,
            "Change": o.change_title,
            "Iteration 1 completes": "yes" if o.timeline.first_iteration_completes else "no",
            "First failure": o.timeline.failure.where(o.timeline.layers)
            if o.timeline.failure
            else "none: it keeps running",
            "Peak needed (GB)": f"{o.timeline.peak_reached_gb:.2f}",
            "On the H200 (run_a.csv)": o.measured or "not run",
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
        device_gb=run_a_timeline().device_gb,
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
    setup, gib = applied(content.leak_experiments, content.scenario)
    timeline = step_timeline(setup, capacity=capped(gib))
    device_gb = timeline.device_gb
    require(
        timeline.failure is None, "The leak example must start from a run that fits; check data/run_a.json."
    )
    retained_bytes = setup.tokens * setup.model.hidden * COMPUTE_BYTES[setup.convention.compute]
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
        change=_change(content.scenario.setup, setup, content.scenario.device_gib, gib),
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
    _check_experiment(choice)
    figures = brief_figures()
    return (
        load_content().feedback[choice].format(**{name: getattr(figures, name) for name in FEEDBACK_FIGURES})
    )


@dataclass(frozen=True)
class MapCell:
    """One run of the H200's Run A grid: where it died, and where the phase model says it dies."""

    batch: int
    seq_len: int
    attention: str
    measured: str
    estimated: str


@cache
def outcome_map() -> tuple[MapCell, ...]:
    """Run A's shape at every batch × sequence the H200 ran with Adam on the scenario's cap, both ways."""
    scenario = load_content().scenario
    base = scenario.setup
    cells = []
    for row in run_a_measurements():
        if (
            row.optim != base.optimizer
            or row.cap_gib != scenario.device_gib
            or row.layers != base.model.layers
        ):
            continue
        model = replace(base.model, positions=max(base.model.positions, row.seq))
        setup = replace(base, model=model, batch=row.batch, seq_len=row.seq, attention=row.attn)
        timeline = step_timeline(setup, capacity=scenario.capacity)
        cells.append(MapCell(row.batch, row.seq, row.attn, row.outcome, estimated_outcome(timeline)))
    return tuple(cells)


def map_agreement() -> tuple[int, int]:
    """How many cells of the map the estimate places in the same phase as the H200, out of how many."""
    cells = outcome_map()
    return sum(c.measured == c.estimated for c in cells), len(cells)


def pairs() -> tuple[str, ...]:
    """Every two different first experiments, as the settings name them ("batch+optim"), in list order."""
    return tuple(
        f"{first}{PAIR_SEPARATOR}{second}"
        for i, first in enumerate(EXPERIMENTS)
        for second in EXPERIMENTS[i + 1 :]
    )


def pair_experiments(pair: str) -> tuple[str, str]:
    """The two experiments of a pair id, in the order they are applied (the list's order)."""
    require(pair in pairs(), f"Unknown pair of experiments {pair!r}: pick one of {', '.join(pairs())}.")
    first, second = pair.split(PAIR_SEPARATOR)
    return first, second


def short_label(experiment: str) -> str:
    """One experiment in a few words, for a chart title: "Half the tokens"."""
    _check_experiment(experiment)
    return _capital(load_content().short_names[experiment])


def pair_label(pair: str) -> str:
    """A pair of experiments in words: "Half the tokens + SGD instead of Adam"."""
    first, second = pair_experiments(pair)
    return f"{short_label(first)} + {load_content().short_names[second]}"


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
    if _same_moment(failure, baseline.failure):
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
        return f"{both} {_capital(runs_alone)} already ran alone, so the pair adds headroom, not a diagnosis."
    mover = _wall_mover(first, second)
    if mover is None or baseline.failure is None or mover.timeline.failure is None:
        return f"{both} Neither change was enough alone."
    other = second if mover is first else first
    return (
        f"{both} So Run A had two walls. {_capital(name[mover.experiment])} clears the first "
        f"({baseline.failure.where(baseline.layers)}) and meets the second "
        f"({mover.timeline.failure.where(mover.timeline.layers)}); {name[other.experiment]} clears that one."
    )


@cache
def run_pair(pair: str) -> PairOutcome:
    """Two first experiments alone and together, recomputed from the phase model (once per process)."""
    first_id, second_id = pair_experiments(pair)
    first, second = run_experiment(first_id), run_experiment(second_id)
    together = _outcome((first_id, second_id), pair_label(pair))
    return PairOutcome(first, second, together, _pair_verdict(first, second, together))
