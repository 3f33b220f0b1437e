"""What the memory pages show: three answers to "how much memory does this step need?" side by side.

The seed's rough rule (kept exactly as the lesson has it), the careful phase model, and the H200's
measurement where the reference ran the same setup, each with one sentence on why it differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.gpus import Gpu
from core.memory.budget import MemoryTerms, to_gb
from core.memory.phases import PHASE_LABELS, PHASES, StepPhases, step_phases
from core.memory.reference import cuda_context_bytes, matching_run_a, matching_step, measured_steps, setup_of
from core.memory.setup import StepSetup
from core.memory.timeline import chart_terms, step_timeline
from core.memory.verdict import GIB, Capacity, whole_card
from core.memory_lesson import LessonSetup, lesson_parameter_count, lesson_terms
from core.models import ModelSpec

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
