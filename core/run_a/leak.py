"""Budget against leak: Run A launched again and again, beside a run that fits and keeps one tensor a
step."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core.datafiles import require
from core.memory import BYTES_PER_GB
from core.memory.settings import COMPUTE_BYTES
from core.memory.timeline import ITERATIONS, step_timeline
from core.memory.verdict import capped
from core.run_a.outcomes import applied, describe_change
from core.run_a.scenario import load_content, run_a_timeline
from core.workloads import BYTES_PER_MB


@dataclass(frozen=True)
class IterationSeries:
    """Peak memory asked for in each iteration (or each launch) of a run, and where it fails."""

    x_label: str
    x: tuple[int, ...]
    peak_gb: tuple[float, ...]
    device_gb: float

    @property
    def fails(self) -> tuple[bool, ...]:
        """Whether each iteration asks for more than the device holds."""
        return tuple(gb > self.device_gb for gb in self.peak_gb)

    @property
    def failed_at(self) -> int | None:
        """The first iteration (or launch) that fails, if any does."""
        return next((x for x, failed in zip(self.x, self.fails, strict=True) if failed), None)


def budget_series() -> IterationSeries:
    """Run A launched again and again: each launch asks for the same memory and dies in iteration 1."""
    content = load_content()
    failure = run_a_timeline().failure
    if failure is None:
        raise ValueError("Run A's configuration no longer fails; check data/run_a.json.")
    launches = range(1, content.budget_launches + 1)
    return IterationSeries(
        x_label="Launch",
        x=tuple(launches),
        peak_gb=tuple(failure.total_gb for _ in launches),
        device_gb=run_a_timeline().device_gb,
    )


@dataclass(frozen=True)
class Leak:
    """A run that fits, plus one tensor kept from every step: what it is, and its peaks until it fails."""

    change: str  # how the base run differs from Run A
    steady_peak_gb: float  # the base run's peak without the leak
    retained_mb_per_iteration: float
    series: IterationSeries


@cache
def leak() -> Leak:
    """The leak example: a fitting run (Run A after the data file's experiments) that keeps one B·S·H tensor
    per step."""
    content = load_content()
    setup, gib = applied(content.leak_experiments, content.scenario)
    timeline = step_timeline(setup, capacity=capped(gib))
    device_gb = timeline.device_gb
    require(
        timeline.failure is None, "The leak example must start from a run that fits; check data/run_a.json."
    )
    retained_bytes = setup.tokens * setup.model.hidden * COMPUTE_BYTES[setup.convention.compute]
    peaks: list[float] = []
    for iteration in range(1, content.leak_max_iterations + 1):
        planned = timeline.iteration_peak_gb(min(iteration, ITERATIONS))
        peaks.append(planned + (iteration - 1) * retained_bytes / BYTES_PER_GB)
        if peaks[-1] > device_gb:
            break
    series = IterationSeries(
        x_label="Iteration", x=tuple(range(1, len(peaks) + 1)), peak_gb=tuple(peaks), device_gb=device_gb
    )
    require(
        series.failed_at is not None,
        "The leak example never fails within its iterations; check data/run_a.json.",
    )
    return Leak(
        change=describe_change(content.scenario.setup, setup, content.scenario.device_gib, gib),
        steady_peak_gb=timeline.iteration_peak_gb(ITERATIONS),
        retained_mb_per_iteration=retained_bytes / BYTES_PER_MB,
        series=series,
    )
