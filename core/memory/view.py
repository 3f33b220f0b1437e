"""What the Memory page shows for one learner's settings, from every earlier step of the pipeline.

Three estimates of "how much memory does this step need?": the lesson's first-order budget and the
detailed per-GPU estimate (each with its verdict, sweep and the sums behind it), and the careful phase
model beside the rough rule and the H200's measurement of the same setup. The page hands over its stored
settings and renders what comes back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

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
from core.memory.detailed import (
    TrainingSetup,
    detailed_sweep,
    output_activation_bytes,
    per_gpu_terms,
    precision,
    precision_label,
)
from core.memory.lesson import (
    SAVED_TENSORS_PER_LAYER,
    LessonSetup,
    lesson_parameter_count,
    lesson_sweep,
    lesson_terms,
)
from core.memory.phases import PHASE_LABELS, PHASES, StepPhases, step_phases
from core.memory.reference import cuda_context_bytes, matching_run_a, matching_step, measured_steps, setup_of
from core.memory.setup import StepSetup
from core.memory.timeline import chart_terms, step_timeline
from core.memory.verdict import GIB, Capacity, whole_card
from core.models import CUSTOM, ModelSpec, active_parameter_count, parameter_count, resolve_model
from core.settings_schema import section

SECTION = "memory"
ESTIMATES = ("lesson", "detailed")
ESTIMATE_LABELS = {"lesson": "The lesson's five terms", "detailed": "Detailed estimate"}


@dataclass(frozen=True)
class BudgetView:
    """One estimate as the page shows it: terms, verdict, sweep, and each assumption in words."""

    estimate: str
    parameter_count: int
    terms: MemoryTerms
    verdict: Verdict
    sweep: MemorySweep
    device_label: str
    effective_batch: int
    assumptions: tuple[str, ...]


def page_settings(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The schema's defaults overlaid with the learner's stored values, each checked against the schema."""
    schema = section(SECTION)
    return schema.check({**schema.defaults(), **stored})


def sweep_values(axis: str) -> tuple[int, ...]:
    """The values a sweep visits: the whole range of that setting's slider."""
    field = section(SECTION).field(axis)
    low, high, step = field.bounds()
    return tuple(range(int(low), int(high) + 1, int(step)))


