"""What the memory page shows for one learner's settings: a budget, its verdict, a sweep and the
sums behind it.

The page hands over its stored settings and renders what comes back, so every number and every
assumption it states is computed here, from the same core the other pages use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.gpus import gpu
from core.memory import (
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
from core.memory_detailed import (
    LOGIT_BYTES,
    TrainingSetup,
    detailed_sweep,
    output_activation_bytes,
    per_gpu_terms,
    precision,
    precision_label,
)
from core.memory_lesson import (
    SAVED_TENSORS_PER_LAYER,
    LessonSetup,
    lesson_parameter_count,
    lesson_sweep,
    lesson_terms,
)
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
