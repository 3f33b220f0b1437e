"""What the Memory page shows for one learner's settings, from every earlier step of the pipeline.

Three estimates of "how much memory does this step need?": the lesson's first-order budget and the
detailed per-GPU estimate (each with its verdict, sweep and the sums behind it), and the careful phase
model beside the rough rule and the H200's measurement of the same setup; and "Will it fit?", the longest
sequence each way of training allows on a card (`core.memory.fit`). The page hands over its stored
settings and renders what comes back: figures, and for each sentence the key of its template in
`data/lessons/memory/sentences.toml` with the figures it names (`Line`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, TypedDict

from core import lessons
from core.gpus import Gpu, gpu
from core.memory.budget import (
    LOGIT_BYTES,
    OPTIMIZER_STATE_BYTES_PER_VALUE,
    TERM_LABELS,
    ZERO_SHARDED_TERMS,
    BudgetOptimizer,
    MemorySweep,
    MemoryTerms,
    Verdict,
    budget_verdict,
    effective_batch,
    optimizer_state_values,
    to_gb,
)
from core.memory.detailed import detailed_sweep, output_activation_bytes, per_gpu_terms
from core.memory.fit import LongestFit, longest_fit
from core.memory.graded import careful_outcomes, graded_step, lesson_device_bytes
from core.memory.lesson import (
    SAVED_TENSORS_PER_LAYER,
    lesson_activation_bytes,
    lesson_parameter_count,
    lesson_sweep,
    lesson_terms,
)
from core.memory.phases import PHASE_LABELS, PHASES, StepPhases, step_phases
from core.memory.reference import cuda_context_bytes, matching_run_a, matching_step, measured_steps, setup_of
from core.memory.settings import Sharding, precision, precision_label
from core.memory.setup import METHODS, LessonSetup, StepSetup, TrainingMethod, TrainingSetup
from core.memory.timeline import chart_terms, step_timeline
from core.memory.verdict import GIB, Capacity, whole_card
from core.models import CUSTOM, ModelSpec, active_parameter_count, parameter_count, resolve_model
from core.settings_schema import section
from core.units import capacity_label

SECTION = "memory"
ESTIMATES = ("lesson", "detailed")
ESTIMATE_LABELS = {"lesson": "The lesson's five terms", "detailed": "Detailed estimate"}
_LESSON_OPTIMIZER = {"adamw": "adam", "adam": "adam", "sgd_momentum": "sgd_momentum", "sgd": "sgd"}


@dataclass(frozen=True)
class Line:
    """One sentence of the page: its key in data/lessons/memory/sentences.toml and the figures it names (a
    figure may itself be a Line, a phrase filled in first)."""

    key: str
    figures: Mapping[str, object] = field(default_factory=dict)


def said(line: Line) -> str:
    """A line in words: its template with every figure, inner lines first, filled in."""
    figures = {
        name: said(value) if isinstance(value, Line) else value for name, value in line.figures.items()
    }
    return lessons.sentence("memory", line.key, **figures)


# The settings, read into each estimate's setup


def page_settings(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The schema's defaults overlaid with the learner's stored values, each checked against the schema."""
    schema = section(SECTION)
    return schema.check({**schema.defaults(), **stored})


def sweep_values(axis: str) -> tuple[int, ...]:
    """The values a sweep visits: the whole range of that setting's slider."""
    bounds = section(SECTION).field(axis).bounds()
    low, high, step = (int(value) for value in bounds)
    return tuple(range(low, high + 1, step))


def lesson_setup(settings: Mapping[str, Any]) -> LessonSetup:
    """The lesson's six sliders from the page settings."""
    return LessonSetup(
        **{name: settings[name] for name in ("hidden", "layers", "dtype", "optimizer", "batch", "seq_len")}
    )


def lesson_setup_of(setup: StepSetup) -> LessonSetup:
    """The lesson's six sliders for the same shape and run as a phase-model step (2-byte values unless
    FP32)."""
    return LessonSetup(
        hidden=setup.model.hidden,
        layers=setup.model.layers,
        dtype="fp32" if setup.precision == "fp32" else "bf16",
        optimizer=_LESSON_OPTIMIZER[setup.optimizer],
        batch=setup.batch,
        seq_len=setup.seq_len,
    )