def lesson_setup(settings: Mapping[str, Any]) -> LessonSetup:
    """The lesson's six sliders from the page settings."""
    return LessonSetup(
        **{name: settings[name] for name in ("hidden", "layers", "dtype", "optimizer", "batch", "seq_len")}
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


def lesson_view(settings: Mapping[str, Any]) -> BudgetView:
    """The lesson's estimate against the lesson's device sizes."""
    setup = lesson_setup(settings)
    device_gb = float(settings["device_gb"])
    terms = lesson_terms(setup)
    count = lesson_parameter_count(hidden=setup.hidden, layers=setup.layers)
    size = setup.precision.weight_bytes
    state_values = optimizer_state_values(setup.optimizer)
    assumptions = (
        f"Parameters: 12 × {setup.hidden:,}² × {setup.layers} layers = {count:,}.",
        f"Parameters and gradients: {count:,} × {size} bytes = {to_gb(terms.parameters_bytes):.2f} GB each.",
        f"Optimizer state, kept in FP32: {count:,} × {state_values} extra values × "
        f"{OPTIMIZER_STATE_BYTES_PER_VALUE} bytes = {to_gb(terms.optimizer_state_bytes):.2f} GB.",
        f"Saved activations: {setup.batch} × {setup.seq_len:,} × {setup.hidden:,} × {setup.layers} layers × "
        f"{SAVED_TENSORS_PER_LAYER} tensors × {size} bytes = {to_gb(terms.activations_bytes):.2f} GB.",
        f"Workspace: a flat {to_gb(terms.workspace_bytes):.0f} GB.",
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
        device_label=f"{device_gb:g} GB device",
        effective_batch=setup.batch,
        assumptions=assumptions,
    )


def _model_sentence(model: ModelSpec, count: int) -> str:
    if model.is_moe:
        return (
            f"Parameters: {count:,} in {model.name}, all {model.experts} experts of each MoE layer, "
            "which memory holds with their gradients and optimizer state; each token uses "
            f"{active_parameter_count(model):,} of them ({model.active_experts} experts), "
            "so activations follow the routed tokens, not the expert count."
        )
    if model.published_params is not None:
        return (
            f"Parameters: {count:,}, counted from {model.name}'s architecture (the published count is "
            f"{model.published_params:,})."
        )
    if model.name != CUSTOM:
        return f"Parameters: {count:,}, counted tensor by tensor from {model.name} ({model.source})."
    lesson_count = lesson_parameter_count(hidden=model.hidden, layers=model.layers)
    return (
        f"Parameters: {count:,} for a Llama-style model of this shape ({model.heads} heads, a "
        f"{model.vocab:,}-token vocabulary); the lesson's 12·H² rule gives {lesson_count:,}, leaving out "
        "embeddings, biases and norms."
    )


def _activation_sentence(setup: TrainingSetup) -> str:
    model = setup.model
    size = precision(setup.precision).activation_bytes
    shape = (
        f"{model.kv_heads} KV heads, a {'gated' if model.gated_mlp else 'plain'} MLP "
        f"{model.intermediate:,} wide, "
        f"{'with' if model.dropout else 'no'} dropout, {size}-byte values"
    )
    if setup.recompute == "full":
        kept = "full recomputation keeps only each block's input (2·s·b·h bytes in the paper)"
    elif setup.recompute == "selective":
        kept = "selective recomputation drops the attention scores (34·s·b·h bytes in the paper)"
    elif setup.attention == "memory_efficient":
        kept = "memory-efficient attention never stores the a·s² scores, so the 5·a·s²·b part is gone"
    else:
        kept = "nothing is recomputed and the a·s² scores are kept"
    return (
        "Saved activations per block follow Korthikanti et al. (2022): s·b·h·(34 + 5·a·s/h) bytes "
        "for a GPT-style "
        "block with 2-byte values and dropout. That formula already counts bytes, so it is not "
        "multiplied by the dtype "
        f"again; we count the same tensors for this shape ({shape}). Here {kept}."
    )


def _zero_sentence(zero_stage: int, gpus: int) -> str:
    if zero_stage == 0 or gpus == 1:
        return "No sharding: each GPU holds a full copy of the weights, gradients and optimizer state."
    sharded = ", ".join(TERM_LABELS[t].lower() for t in ZERO_SHARDED_TERMS[zero_stage])
    return (
        f"ZeRO stage {zero_stage} over {gpus} GPUs: each GPU keeps 1/{gpus} of the {sharded}; "
        "activations are not sharded."
    )


def detailed_view(settings: Mapping[str, Any], model: ModelSpec | None = None) -> BudgetView:
    """The detailed, per-GPU estimate against the chosen GPU preset, for `model` if one is given."""
    setup = training_setup(settings, model)
    card = gpu(settings["gpu"])
    zero_stage, gpus = settings["zero_stage"], settings["gpus"]
    terms = per_gpu_terms(setup, zero_stage=zero_stage, gpus=gpus)
    count = parameter_count(setup.model)
    batch = effective_batch(
        micro_batch=setup.micro_batch, accumulation_steps=settings["accumulation"], gpus=gpus
    )
    output_gb = to_gb(
        float(output_activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len))
    )
    assumptions = (
        _model_sentence(setup.model, count),
        f"{precision_label(setup.precision)}. {BudgetOptimizer.label_of(setup.optimizer)}; "
        "its state is kept in FP32.",
        _activation_sentence(setup),
        "Outside the blocks, the final norm and output layer keep their inputs and the loss keeps "
        "the logits in FP32 "
        f"({setup.model.vocab:,} values × {LOGIT_BYTES} bytes per token): {output_gb:.2f} GB in all.",
        f"Gradient accumulation: micro-batch {setup.micro_batch} × {settings['accumulation']} steps "
        f"× {gpus} GPU(s) = "
        f"an effective batch of {batch:,}; activations follow the micro-batch only.",
        _zero_sentence(zero_stage, gpus),
        f"Runtime overhead: {setup.runtime_overhead_gb:g} GB set aside for the CUDA context and "
        "memory the allocator holds "
        f"but cannot reuse (fragmentation). Workspace: {to_gb(terms.workspace_bytes):.0f} GB, as in "
        "the lesson.",
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
        device_label=f"{card.name} ({card.memory_gib:g} GiB = {card.memory_gb:.1f} GB)",
        effective_batch=batch,
        assumptions=assumptions,
    )


