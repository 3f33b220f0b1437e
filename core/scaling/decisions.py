"""Which decision of parts C, D and E the evidence on screen rules out, and the figures that say why.

Part B's refusals live with its contrast (`CapacityContrast.refused_decisions`); part A's decision is
the scaling mode the learner already chose. Each function returns, for every refused decision, the
name of the sentence in `data/lessons/scaling/sentences.toml` that explains it and that sentence's
figures, so the page cannot refuse a decision without saying which numbers contradict it.
"""

from __future__ import annotations

from core.scaling.layout import LayoutContrast
from core.scaling.pipeline import PipelineContrast
from core.scaling.quality import POLICY_LABELS, TIE_FRACTION, QualityComparison
from core.units import S_PER_H, duration_label

Refusals = dict[str, tuple[str, dict[str, object]]]  # decision -> (sentence name, its figures)


def placement_refusals(contrast: LayoutContrast) -> Refusals:
    """Part C: keeping tensor parallel inside each node is ruled out when the selected alternative's step
    is shorter by more than 1%, switching to it when its step is longer by more than 1%."""
    chosen, baseline = contrast.result, contrast.baseline
    figures: dict[str, object] = {
        "layout": chosen.layout.label,
        "step_ms": chosen.step_ms,
        "baseline_layout": baseline.layout.label,
        "baseline_step_ms": baseline.step_ms,
    }
    if abs(chosen.step_ms - baseline.step_ms) <= TIE_FRACTION * max(chosen.step_ms, baseline.step_ms):
        return {}
    if chosen.step_ms < baseline.step_ms:
        return {"within": ("refused_keep_within", figures)}
    return {"alternative": ("refused_switch", figures)}


def pipeline_refusals(contrast: PipelineContrast) -> Refusals:
    """Part D: the selected micro-batch count is ruled out when its busiest stage overflows HBM or its
    bubble is no smaller than the baseline's; the baseline count when the selected one fits with a
    smaller bubble."""
    chosen, baseline = contrast.result, contrast.baseline
    figures: dict[str, object] = {
        "micro_batches": chosen.micro_batches,
        "memory_gb": chosen.verdict.total_gb,
        "device_gb": chosen.verdict.device_gb,
        "bubble": chosen.bubble_fraction,
        "baseline_micro_batches": baseline.micro_batches,
        "baseline_bubble": baseline.bubble_fraction,
    }
    if chosen.micro_batches == baseline.micro_batches:
        return {}
    if not chosen.verdict.fits:
        return {"selected": ("refused_selected_overflows", figures)}
    if chosen.bubble_fraction >= baseline.bubble_fraction:
        return {"selected": ("refused_selected_bubble", figures)}
    return {"baseline": ("refused_baseline", figures)}


def straggler_refusals(comparison: QualityComparison) -> Refusals:
    """Part E: the policy that reaches the target later is ruled out, unless the two finish within 1%."""
    winner = comparison.winner
    if winner == "tie":
        return {}
    faster, slower = (
        (comparison.strict, comparison.drop) if winner == "strict" else (comparison.drop, comparison.strict)
    )
    longer_s = slower.time_to_target_h * S_PER_H
    figures: dict[str, object] = {
        "policy": POLICY_LABELS[slower.policy],
        "time": duration_label(longer_s),
        "other_policy": POLICY_LABELS[faster.policy],
        "other_time": duration_label(faster.time_to_target_h * S_PER_H, unit_of=longer_s),
    }
    return {slower.policy: ("refused_policy", figures)}