def training_setup(settings: Mapping[str, Any], model: ModelSpec | None = None) -> TrainingSetup:
    """The detailed estimate's setup for `model` (default: the picked preset or custom shape); the lesson's
    batch slider is the micro-batch here."""
    return TrainingSetup(
        model=model or resolve_model(settings["model"], hidden=settings["hidden"], layers=settings["layers"]),
        precision=settings["precision"],
        optimizer=settings["optimizer"],
        micro_batch=settings["batch"],
        seq_len=settings["seq_len"],
        recompute=settings["recompute"],
        attention=settings["attention"],
        runtime_overhead_gb=settings["overhead_gb"],
    )


class CarefulChoices(TypedDict):
    """The careful count's choices besides the shape of the batch, the precision and the training."""

    attention: str
    recompute: str
    optimizer: str
    optimizer_impl: str
    stack: str


def _careful_choices(settings: Mapping[str, Any]) -> CarefulChoices:
    """The careful count's choices as the page's settings hold them."""
    return {
        "attention": settings["phase_attention"],
        "recompute": settings["phase_recompute"],
        "optimizer": settings["phase_optimizer"],
        "optimizer_impl": settings["optimizer_impl"],
        "stack": settings["stack"],
    }


def phase_setup(settings: Mapping[str, Any], model: ModelSpec) -> StepSetup:
    """The step the memory page's careful-count controls describe, for `model`."""
    return StepSetup(
        model=model,
        batch=settings["batch"],
        seq_len=settings["seq_len"],
        precision=settings["phase_precision"],
        **_careful_choices(settings),
    )


# The lesson's and the detailed estimate


@dataclass(frozen=True)
class BudgetView:
    """One estimate as the page shows it: terms, verdict, sweep, and the sums behind it, one line each."""

    estimate: str
    parameter_count: int
    terms: MemoryTerms
    verdict: Verdict
    sweep: MemorySweep
    device_label: str
    effective_batch: int
    assumptions: tuple[Line, ...]

    @property
    def verdict_line(self) -> Line:
        """The verdict in one line: fits with the headroom or out of memory by the overshoot, then the
        largest term and its lever."""
        verdict = self.verdict
        figures = {
            "total_gb": verdict.total_gb,
            "device": self.device_label,
            "largest": verdict.largest_label.lower(),
            "largest_gb": verdict.largest_gb,
            "share_percent": verdict.largest_share_percent,
            "lever": verdict.lever,
        }
        if verdict.fits:
            return Line("budget_fits", {**figures, "headroom_gb": verdict.headroom_gb})
        return Line("budget_oom", {**figures, "over_gb": verdict.over_gb})


def device_choice_label(device_choice: str) -> str:
    """The lesson's device choice as the radio names it: '24 GiB (25.77 GB)'."""
    return capacity_label(lesson_device_bytes(device_choice))


def lesson_view(settings: Mapping[str, Any]) -> BudgetView:
    """The lesson's estimate against the lesson's device sizes."""
    setup = lesson_setup(settings)
    device_bytes = lesson_device_bytes(settings["device_gb"])
    device_gb = device_bytes / 1e9
    terms = lesson_terms(setup)
    count = lesson_parameter_count(hidden=setup.hidden, layers=setup.layers)
    size = setup.precision.weight_bytes
    shape = {"hidden": setup.hidden, "layers": setup.layers}
    assumptions = (
        Line("lesson_parameters", {**shape, "parameters": count}),
        Line(
            "lesson_weights",
            {"parameters": count, "value_bytes": size, "weights_gb": to_gb(terms.parameters_bytes)},
        ),
        Line(
            "lesson_optimizer_state",
            {
                "parameters": count,
                "state_values": optimizer_state_values(setup.optimizer),
                "state_bytes": OPTIMIZER_STATE_BYTES_PER_VALUE,
                "optimizer_state_gb": to_gb(terms.optimizer_state_bytes),
            },
        ),
        Line(
            "lesson_activations",
            {
                **shape,
                "batch": setup.batch,
                "seq_len": setup.seq_len,
                "tensors": SAVED_TENSORS_PER_LAYER,
                "value_bytes": size,
                "activations_gb": to_gb(terms.activations_bytes),
            },
        ),
        Line("lesson_workspace", {"workspace_gb": to_gb(terms.workspace_bytes)}),
    )
    return BudgetView(
        estimate="lesson",
        parameter_count=count,
        terms=terms,
        verdict=budget_verdict(terms, device_gb=device_gb),
        sweep=lesson_sweep(
            setup,
            axis=settings["sweep_axis"],
            values=sweep_values(settings["sweep_axis"]),
            device_gb=device_gb,
        ),
        device_label=f"{capacity_label(device_bytes)} device",
        effective_batch=setup.batch,
        assumptions=assumptions,
    )