def budget_view(stored: Mapping[str, Any], *, model: ModelSpec | None = None) -> BudgetView:
    """The estimate the learner picked, for their stored settings (defaults fill the gaps); `model`, such as
    one read from a pasted config.json, replaces the picked one in the detailed estimate."""
    settings = page_settings(stored)
    return detailed_view(settings, model) if settings["estimate"] == "detailed" else lesson_view(settings)


def lesson_outcomes(stored: Mapping[str, Any]) -> tuple[str, str]:
    """What the lesson estimate says for these settings: its largest term, and the first sequence length
    on the sweep that does not fit ("never" when all of them fit). The Memory page's predictions are
    scored against these."""
    settings = {**page_settings(stored), "estimate": "lesson", "sweep_axis": "seq_len"}
    view = lesson_view(settings)
    breaks = view.sweep.first_failing
    return view.verdict.largest_term, "never" if breaks is None else str(breaks)


@dataclass(frozen=True)
class BytesPerParameter:
    """One common convention for the model state a parameter costs in training, in bytes."""

    bytes_per_parameter: int
    meaning: str


def bytes_per_parameter_card() -> tuple[BytesPerParameter, ...]:
    """The usual 4 / 8 / 12 / 16 / 18 / 20 bytes per parameter, each computed from the precision it names."""
    fp32 = precision("fp32")
    return (
        BytesPerParameter(fp32.weight_bytes, "FP32 weights alone: inference, nothing to train."),
        BytesPerParameter(fp32.state_bytes_per_parameter("sgd"), "FP32 weights and gradients, plain SGD."),
        BytesPerParameter(
            fp32.state_bytes_per_parameter("sgd_momentum"),
            "FP32 weights and gradients plus one momentum buffer (SGD with momentum).",
        ),
        BytesPerParameter(
            fp32.state_bytes_per_parameter("adam"),
            "FP32 Adam: 4 + 4 + 8 for its two moments, `exp_avg` and `exp_avg_sq`; also 2-byte weights and "
            "gradients with an FP32 master copy.",
        ),
        BytesPerParameter(
            precision("mixed18").state_bytes_per_parameter("adam"),
            "2-byte weights, FP32 gradients and FP32 master weights, Adam.",
        ),
        BytesPerParameter(
            precision("mixed20").state_bytes_per_parameter("adam"),
            "2-byte weights and gradients with FP32 copies of both, Adam.",
        ),
    )


def lesson_two_byte_adam_bytes() -> int:
    """The lesson calculator's count for a 2-byte dtype with Adam: 2 + 2 + 8, no FP32 master copy."""
    return lesson_setup(
        {**page_settings({}), "dtype": "bf16", "optimizer": "adam"}
    ).precision.state_bytes_per_parameter("adam")


_LESSON_OPTIMIZER = {"adamw": "adam", "adam": "adam", "sgd_momentum": "sgd_momentum", "sgd": "sgd"}


