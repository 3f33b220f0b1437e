"""Part D arithmetic shared with part C: the pipeline bubble and how many microbatches a stage holds.

With p stages and m microbatches, a one-forward-one-backward schedule runs m + p - 1 slots of
which p - 1 are fill and drain: bubble fraction = (p - 1) / (m + p - 1). The first stage starts
min(m, p) microbatches before the first backward pass frees one, so it retains that many sets
of activations at its peak.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require
from core.memory import MemoryTerms, Verdict, budget_verdict, to_gb
from core.memory.setup import TrainingSetup
from core.scaling.capacity import case_setup, parallel_terms
from core.scaling.cases import Cases
from core.scaling.fleets import Fleet


def _check(stages: int, microbatches: int) -> None:
    require(isinstance(stages, int) and stages >= 1, "A pipeline needs at least one stage.")
    require(isinstance(microbatches, int) and microbatches >= 1, "A pipeline needs at least one microbatch.")


def bubble_fraction(*, stages: int, microbatches: int) -> float:
    """Share of the pipeline's time slots that are idle: (p - 1) / (m + p - 1)."""
    _check(stages, microbatches)
    return (stages - 1) / (microbatches + stages - 1)


def bubble_ms(*, stages: int, microbatches: int, busy_ms: float) -> float:
    """Idle time added to `busy_ms` of useful work per GPU: (p - 1) / m of it."""
    _check(stages, microbatches)
    require(busy_ms >= 0, "Busy time cannot be negative.")
    return (stages - 1) / microbatches * busy_ms


def retained_microbatches(*, stages: int, microbatches: int) -> int:
    """Microbatches whose activations the busiest stage holds at once: min(m, p)."""
    _check(stages, microbatches)
    return min(microbatches, stages)


@dataclass(frozen=True)
class PipelinePoint:
    """One microbatch count: the bubble, and the busiest stage's memory per GPU."""

    microbatches: int
    bubble_fraction: float
    retained_microbatches: int
    terms: MemoryTerms
    verdict: Verdict

    def record(self) -> dict[str, object]:
        """The point's figures as a plain JSON object, for a snapshot."""
        return {
            "microbatches": self.microbatches,
            "bubble_fraction": self.bubble_fraction,
            "retained_microbatches": self.retained_microbatches,
            "activations_gb": to_gb(self.terms.activations_bytes),
            "total_gb": self.verdict.total_gb,
            "fits": self.verdict.fits,
        }


@dataclass(frozen=True)
class PipelineContrast:
    """Part D's result: the baseline count against the chosen one, and a sweep for the chart."""

    stages: int
    tp: int
    dp: int
    microbatch_size: int
    baseline: PipelinePoint
    result: PipelinePoint
    sweep: tuple[PipelinePoint, ...]

    @property
    def outcome(self) -> str:
        """The prediction option that came true for the chosen count."""
        if (
            self.result.verdict.total_gb < self.baseline.verdict.total_gb
            and self.result.bubble_fraction < self.baseline.bubble_fraction
        ):
            return "both-fall"
        return "faster-fits" if self.result.verdict.fits else "faster-oom"


def pipeline_point(
    setup: TrainingSetup, *, stages: int, tp: int, dp: int, zero_stage: int, microbatches: int, hbm_gb: float
) -> PipelinePoint:
    """Bubble and busiest-stage memory when `microbatches` fixed-size microbatches enter the pipeline."""
    retained = retained_microbatches(stages=stages, microbatches=microbatches)
    terms = parallel_terms(
        setup, tp=tp, pp=stages, dp=dp, zero_stage=zero_stage, retained_microbatches=retained
    )
    return PipelinePoint(
        microbatches=microbatches,
        bubble_fraction=bubble_fraction(stages=stages, microbatches=microbatches),
        retained_microbatches=retained,
        terms=terms,
        verdict=budget_verdict(terms, device_gb=hbm_gb),
    )


def pipeline_contrast(
    *, fleet: Fleet, cases: Cases, microbatches: int, sweep_to: int = 16
) -> PipelineContrast:
    """The pipeline case on `fleet`: DP = GPUs / (stages x TP); baseline count against `microbatches`."""
    case = cases.pipeline
    replica = case.stages * case.tensor_parallel
    require(
        fleet.total_gpus % replica == 0, f"{fleet.total_gpus} GPUs do not split into replicas of {replica}."
    )
    setup = case_setup(
        cases,
        model=case.model,
        micro_batch=case.microbatch_size,
        seq_len=case.seq_len,
        recompute=case.recompute,
    )
    dp = fleet.total_gpus // replica

    def point(count: int) -> PipelinePoint:
        return pipeline_point(
            setup,
            stages=case.stages,
            tp=case.tensor_parallel,
            dp=dp,
            zero_stage=case.zero_stage,
            microbatches=count,
            hbm_gb=fleet.card.memory_gb,
        )

    return PipelineContrast(
        stages=case.stages,
        tp=case.tensor_parallel,
        dp=dp,
        microbatch_size=case.microbatch_size,
        baseline=point(case.baseline_microbatches),
        result=point(microbatches),
        sweep=tuple(point(count) for count in range(1, sweep_to + 1)),
    )


def pipeline_rows(points: tuple[PipelinePoint, ...]) -> list[dict[str, object]]:
    """One row per microbatch count: bubble, retained microbatches, activations and total memory."""
    return [
        {
            "Microbatches": p.microbatches,
            "Bubble fraction": p.bubble_fraction,
            "Retained microbatches": p.retained_microbatches,
            "Retained activations (GB)": to_gb(p.terms.activations_bytes),
            "Memory (GB)": p.verdict.total_gb,
            "Outcome": "fits" if p.verdict.fits else "out of memory",
        }
        for p in points
    ]