def _model_line(model: ModelSpec, count: int) -> Line:
    if model.is_moe:
        return Line(
            "model_moe",
            {
                "parameters": count,
                "model": model.name,
                "experts": model.experts,
                "active_parameters": active_parameter_count(model),
                "active_experts": model.active_experts,
            },
        )
    if model.published_params is not None:
        return Line(
            "model_published", {"parameters": count, "model": model.name, "published": model.published_params}
        )
    if model.name != CUSTOM:
        return Line("model_preset", {"parameters": count, "model": model.name, "source": model.source})
    return Line(
        "model_custom",
        {
            "parameters": count,
            "heads": model.heads,
            "vocab": model.vocab,
            "lesson_parameters": lesson_parameter_count(hidden=model.hidden, layers=model.layers),
        },
    )


def _kept(setup: TrainingSetup) -> Line:
    """What the activation count keeps under this recomputation and attention."""
    if setup.recompute == "full":
        return Line("kept_full")
    if setup.recompute == "selective":
        return Line("kept_selective")
    if setup.attention == "memory_efficient":
        return Line("kept_memory_efficient")
    return Line("kept_everything")


def _activation_line(setup: TrainingSetup) -> Line:
    model = setup.model
    return Line(
        "activations",
        {
            "kv_heads": model.kv_heads,
            "mlp": Line("mlp_gated" if model.gated_mlp else "mlp_plain"),
            "intermediate": model.intermediate,
            "dropout": Line("dropout_on" if model.dropout else "dropout_off"),
            "value_bytes": precision(setup.precision).activation_bytes,
            "kept": _kept(setup),
        },
    )


def _zero_line(zero_stage: int, gpus: int) -> Line:
    if zero_stage == 0 or gpus == 1:
        return Line("zero_none")
    sharded = ", ".join(TERM_LABELS[t].lower() for t in ZERO_SHARDED_TERMS[zero_stage])
    return Line("zero_sharded", {"zero_stage": zero_stage, "gpus": gpus, "sharded": sharded})


def detailed_view(settings: Mapping[str, Any], model: ModelSpec | None = None) -> BudgetView:
    """The detailed, per-GPU estimate against the chosen GPU preset, for `model` if one is given."""
    setup = training_setup(settings, model)
    card = gpu(settings["gpu"])
    zero_stage, gpus, accumulation = settings["zero_stage"], settings["gpus"], settings["accumulation"]
    terms = per_gpu_terms(setup, zero_stage=zero_stage, gpus=gpus)
    count = parameter_count(setup.model)
    batch = effective_batch(micro_batch=setup.micro_batch, accumulation_steps=accumulation, gpus=gpus)
    output_bytes = output_activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len)
    assumptions = (
        _model_line(setup.model, count),
        Line(
            "precision",
            {
                "precision": precision_label(setup.precision),
                "optimizer": BudgetOptimizer.label_of(setup.optimizer),
            },
        ),
        _activation_line(setup),
        Line(
            "outside_blocks",
            {
                "vocab": setup.model.vocab,
                "logit_bytes": LOGIT_BYTES,
                "output_gb": to_gb(float(output_bytes)),
            },
        ),
        Line(
            "accumulation",
            {
                "micro_batch": setup.micro_batch,
                "accumulation": accumulation,
                "gpus": gpus,
                "effective_batch": batch,
            },
        ),
        _zero_line(zero_stage, gpus),
        Line(
            "overhead",
            {"overhead_gb": setup.runtime_overhead_gb, "workspace_gb": to_gb(terms.workspace_bytes)},
        ),
    )
    sweep = detailed_sweep(
        setup,
        axis=settings["sweep_axis"],
        values=sweep_values(settings["sweep_axis"]),
        device_gb=card.memory_gb,
        zero_stage=zero_stage,
        gpus=gpus,
    )
    return BudgetView(
        estimate="detailed",
        parameter_count=count,
        terms=terms,
        verdict=budget_verdict(terms, device_gb=card.memory_gb),
        sweep=sweep,
        device_label=f"{card.name}, {capacity_label(card.memory_bytes)}",
        effective_batch=batch,
        assumptions=assumptions,
    )