def lesson_setup_of(setup: StepSetup) -> LessonSetup:
    """The lesson's six sliders for the same shape and run (2-byte values unless FP32)."""
    return LessonSetup(
        hidden=setup.model.hidden,
        layers=setup.model.layers,
        dtype="fp32" if setup.precision == "fp32" else "bf16",
        optimizer=_LESSON_OPTIMIZER[setup.optimizer],
        batch=setup.batch,
        seq_len=setup.seq_len,
    )


def _verdict(need_bytes: float, capacity: Capacity) -> str:
    """Fits or out of memory against the device, with the margin in GB."""
    margin = to_gb(capacity.total_bytes - need_bytes)
    return f"fits, {margin:.2f} GB spare" if margin >= 0 else f"out of memory by {-margin:.2f} GB"


def _row(answer: str, peak_bytes: float | None, verdict: str, why: str) -> dict[str, str]:
    shown = "—" if peak_bytes is None else f"{to_gb(peak_bytes):.2f}"
    shown_gib = "—" if peak_bytes is None else f"{peak_bytes / GIB:.2f}"
    return {"Answer": answer, "Peak (GB)": shown, "Peak (GiB)": shown_gib, "Verdict": verdict, "Why": why}


def _measured_row(setup: StepSetup, capacity: Capacity) -> dict[str, str]:
    cap_gib = capacity.total_bytes / GIB
    run = matching_run_a(setup, cap_gib) if capacity.context_bytes == 0 else None
    if run is not None:
        verdict = "ran" if run.outcome == "ok" else f"out of memory in {run.outcome}"
        why = (
            "A real run with the same cap: the allocator's peak when it stopped, which for a failed run is "
            "where it was refused, not what the step needed."
        )
        return _row("H200 measurement (run_a.csv)", run.peak_allocated, verdict, why)
    row = matching_step(setup)
    if row is None:
        return _row("H200 measurement", None, "not measured", "The reference did not run this setup.")
    why = (
        f"torch.cuda.max_memory_allocated() over one step on an H200; the allocator reserved "
        f"{to_gb(row.reserved_peak - row.peak_step):.2f} GB more than that."
    )
    return _row("H200 measurement (memory.csv)", row.peak_step, _verdict(row.peak_step, capacity), why)


def three_answers_rows(setup: StepSetup, *, capacity: Capacity) -> list[dict[str, str]]:
    """The rough rule, the careful count and the H200 measurement of `setup`, judged against `capacity`."""
    lesson = lesson_setup_of(setup)
    rough = lesson_terms(lesson).total_bytes
    missing = setup.parameters - lesson_parameter_count(hidden=lesson.hidden, layers=lesson.layers)
    phases = step_phases(setup)
    peak = phases.peak_bytes
    moment = phases.own(phases.peak_phase).moment
    failure = step_timeline(setup, capacity=capacity).failure
    careful = (
        _verdict(peak + capacity.overhead_bytes, capacity)
        if failure is None
        else f"out of memory in {failure.where(setup.model.layers)}, asking {failure.total_gb:.2f} GB"
    )
    return [
        _row(
            "The lesson's rough rule",
            rough,
            _verdict(rough, capacity),
            f"12·H² weights a block ({missing:,} parameters short: no embeddings), "
            "four B·S·H tensors a block "
            "and a flat 1 GB: no score matrix, no logits, no optimizer temporaries.",
        ),
        _row(
            "The careful count (phase model)",
            peak,
            careful,
            "Every tensor the code keeps, the loss's FP32 logits and each phase's temporaries; "
            "the peak is in "
            f"{PHASE_LABELS[phases.peak_phase]}, {moment}; the verdict adds "
            f"{to_gb(capacity.overhead_bytes):.2f} GB the device cannot give to tensors.",
        ),
        _measured_row(setup, capacity),
    ]


