"""The figures each part's sentences name, taken from the same result objects the page draws.

The sentences are templates in `data/lessons/scaling/sentences.toml` (`part_a_summary` and the like);
each function here returns the figures of one template, so the page cannot say a number its table and
chart do not, and a test checks the numbers without pinning the wording.
"""

from __future__ import annotations

from core.scaling.capacity import CapacityContrast
from core.scaling.layout import LayoutContrast
from core.scaling.pipeline import PipelineContrast
from core.scaling.quality import QualityComparison
from core.scaling.throughput import ScalingContrast
from core.scaling.tracks import Track
from core.units import MS_PER_S, S_PER_H, duration_label


def scaling_figures(contrast: ScalingContrast) -> dict[str, object]:
    """Part A: the larger pool's step, the all-reduce's share of it, the speedup and the efficiency."""
    point, step = contrast.result, contrast.result.step
    return {
        "workers": point.workers,
        "step": duration_label(step.step_ms / MS_PER_S),
        "communication": duration_label(step.communication_ms / MS_PER_S, unit_of=step.step_ms / MS_PER_S),
        "speedup": point.speedup,
        "baseline_workers": contrast.baseline.workers,
        "efficiency": point.efficiency,
    }


def capacity_figures(contrast: CapacityContrast) -> dict[str, object]:
    """Part B: replicated state against the chosen ZeRO stage, against HBM, and what now dominates."""
    plan = contrast.result.verdict
    return {
        "replicated_gb": contrast.baseline.verdict.total_gb,
        "plan": contrast.result.label,
        "plan_gb": plan.total_gb,
        "device_gb": plan.device_gb,
        "largest": plan.largest_label.lower(),
        "largest_gb": plan.largest_gb,
    }


def refusal_figures(contrast: CapacityContrast, decision: str) -> dict[str, object]:
    """Part B's refused `decision`. "No plan fits": a plan that fits (the selected one if it does, else the
    lightest) against HBM. Carrying the plan forward: the selected plan against HBM and, if one fits, the
    lightest fitting plan to try instead."""
    fits = contrast.result.verdict.fits
    shown = contrast.result if fits or decision == "shard" else contrast.lightest_fit
    if shown is None:
        raise ValueError('"No plan fits" is refused only when a plan fits.')
    figures: dict[str, object] = {
        "plan": shown.label,
        "plan_gb": shown.verdict.total_gb,
        "device_gb": shown.verdict.device_gb,
    }
    lightest = contrast.lightest_fit
    if decision == "shard" and lightest is not None:
        figures |= {"fitting_plan": lightest.label, "fitting_gb": lightest.verdict.total_gb}
    return figures


def layout_figures(contrast: LayoutContrast) -> dict[str, object]:
    """Part C: where the alternative runs tensor parallel, what that costs, and both step times."""
    chosen, baseline = contrast.result, contrast.baseline
    return {
        "layout": chosen.layout.label,
        "link": chosen.tp_link,
        "tp_ms": chosen.tp_communication_ms,
        "baseline_tp_ms": baseline.tp_communication_ms,
        "baseline_link": baseline.tp_link,
        "step_ms": chosen.step_ms,
        "baseline_step_ms": baseline.step_ms,
    }


def two_stage_figures(contrast: LayoutContrast) -> dict[str, object]:
    """Part C's two-stage pipeline against the baseline, whichever alternative is selected: tensor
    parallel stays inside a node, so what changes is each GPU's data-parallel gradient traffic (half the
    gradients, over half the replicas) and the bubble the stages add."""
    chosen, baseline = contrast.timings["pipeline"], contrast.baseline
    return {
        "layout": chosen.layout.label,
        "stages": chosen.layout.pp,
        "tp_ms": chosen.tp_communication_ms,
        "dp": chosen.layout.dp,
        "baseline_dp": baseline.layout.dp,
        "dp_ms": chosen.dp_communication_ms,
        "baseline_dp_ms": baseline.dp_communication_ms,
        "bubble_ms": chosen.bubble_ms,
        "step_ms": chosen.step_ms,
        "baseline_step_ms": baseline.step_ms,
    }


def pipeline_figures(contrast: PipelineContrast) -> dict[str, object]:
    """Part D: the bubble shrinking while the first stage keeps more activations, and what that weighs."""
    baseline, chosen = contrast.baseline, contrast.result
    return {
        "baseline_bubble": baseline.bubble_fraction,
        "bubble": chosen.bubble_fraction,
        "retained": chosen.retained_micro_batches,
        "baseline_retained": baseline.retained_micro_batches,
        "memory_gb": chosen.verdict.total_gb,
        "baseline_memory_gb": baseline.verdict.total_gb,
    }


def straggler_setup_figures(part_a: ScalingContrast, track: Track) -> dict[str, object]:
    """Part E's setup: part A's larger pool, its global batch and its step when no GPU lags."""
    step = part_a.result.step
    return {
        "model": track.model.name,
        "workers": part_a.result.workers,
        "global_batch": step.global_batch,
        "step": duration_label(step.step_ms / MS_PER_S),
    }


def quality_figures(comparison: QualityComparison) -> dict[str, object]:
    """Part E: how long each straggler policy takes to reach the target, and in how many steps; both
    times in the unit of the longer, the unit of the table and the chart."""
    strict, drop = comparison.strict, comparison.drop
    longer_s = max(strict.time_to_target_h, drop.time_to_target_h) * S_PER_H
    return {
        "strict_time": duration_label(strict.time_to_target_h * S_PER_H, unit_of=longer_s),
        "strict_steps": strict.steps,
        "drop_time": duration_label(drop.time_to_target_h * S_PER_H, unit_of=longer_s),
        "drop_steps": drop.steps,
    }