def budget_view(stored: Mapping[str, Any], *, model: ModelSpec | None = None) -> BudgetView:
    """The estimate the learner picked, for their stored settings (defaults fill the gaps); `model`, such as
    one read from a pasted config.json, replaces the picked one in the detailed estimate."""
    settings = page_settings(stored)
    return detailed_view(settings, model) if settings["estimate"] == "detailed" else lesson_view(settings)


def lesson_outcomes(stored: Mapping[str, Any]) -> tuple[str, str]:
    """What is true for the step the lesson's sliders describe, by the careful count: its largest term at
    the peak, and the first sequence length on the sweep that does not fit the lesson's card ("never" when
    all of them fit). The Memory page's two predictions are graded against these, not the rough rule."""
    outcomes = careful_outcomes(page_settings(stored), seq_lens=sweep_values("seq_len"))
    return outcomes.largest_term, outcomes.breaks


def rule_and_count(stored: Mapping[str, Any]) -> Line:
    """One sentence setting the rough rule's two answers beside the careful count's, and why they differ."""
    settings = {**page_settings(stored), "estimate": "lesson", "sweep_axis": "seq_len"}
    rule = lesson_view(settings)
    count = careful_outcomes(settings, seq_lens=sweep_values("seq_len"))
    lesson = lesson_setup(settings)
    rule_block_bytes = float(lesson_activation_bytes(lesson, batch=lesson.batch, seq_len=lesson.seq_len))
    count_block_bytes = step_phases(graded_step(settings)).count.block_bytes * lesson.layers
    return Line(
        "rule_and_count",
        {
            "rule_largest": rule.verdict.largest_label.lower(),
            "rule_breaks": _breaks_phrase(rule.sweep.first_failing),
            "count_largest": TERM_LABELS[count.largest_term].lower(),
            "count_largest_gb": count.largest_gb,
            "count_state_gb": count.optimizer_state_gb,
            "count_breaks": _breaks_phrase(None if count.breaks == "never" else int(count.breaks)),
            "times": count_block_bytes / rule_block_bytes,
        },
    )


def _breaks_phrase(first_failing: int | None) -> Line:
    if first_failing is None:
        return Line("breaks_never", {"last": sweep_values("seq_len")[-1]})
    return Line("breaks_at", {"seq_len": first_failing})


@dataclass(frozen=True)
class BytesPerParameter:
    """The usual conventions for the model state a parameter costs in training, in bytes."""

    fp32_weights: int  # inference, nothing to train
    sgd: int  # FP32 weights and gradients
    sgd_momentum: int  # plus one momentum buffer
    adam: int  # FP32 Adam: two moments
    mixed18: int  # 2-byte weights, FP32 gradients and master weights, Adam
    mixed20: int  # 2-byte weights and gradients with FP32 copies of both, Adam
    lesson_two_byte_adam: int  # the lesson calculator's 2-byte dtype with Adam: no FP32 master copy


def bytes_per_parameter() -> BytesPerParameter:
    """The usual 4 / 8 / 12 / 16 / 18 / 20 bytes per parameter, each computed from the precision it names,
    and the lesson's own count for a 2-byte dtype with Adam (2 + 2 + 8)."""
    fp32 = precision("fp32")
    lesson = lesson_setup({**page_settings({}), "dtype": "bf16", "optimizer": "adam"})
    return BytesPerParameter(
        fp32_weights=fp32.weight_bytes,
        sgd=fp32.state_bytes_per_parameter("sgd"),
        sgd_momentum=fp32.state_bytes_per_parameter("sgd_momentum"),
        adam=fp32.state_bytes_per_parameter("adam"),
        mixed18=precision("mixed18").state_bytes_per_parameter("adam"),
        mixed20=precision("mixed20").state_bytes_per_parameter("adam"),
        lesson_two_byte_adam=lesson.precision.state_bytes_per_parameter("adam"),
    )


