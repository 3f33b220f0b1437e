"""Part E: time to a quality target under strict synchronisation or when slow workers are dropped.

Steps to target follow a diminishing-returns batch curve (McCandlish et al. 2018):
steps = S_min x (1 + B_crit / B). Past the critical batch, a bigger batch barely cuts the steps.
Strict synchronisation waits every step for the slowest GPU, a lag of the fleet that does not shrink
with the step (jitter, a slow input batch, a throttled card). Dropping slow workers skips that wait but
wastes their gradient work, modelled as a multiplier on the steps. So dropping wins exactly when the
lag is longer than (work multiplier - 1) x the step: on short steps, not on long ones. The curve, the
lag and the multiplier are illustrative assumptions, not measurements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.datafiles import require
from core.scaling.tracks import Convergence, StragglerPolicy
from core.units import MS_PER_S, S_PER_H, duration_unit

# Two policies finishing within this fraction of each other count as a tie.
TIE_FRACTION = 0.01


def steps_to_target(*, convergence: Convergence, global_batch: float, work_multiplier: float = 1.0) -> int:
    """Optimizer steps to reach the target: ceil(S_min x (1 + B_crit / B) x work multiplier)."""
    require(global_batch > 0, "The global batch must be positive.")
    require(
        work_multiplier >= 1,
        "Dropping work cannot make the target cheaper: the work multiplier is at least 1.",
    )
    return math.ceil(
        convergence.minimum_steps * (1 + convergence.critical_batch / global_batch) * work_multiplier
    )


@dataclass(frozen=True)
class PolicyResult:
    """One straggler policy's path to the target."""

    policy: str
    step_ms: float
    steps: int

    @property
    def time_to_target_h(self) -> float:
        """Wall-clock hours to reach the target."""
        return self.step_ms * self.steps / (MS_PER_S * S_PER_H)


@dataclass(frozen=True)
class QualityComparison:
    """Strict synchronisation against dropping slow workers, at the same global batch."""

    global_batch: float
    strict: PolicyResult
    drop: PolicyResult

    @property
    def winner(self) -> str:
        """'strict', 'drop', or 'tie' when they finish within 1% of each other."""
        slow, fast = self.strict.time_to_target_h, self.drop.time_to_target_h
        if abs(slow - fast) <= TIE_FRACTION * max(slow, fast):
            return "tie"
        return "strict" if slow < fast else "drop"


def compare_policies(
    *, step_ms: float, global_batch: float, convergence: Convergence, straggler: StragglerPolicy
) -> QualityComparison:
    """Time to target for both policies, from a step of `step_ms` when no GPU lags: strict synchronisation
    adds the straggler lag to every step, dropping slow workers adds steps instead."""
    require(step_ms > 0, "The step time must be positive.")
    return QualityComparison(
        global_batch=global_batch,
        strict=PolicyResult(
            "strict",
            step_ms + straggler.lag_ms,
            steps_to_target(convergence=convergence, global_batch=global_batch),
        ),
        drop=PolicyResult(
            "drop",
            step_ms,
            steps_to_target(
                convergence=convergence, global_batch=global_batch, work_multiplier=straggler.work_multiplier
            ),
        ),
    )


POLICY_LABELS = {"strict": "Strict synchronisation", "drop": "Drop slow workers"}


def quality_rows(comparison: QualityComparison) -> list[dict[str, object]]:
    """One row per policy: its step and its time to target, each in the one unit (`duration_unit`) that
    suits the longer of the two policies, so that a table, a chart axis and a sentence all read
    '3.29 s' and '1.33 days' rather than '3.29e+03 ms' and '0.00286 h'. "Step unit" and "Unit" name them."""
    results = (comparison.strict, comparison.drop)
    step_unit, step_s = duration_unit(max(r.step_ms for r in results) / MS_PER_S)
    unit, unit_s = duration_unit(max(r.time_to_target_h for r in results) * S_PER_H)
    return [
        {
            "Policy": POLICY_LABELS[result.policy],
            "Global batch": comparison.global_batch,
            "Step": result.step_ms / MS_PER_S / step_s,
            "Step unit": step_unit,
            "Steps to target": result.steps,
            "Time to target": result.time_to_target_h * S_PER_H / unit_s,
            "Unit": unit,
        }
        for result in results
    ]


def quality_table(comparison: QualityComparison) -> list[dict[str, object]]:
    """`quality_rows` as a table shows them: each unit in its column's name."""
    return [
        {
            "Policy": row["Policy"],
            "Global batch": row["Global batch"],
            f"Step ({row['Step unit']})": row["Step"],
            "Steps to target": row["Steps to target"],
            f"Time to target ({row['Unit']})": row["Time to target"],
        }
        for row in quality_rows(comparison)
    ]


def policy_record(result: PolicyResult) -> dict[str, object]:
    """A policy's figures as a plain JSON object, for a snapshot."""
    return {
        "policy": result.policy,
        "step_ms": result.step_ms,
        "steps": result.steps,
        "time_to_target_h": result.time_to_target_h,
    }
