"""Part A: data-parallel step time, speedup and parallel efficiency under strong and weak scaling.

Step time = local compute + a ring all-reduce of the gradients, with no overlap between the two.
The all-reduce follows the α–β model: 2 (N - 1) hops that each cost the link's latency α, plus
2 (N - 1) / N times the gradient bytes through each GPU's link at bandwidth β; a pool that fits in
one node uses the node link, a larger one is held back by the slower link between nodes. Compute
never takes less than the model's kernels per step times the measured floor of one small kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.datafiles import require
from core.gpus import bytes_per_value, peak_tflops
from core.kernel_times import small_kernel_floor_us
from core.scaling.tracks import Track
from core.validate import Labelled


class Mode(Labelled):
    """What a scaling experiment holds fixed as the pool grows."""

    STRONG = "strong", "Strong: fixed global batch"
    WEAK = "weak", "Weak: fixed local batch"


def ring_allreduce_ms(
    *, payload_bytes: float, workers: int, link_gb_per_s: float, latency_us: float = 0.0
) -> float:
    """Time for a ring all-reduce of `payload_bytes` over `workers` GPUs (α–β model):
    2 (N-1) hops of `latency_us` each, plus 2 (N-1)/N x bytes / bandwidth."""
    require(payload_bytes >= 0, "The payload of an all-reduce cannot be negative.")
    require(isinstance(workers, int) and workers >= 1, "An all-reduce needs at least one worker.")
    require(link_gb_per_s > 0, "Link bandwidth must be positive.")
    require(latency_us >= 0, "Link latency cannot be negative.")
    moved_bytes = 2 * (workers - 1) / workers * payload_bytes
    return 2 * (workers - 1) * latency_us / 1e3 + moved_bytes / (link_gb_per_s * 1e9) * 1e3


def launch_floor_ms(kernels: int) -> float:
    """The least time `kernels` kernels can take, one after another, at the measured small-kernel floor."""
    require(isinstance(kernels, int) and kernels >= 0, "A number of kernels is a whole number.")
    return kernels * small_kernel_floor_us() / 1e3


def compute_ms(*, flop: float, peak_tflops: float, efficiency: float) -> float:
    """Time to do `flop` of work at `efficiency` times the peak rate."""
    require(flop >= 0, "Work cannot be negative.")
    require(peak_tflops > 0, "Peak rate must be positive.")
    require(0 < efficiency <= 1, "Efficiency is a fraction of peak between 0 and 1.")
    return flop / (peak_tflops * 1e12 * efficiency) * 1e3


@dataclass(frozen=True)
class StepTime:
    """One data-parallel step on `workers` GPUs."""

    workers: int
    local_batch: float
    global_batch: float
    compute_ms: float
    communication_ms: float

    @property
    def step_ms(self) -> float:
        """Compute then gradient exchange, back to back."""
        return self.compute_ms + self.communication_ms

    @property
    def samples_per_s(self) -> float:
        """Useful throughput: samples of the global batch finished per second."""
        return self.global_batch / self.step_ms * 1e3


@dataclass(frozen=True)
class ScalingPoint:
    """A pool's step compared with the baseline pool's."""

    step: StepTime
    speedup: float
    efficiency: float

    @property
    def workers(self) -> int:
        """GPUs in this pool."""
        return self.step.workers


def data_parallel_step(track: Track, *, workers: int, mode: str, efficiency: float, dtype: str) -> StepTime:
    """One step of `track`'s model on `workers` GPUs; strong keeps the global batch, weak the local one."""
    require(mode in Mode.ids(), f"Scaling mode must be one of {', '.join(Mode.ids())}.")
    require(
        isinstance(workers, int) and 1 <= workers <= track.fleet.total_gpus,
        f"Workers must be between 1 and {track.fleet.total_gpus}.",
    )
    fleet = track.fleet
    if mode == "strong":
        global_batch, local_batch = float(track.global_batch), track.global_batch / workers
    else:
        global_batch, local_batch = float(track.local_batch * workers), float(track.local_batch)
    spans_nodes = workers > fleet.gpus_per_node
    arithmetic_ms = compute_ms(
        flop=local_batch * track.model.train_gflop_per_sample * 1e9,
        peak_tflops=peak_tflops(fleet.card, dtype),
        efficiency=efficiency,
    )
    return StepTime(
        workers=workers,
        local_batch=local_batch,
        global_batch=global_batch,
        compute_ms=max(arithmetic_ms, launch_floor_ms(track.model.kernels_per_step)),
        communication_ms=ring_allreduce_ms(
            payload_bytes=track.model.parameters * bytes_per_value(dtype),
            workers=workers,
            link_gb_per_s=fleet.link_gb_per_s(spans_nodes=spans_nodes),
            latency_us=fleet.latency_us(spans_nodes=spans_nodes),
        ),
    )