# The careful count: the phase model beside the rough rule and the H200


def _verdict(need_bytes: float, capacity: Capacity) -> str:
    """Fits or out of memory against the device, with the margin in GB."""
    margin = to_gb(capacity.total_bytes - need_bytes)
    if margin >= 0:
        return lessons.sentence("memory", "answer_fits", spare_gb=margin)
    return lessons.sentence("memory", "answer_oom", over_gb=-margin)


def _row(answer: str, peak_bytes: float | None, verdict: str, why: str) -> dict[str, str]:
    shown = "—" if peak_bytes is None else f"{to_gb(peak_bytes):.2f}"
    shown_gib = "—" if peak_bytes is None else f"{peak_bytes / GIB:.2f}"
    return {"Answer": answer, "Peak (GB)": shown, "Peak (GiB)": shown_gib, "Verdict": verdict, "Why": why}


def _measured_row(setup: StepSetup, capacity: Capacity) -> dict[str, str]:
    cap_gib = capacity.total_bytes / GIB
    run = matching_run_a(setup, cap_gib) if capacity.context_bytes == 0 else None
    if run is not None:
        verdict = (
            lessons.sentence("memory", "answer_ran")
            if run.outcome == "ok"
            else lessons.sentence("memory", "answer_run_oom", outcome=run.outcome)
        )
        why = lessons.sentence("memory", "why_run_a")
        return _row("H200 measurement (run_a.csv)", run.peak_allocated, verdict, why)
    row = matching_step(setup)
    if row is None:
        return _row(
            "H200 measurement",
            None,
            lessons.sentence("memory", "answer_not_measured"),
            lessons.sentence("memory", "why_not_measured"),
        )
    why = lessons.sentence("memory", "why_measured", reserved_gb=to_gb(row.reserved_peak - row.peak_step))
    return _row("H200 measurement (memory.csv)", row.peak_step, _verdict(row.peak_step, capacity), why)


def three_answers_rows(setup: StepSetup, *, capacity: Capacity) -> list[dict[str, str]]:
    """The rough rule, the careful count and the H200 measurement of `setup`, judged against `capacity`
    (the Memory and Run A pages both show them, so the sentences are filled here)."""
    lesson = lesson_setup_of(setup)
    rough = lesson_terms(lesson).total_bytes
    missing = setup.parameters - lesson_parameter_count(hidden=lesson.hidden, layers=lesson.layers)
    phases = step_phases(setup)
    peak = phases.peak_bytes
    failure = step_timeline(setup, capacity=capacity).failure
    careful = (
        _verdict(peak + capacity.overhead_bytes, capacity)
        if failure is None
        else lessons.sentence(
            "memory", "answer_failed_at", where=failure.where(setup.model.layers), asked_gb=failure.total_gb
        )
    )
    why_careful = lessons.sentence(
        "memory",
        "why_careful",
        phase=PHASE_LABELS[phases.peak_phase],
        moment=phases.own(phases.peak_phase).moment,
        overhead_gb=to_gb(capacity.overhead_bytes),
    )
    return [
        _row(
            "The lesson's rough rule",
            rough,
            _verdict(rough, capacity),
            lessons.sentence("memory", "why_rough", missing=missing),
        ),
        _row("The careful count (phase model)", peak, careful, why_careful),
        _measured_row(setup, capacity),
    ]


@dataclass(frozen=True)
class PhaseView:
    """The careful count for the memory page: each phase's terms, its table, three answers, and whether the
    step fits the card with the figures its verdict names."""

    setup: StepSetup
    phases: StepPhases
    capacity: Capacity
    bars: tuple[tuple[str, MemoryTerms], ...]
    rows: tuple[dict[str, str], ...]
    answers: tuple[dict[str, str], ...]
    fits: bool
    need_gb: float  # the step's peak with the CUDA context and the allocator's reserve
    peak_phase: str  # the label of the phase the peak is in
    peak_moment: str


