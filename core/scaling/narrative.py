"""The sentences that put each part's result into words, built from the same figures the page shows.

One function per part takes that part's result object and returns plain text (no Markdown), so the
page cannot say a number its table and chart do not, and the wording can be tested without a browser.
"""

from __future__ import annotations

from core.scaling.capacity import CapacityContrast
from core.scaling.layout import LayoutContrast
from core.scaling.pipeline import PipelineContrast
from core.scaling.quality import QualityComparison
from core.scaling.throughput import ScalingContrast
from core.units import MS_PER_S, S_PER_H, duration_label


def scaling_summary(contrast: ScalingContrast) -> str:
    """Part A: the larger pool's step, the all-reduce's share of it, the speedup and the efficiency."""
    point, step = contrast.result, contrast.result.step
    return (
        f"On {point.workers} GPUs a step takes {duration_label(step.step_ms / MS_PER_S)}, "
        f"{duration_label(step.communication_ms / MS_PER_S, unit_of=step.step_ms / MS_PER_S)} of it "
        f"the gradient all-reduce. Useful throughput is {point.speedup:,.2f}× the "
        f"{contrast.baseline.workers}-GPU "
        f"baseline: a parallel efficiency of {point.efficiency:.2f}."
    )


def efficiency_chart_description(contrast: ScalingContrast) -> str:
    """Part A's chart in one line, naming the pool sizes it covers."""
    workers = ", ".join(str(point.workers) for point in contrast.sweeps[contrast.mode])
    return f"Parallel efficiency of both experiments on {workers} GPUs; the dashed line is ideal scaling."


def capacity_summary(contrast: CapacityContrast) -> str:
    """Part B: replicated state against the chosen ZeRO stage, whether that fits, and what now dominates."""
    plan = contrast.result.verdict
    fit = "fits" if plan.fits else "does not fit"
    return (
        f"Replicated state needs {contrast.baseline.verdict.total_gb:,.1f} GB per GPU; "
        f"{contrast.result.label} "
        f"needs {plan.total_gb:,.1f} GB of {plan.device_gb:,.0f} GB and {fit}. "
        f"Its largest term is now {plan.largest_label.lower()} ({plan.largest_gb:,.1f} GB)."
    )


def memory_chart_description(contrast: CapacityContrast) -> str:
    """Part B's chart in one line: which plans are stacked, against how much HBM."""
    return (
        f"Per-GPU memory of replicated state and {contrast.result.label}, term by term, "
        f"against {contrast.result.verdict.device_gb:,.0f} GB of HBM."
    )


def layout_summary(contrast: LayoutContrast) -> str:
    """Part C: where the alternative runs tensor parallel, what that costs, and both step times."""
    chosen, baseline = contrast.result, contrast.baseline
    return (
        f"{chosen.layout.label} runs tensor parallel {chosen.tp_link} and spends "
        f"{chosen.tp_communication_ms:,.1f} ms a step on it, against {baseline.tp_communication_ms:,.1f} ms "
        f"{baseline.tp_link}. Steps: {chosen.step_ms:,.1f} ms against {baseline.step_ms:,.1f} ms."
    )


def pipeline_summary(contrast: PipelineContrast) -> str:
    """Part D: the bubble shrinking while the first stage keeps more activations, and what that weighs."""
    baseline, chosen = contrast.baseline, contrast.result
    return (
        f"The bubble goes from {baseline.bubble_fraction:.3f} to {chosen.bubble_fraction:.3f} of the step, "
        f"while the first stage holds {chosen.retained_microbatches} microbatches of activations instead of "
        f"{baseline.retained_microbatches}: {chosen.verdict.total_gb:,.1f} GB per GPU "
        f"against {baseline.verdict.total_gb:,.1f} GB."
    )


def pipeline_chart_description(contrast: PipelineContrast) -> str:
    """Part D's two panels in one line, with the HBM line the memory panel is drawn against."""
    return (
        "Left: bubble fraction as microbatches grow. Right: the busiest stage's memory per GPU, "
        f"against {contrast.result.verdict.device_gb:,.0f} GB of HBM."
    )


def quality_summary(comparison: QualityComparison) -> str:
    """Part E: how long each straggler policy takes to reach the target, and in how many steps."""
    strict, drop = comparison.strict, comparison.drop
    return (
        f"Strict synchronisation reaches the target in {duration_label(strict.time_to_target_h * S_PER_H)} "
        f"({strict.steps:,} steps); dropping slow workers takes "
        f"{duration_label(drop.time_to_target_h * S_PER_H)} "
        f"({drop.steps:,} shorter steps)."
    )