def scaling_points(
    track: Track, worker_counts: Sequence[int], *, mode: str, efficiency: float, dtype: str
) -> tuple[ScalingPoint, ...]:
    """Speedup and parallel efficiency of each pool against the first one in `worker_counts`."""
    require(len(worker_counts) >= 1, "Give at least one worker count.")
    steps = [
        data_parallel_step(track, workers=n, mode=mode, efficiency=efficiency, dtype=dtype)
        for n in worker_counts
    ]
    base = steps[0]
    points = []
    for step in steps:
        speedup = step.samples_per_s / base.samples_per_s
        points.append(
            ScalingPoint(step=step, speedup=speedup, efficiency=speedup * base.workers / step.workers)
        )
    return tuple(points)


def efficiency_band(efficiency: float) -> str:
    """The part A prediction option an efficiency falls in."""
    if efficiency < 0.5:
        return "below-half"
    return "middle" if efficiency <= 0.75 else "above-three-quarters"


def scaling_rows(points_by_mode: dict[str, tuple[ScalingPoint, ...]]) -> list[dict[str, object]]:
    """One table row per mode and pool, with units in the column names."""
    return [
        {
            "Mode": Mode.label_of(mode),
            "Workers": point.workers,
            "Local batch": point.step.local_batch,
            "Global batch": point.step.global_batch,
            "Compute (ms)": point.step.compute_ms,
            "Communication (ms)": point.step.communication_ms,
            "Step (ms)": point.step.step_ms,
            "Speedup (x)": point.speedup,
            "Parallel efficiency": point.efficiency,
        }
        for mode, points in points_by_mode.items()
        for point in points
    ]


def point_record(point: ScalingPoint) -> dict[str, float]:
    """A pool's figures as a plain JSON object, for a snapshot."""
    return {
        "workers": point.workers,
        "local_batch": point.step.local_batch,
        "global_batch": point.step.global_batch,
        "compute_ms": point.step.compute_ms,
        "communication_ms": point.step.communication_ms,
        "step_ms": point.step.step_ms,
        "speedup": point.speedup,
        "efficiency": point.efficiency,
    }


@dataclass(frozen=True)
class ScalingContrast:
    """Part A's result: the baseline pool against the chosen larger pool, plus both modes' sweeps."""

    mode: str
    baseline: ScalingPoint
    result: ScalingPoint
    sweeps: dict[str, tuple[ScalingPoint, ...]]

    @property
    def outcome(self) -> str:
        """The prediction option the larger pool's efficiency falls in."""
        return efficiency_band(self.result.efficiency)


def scaling_contrast(track: Track, *, mode: str, pool: int, efficiency: float, dtype: str) -> ScalingContrast:
    """Both modes over every pool of `track`, and the chosen mode's baseline and larger pool."""
    require(mode in Mode.ids(), f"Scaling mode must be one of {', '.join(Mode.ids())}.")
    track.pool_workers(pool)  # refuses a pool the track does not have
    sweeps = {
        m: scaling_points(track, track.worker_counts, mode=m, efficiency=efficiency, dtype=dtype)
        for m in Mode.ids()
    }
    return ScalingContrast(mode=mode, baseline=sweeps[mode][0], result=sweeps[mode][pool], sweeps=sweeps)