@dataclass(frozen=True)
class PhaseView:
    """The careful count for the memory page: each phase's terms, its table, the verdict and three answers."""

    setup: StepSetup
    phases: StepPhases
    capacity: Capacity
    bars: tuple[tuple[str, MemoryTerms], ...]
    rows: tuple[dict[str, str], ...]
    answers: tuple[dict[str, str], ...]
    verdict: str


def phase_setup(settings: Mapping[str, Any], model: ModelSpec) -> StepSetup:
    """The step the memory page's careful-count controls describe, for `model`."""
    return StepSetup(
        model=model,
        batch=settings["batch"],
        seq_len=settings["seq_len"],
        precision=settings["phase_precision"],
        attention=settings["phase_attention"],
        recompute=settings["phase_recompute"],
        optimizer=settings["phase_optimizer"],
        optimizer_impl=settings["optimizer_impl"],
        stack=settings["stack"],
    )


def _phase_rows(phases: StepPhases) -> tuple[dict[str, str], ...]:
    reported = phases.reported_bytes
    return tuple(
        {
            "Phase": PHASE_LABELS[phase],
            "Its own peak (GB)": f"{to_gb(phases.own(phase).peak_bytes):.2f}",
            "Its own peak (GiB)": f"{phases.own(phase).peak_bytes / GIB:.2f}",
            "max_memory_allocated() after it (GB)": f"{to_gb(reported[phase]):.2f}",
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
    where = f"{PHASE_LABELS[phases.peak_phase]}, {phases.own(phases.peak_phase).moment}"
    verdict = (
        f"Fits: the step peaks at {to_gb(need):.2f} GB with the CUDA context and the allocator's reserve, "
        f"in {where}; the {card.name} reports {card.memory_gib:.1f} GiB ({card.memory_gb:.2f} GB)."
        if need <= capacity.total_bytes
        else f"Out of memory: the step needs {to_gb(need):.2f} GB at its peak, in {where}; the {card.name} "
        f"reports {card.memory_gib:.1f} GiB ({card.memory_gb:.2f} GB)."
    )
    return PhaseView(
        setup=setup,
        phases=phases,
        capacity=capacity,
        bars=bars,
        rows=_phase_rows(phases),
        answers=tuple(three_answers_rows(setup, capacity=capacity)),
        verdict=verdict,
    )


def _ratio(estimate: float, measured: float) -> str:
    return f"{estimate / measured:.3f}"


@lru_cache(maxsize=1)
def reference_rows() -> tuple[dict[str, str], ...]:
    """Every H200 reference setup: the phase model's peak after each phase beside the measured one (GB)."""
    rows = []
    for row in measured_steps():
        estimate = step_phases(setup_of(row)).reported_bytes
        cells = {
            "Setup": f"{row.model}, {row.batch} × {row.seq:,}, {row.mode}, {row.attn}, "
            f"recompute {row.recompute}, {row.optimizer_impl}",
        }
        for phase, measured in row.phases.items():
            label = PHASE_LABELS[phase]
            cells[f"{label}: estimate (GB)"] = f"{to_gb(estimate[phase]):.2f}"
            cells[f"{label}: H200 (GB)"] = f"{to_gb(measured):.2f}"
        cells["Step peak: estimate ÷ H200"] = _ratio(estimate["optimizer_step"], row.peak_step)
        rows.append(cells)
    return tuple(rows)


@lru_cache(maxsize=1)
def reference_summary() -> str:
    """One sentence: how far the phase model's peaks are from the H200's, over every reference setup."""
    ratios = [
        step_phases(setup_of(row)).reported_bytes[phase] / measured
        for row in measured_steps()
        for phase, measured in row.phases.items()
    ]
    return (
        f"Over {len(measured_steps())} setups measured on an H200, every phase's peak is within "
        f"{100 * max(abs(r - 1) for r in ratios):.1f}% of the measurement (estimate ÷ measured from "
        f"{min(ratios):.3f} to {max(ratios):.3f}), and the parameter counts are exact."
    )