def _phase_rows(phases: StepPhases) -> tuple[dict[str, str], ...]:
    reported = phases.reported_bytes
    return tuple(
        {
            "Phase": PHASE_LABELS[phase],
            "Its own peak (GB)": f"{to_gb(phases.own(phase).peak_bytes):.2f}",
            "Its own peak (GiB)": f"{phases.own(phase).peak_bytes / GIB:.2f}",
            # max_memory_allocated() after it; the name alone is wider than a phone's column.
            "Max allocated after it (GB)": f"{to_gb(reported[phase]):.2f}",
            "When": phases.own(phase).moment,
        }
        for phase in PHASES
    )


def phase_view(settings: Mapping[str, Any], *, model: ModelSpec, card: Gpu) -> PhaseView:
    """The careful count of the page's step on `card` (its context and the allocator's reserve counted)."""
    setup = phase_setup(settings, model)
    phases = step_phases(setup)
    capacity = whole_card(card.name, card.memory_bytes, context_bytes=cuda_context_bytes())
    overhead = capacity.overhead_bytes
    bars = tuple(
        (PHASE_LABELS[phase], chart_terms(phases.own(phase).terms, overhead_bytes=overhead))
        for phase in PHASES
    )
    need = phases.peak_bytes + overhead
    return PhaseView(
        setup=setup,
        phases=phases,
        capacity=capacity,
        bars=bars,
        rows=_phase_rows(phases),
        answers=tuple(three_answers_rows(setup, capacity=capacity)),
        fits=need <= capacity.total_bytes,
        need_gb=to_gb(need),
        peak_phase=PHASE_LABELS[phases.peak_phase],
        peak_moment=phases.own(phases.peak_phase).moment,
    )


def _ratio(estimate: float, measured: float) -> str:
    return f"{estimate / measured:.3f}"


# A phase in a column heading: "loss.backward()" alone is wider than a phone's column.
SHORT_PHASES = {"forward": "Forward", "backward": "Backward", "optimizer_step": "Step"}


@lru_cache(maxsize=1)
def reference_rows() -> tuple[dict[str, str], ...]:
    """Every H200 reference setup: the phase model's peak after each phase beside the measured one (GB),
    the two in one cell so that the table fits a phone."""
    rows = []
    for row in measured_steps():
        estimate = step_phases(setup_of(row)).reported_bytes
        cells = {
            "Setup": f"{row.model}, {row.batch} × {row.seq:,}, {row.mode}, {row.attn}, "
            f"recompute {row.recompute}, {row.optimizer_impl}",
        }
        for phase, measured in row.phases.items():
            cells[f"{SHORT_PHASES[phase]}: estimate / H200 (GB)"] = (
                f"{to_gb(estimate[phase]):.2f} / {to_gb(measured):.2f}"
            )
        cells["Step peak: estimate ÷ H200"] = _ratio(estimate["optimizer_step"], row.peak_step)
        rows.append(cells)
    return tuple(rows)


@dataclass(frozen=True)
class ReferenceSummary:
    """How far the phase model's peaks are from the H200's, over every reference setup."""

    setups: int
    worst_percent: float  # the largest |estimate ÷ measured − 1| of any phase, in percent
    lowest_ratio: float
    highest_ratio: float


@lru_cache(maxsize=1)
def reference_summary() -> ReferenceSummary:
    """The phase model against the H200 over every reference setup and phase."""
    ratios = [
        step_phases(setup_of(row)).reported_bytes[phase] / measured
        for row in measured_steps()
        for phase, measured in row.phases.items()
    ]
    return ReferenceSummary(
        setups=len(measured_steps()),
        worst_percent=100 * max(abs(r - 1) for r in ratios),
        lowest_ratio=min(ratios),
        highest_ratio=max(ratios),
    )


# Will it fit? The longest sequence each way of training allows


FIT_GPUS = 8  # the many-GPU case the page compares: FSDP over one node of eight
FIT_SHARDING = "fsdp"
METHOD_NAMES = {"full": "Full training", "lora": "LoRA", "qlora": "QLoRA"}


@dataclass(frozen=True)
class FitBar:
    """One way of training and the longest sequence it fits on the card."""

    method: str  # the method's name as the chart writes it
    gpus: str  # "1 GPU" or "8 GPUs, FSDP"
    fit: LongestFit | None  # None when the phase model does not count this run
    refused: str = ""  # why it is not counted, in a sentence


