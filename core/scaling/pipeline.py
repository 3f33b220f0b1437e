"""Part D arithmetic shared with part C: the pipeline bubble and how many micro-batches a stage holds.

With p stages and m micro-batches, a one-forward-one-backward schedule runs m + p - 1 slots of
which p - 1 are fill and drain: bubble fraction = (p - 1) / (m + p - 1). The first stage starts
min(m, p) micro-batches before the first backward pass frees one, so it retains that many sets
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


def _check(stages: int, micro_batches: int) -> None:
    require(isinstance(stages, int) and stages >= 1, "A pipeline needs at least one stage.")
    require(
        isinstance(micro_batches, int) and micro_batches >= 1, "A pipeline needs at least one micro-batch."
    )


def bubble_fraction(*, stages: int, micro_batches: int) -> float:
    """Share of the pipeline's time slots that are idle: (p - 1) / (m + p - 1)."""
    _check(stages, micro_batches)
    return (stages - 1) / (micro_batches + stages - 1)


def bubble_ms(*, stages: int, micro_batches: int, busy_ms: float) -> float:
    """Idle time added to `busy_ms` of useful work per GPU: (p - 1) / m of it."""
    _check(stages, micro_batches)
    require(busy_ms >= 0, "Busy time cannot be negative.")
    return (stages - 1) / micro_batches * busy_ms


def retained_micro_batches(*, stages: int, micro_batches: int) -> int:
    """Micro-batches whose activations the busiest stage holds at once: min(m, p)."""
    _check(stages, micro_batches)
    return min(micro_batches, stages)


@dataclass(frozen=True)
class PipelinePoint:
    """One micro-batch count: the bubble, and the busiest stage's memory per GPU."""

    micro_batches: int
    bubble_fraction: float
    retained_micro_batches: int
    terms: MemoryTerms
    verdict: Verdict

    def record(self) -> dict[str, object]:
        """The point's figures as a plain JSON object, for a snapshot."""
        return {
            "micro_batches": self.micro_batches,
            "bubble_fraction": self.bubble_fraction,
            "retained_micro_batches": self.retained_micro_batches,
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
    micro_batch_size: int
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
    setup: TrainingSetup, *, stages: int, tp: int, dp: int, zero_stage: int, micro_batches: int, hbm_gb: float
) -> PipelinePoint:
    """Bubble and busiest-stage memory when `micro_batches` fixed-size micro-batches enter the pipeline."""
    retained = retained_micro_batches(stages=stages, micro_batches=micro_batches)
    terms = parallel_terms(
        setup, tp=tp, pp=stages, dp=dp, zero_stage=zero_stage, retained_micro_batches=retained
    )
    return PipelinePoint(
        micro_batches=micro_batches,
        bubble_fraction=bubble_fraction(stages=stages, micro_batches=micro_batches),
        retained_micro_batches=retained,
        terms=terms,
        verdict=budget_verdict(terms, device_gb=hbm_gb),
    )


def pipeline_contrast(
    *, fleet: Fleet, cases: Cases, micro_batches: int, sweep_to: int = 16
) -> PipelineContrast:
    """The pipeline case on `fleet`: DP = GPUs / (stages x TP); baseline count against `micro_batches`."""
    case = cases.pipeline
    replica = case.stages * case.tensor_parallel
    require(
        fleet.total_gpus % replica == 0, f"{fleet.total_gpus} GPUs do not split into replicas of {replica}."
    )
    setup = case_setup(
        cases,
        model=case.model,
        micro_batch=case.micro_batch_size,
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
            micro_batches=count,
            hbm_gb=fleet.card.memory_gb,
        )

    return PipelineContrast(
        stages=case.stages,
        tp=case.tensor_parallel,
        dp=dp,
        micro_batch_size=case.micro_batch_size,
        baseline=point(case.baseline_micro_batches),
        result=point(micro_batches),
        sweep=tuple(point(count) for count in range(1, sweep_to + 1)),
    )


def pipeline_rows(points: tuple[PipelinePoint, ...]) -> list[dict[str, object]]:
    """One row per micro-batch count: bubble, retained micro-batches, activations and total memory."""
    return [
        {
            "Micro-batches": p.micro_batches,
            "Bubble fraction": p.bubble_fraction,
            "Retained micro-batches": p.retained_micro_batches,
            "Retained activations (GB)": to_gb(p.terms.activations_bytes),
            "Memory (GB)": p.verdict.total_gb,
            "Outcome": "fits" if p.verdict.fits else "out of memory",
        }
        for p in points
    ]