@dataclass(frozen=True)
class FitView:
    """Will it fit: the longest sequence of every method on one GPU and on eight with FSDP, and the
    learner's own choice with why one token more fails."""

    capacity: Capacity
    bars: tuple[FitBar, ...]
    chosen: LongestFit | None  # None when the learner's own run is not counted (`refused` says why)
    answer: Line | None
    why: Line | None
    refused: str = ""


def fit_setup(settings: Mapping[str, Any], model: ModelSpec, training: TrainingMethod) -> StepSetup:
    """The run "Will it fit?" sizes: its own micro-batch and precision, the careful count's other
    choices, trained as `training` says (the sequence is what the search sets)."""
    return StepSetup(
        model=model,
        batch=settings["fit_batch"],
        seq_len=1,
        precision=settings["fit_precision"],
        training=training,
        **_careful_choices(settings),
    )


def _gpus_words(training: TrainingMethod) -> str:
    if training.gpus == 1:
        return "1 GPU"
    return f"{training.gpus} GPUs, {Sharding.label_of(training.sharding).split(' (')[0]}"


def _answer(fit: LongestFit, run: Line) -> tuple[Line, Line | None]:
    """The sentence that answers, and the one that says why the next token does not fit."""
    if fit.failure is None or fit.failure_moment is None:
        key = "fit_positions" if fit.limited_by == "positions" else "fit_bound"
        peak_gb = to_gb(fit.peak.terms.total_bytes) if fit.peak else 0.0
        return Line(key, {"run": run, "tokens": fit.seq_len, "peak_gb": peak_gb}), None
    failed = fit.failure_moment
    why = {
        "where": fit.failure.where,
        "term": TERM_LABELS[failed.largest_term],
        "term_gb": to_gb(failed.largest_bytes),
        "need_gb": to_gb(fit.failure.needed_bytes),
    }
    if fit.seq_len == 0:
        return Line("fit_none", {"run": run}), Line("fit_why_none", why)
    return Line("fit_answer", {"run": run, "tokens": fit.seq_len}), Line(
        "fit_why", {**why, "longer": fit.seq_len + 1}
    )


def _fit_or_refusal(
    settings: Mapping[str, Any], model: ModelSpec, training: TrainingMethod, capacity: Capacity
) -> tuple[LongestFit | None, str]:
    """The longest fit of one run, or the sentence saying why the phase model does not count it."""
    try:
        return longest_fit(fit_setup(settings, model, training), capacity), ""
    except ValueError as err:
        return None, str(err)


def fit_view(
    settings: Mapping[str, Any], *, model: ModelSpec, card: Gpu, training: TrainingMethod
) -> FitView:
    """The longest sequence of full training, LoRA and QLoRA (`training`'s rank and targets) on one
    `card` and on eight with FSDP, and of `training` itself; a run the phase model does not count (LoRA
    on a mixture of experts with shared experts, QLoRA under autocast) is refused in its own bar's
    sentence, not for all."""
    capacity = whole_card(card.name, card.memory_bytes, context_bytes=cuda_context_bytes())
    compared = [
        replace(training, method=method, freeze_blocks=0, gpus=gpus, sharding=sharding, tensor_parallel=1)
        for gpus, sharding in ((1, "none"), (FIT_GPUS, FIT_SHARDING))
        for method in METHODS
    ]
    bars = tuple(
        FitBar(METHOD_NAMES[run.method], _gpus_words(run), *_fit_or_refusal(settings, model, run, capacity))
        for run in compared
    )
    chosen, refused = _fit_or_refusal(settings, model, training, capacity)
    if chosen is None:
        return FitView(capacity=capacity, bars=bars, chosen=None, answer=None, why=None, refused=refused)
    run = Line(
        "fit_run",
        {
            "method": METHOD_NAMES[training.method],
            "gpus": _gpus_words(training),
            "gpu": card.name,
            "capacity": capacity_label(capacity.total_bytes),
            "batch": chosen.setup.batch,
        },
    )
    answer, why = _answer(chosen, run)
    return FitView(capacity=capacity, bars=bars, chosen=chosen, answer=answer, why=why)
