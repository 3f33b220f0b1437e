"""A training step moment by moment, for two iterations, from the phase model: the first iteration
(whose `optimizer.step()` creates the optimizer state) and the second, which every later one repeats.
A run fails at the first moment whose live memory, with the device's overheads, exceeds the device.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from core.memory.budget import BYTES_PER_GB, MemoryTerms
from core.memory.phases import STEP_CACHE_SIZE, Moment, step_moments
from core.memory.setup import StepSetup
from core.memory.verdict import Capacity

PHASES = ("start", "forward", "backward", "step")
PHASE_LABELS = {
    "start": "Start",
    "forward": "Forward",
    "backward": "loss.backward()",
    "step": "optimizer.step()",
}
ITERATIONS = 2
_TIMELINE_PHASE = {"forward": "forward", "backward": "backward", "optimizer_step": "step"}
# The phase model's terms as the chart's memory terms: the loss and every temporary are workspace, FSDP's
# gathered blocks are weights, DDP's buckets are gradients.
_CHART_TERM = {
    "weights": "parameters",
    "master_weights": "master_weights",
    "optimizer_state": "optimizer_state",
    "gradients": "gradients",
    "activations": "activations",
    "loss": "activations",
    "workspace": "workspace",
    "optimizer_transient": "workspace",
    "gradient_buckets": "gradients",
    "gathered_block": "parameters",
    "gathered_root": "parameters",
    "gradient_reduce_scatter": "gradients",
    "dequantized_weight": "workspace",
}


@dataclass(frozen=True)
class TimelinePoint:
    """One moment of a training step and the terms live at it (runtime overhead: context and reserve)."""

    iteration: int
    phase: str
    block: int | None  # the block in progress (1 = nearest the input); None outside the blocks
    position: float  # iterations since the start: 0.5 is halfway through the first step
    live: MemoryTerms
    what: str

    @property
    def total_gb(self) -> float:
        """Memory in use at this moment, overheads included (decimal GB)."""
        return self.live.total_gb

    def where(self, layers: int) -> str:
        """This moment in words, as a training loop would locate it."""
        step = f"iteration {self.iteration}"
        if self.phase == "forward" and self.block is not None:
            return f"the forward pass of {step}, at block {self.block} of {layers}"
        if self.phase == "forward":
            return f"the forward pass of {step}, in the loss"
        if self.phase == "backward" and self.block is not None:
            return (
                f"`loss.backward()` of {step}, at block {self.block} of {layers} "
                "(backward starts from the last block)"
            )
        if self.phase == "backward":
            return f"`loss.backward()` of {step}, {self.what.split(':')[0]}"
        if self.phase == "step" and self.iteration == 1:
            return "the first `optimizer.step()`, while it creates the optimizer state"
        if self.phase == "step":
            return f"`optimizer.step()` of {step}"
        return f"the start of {step}"


@dataclass(frozen=True)
class StepTimeline:
    """Every moment of the first two iterations as planned, and the first one the device cannot hold."""

    setup: StepSetup
    capacity: Capacity
    points: tuple[TimelinePoint, ...]
    failure: TimelinePoint | None

    @property
    def layers(self) -> int:
        """Transformer blocks of the model."""
        return self.setup.model.layers

    @property
    def device_gb(self) -> float:
        """The device's memory (decimal GB), the line a chart draws."""
        return self.capacity.total_gb

    @property
    def ran(self) -> tuple[TimelinePoint, ...]:
        """The moments that happen: all of them, or up to and including the failure."""
        return self.points if self.failure is None else self.points[: self.points.index(self.failure) + 1]

    @property
    def first_iteration_completes(self) -> bool:
        """Whether iteration 1 gets through its optimizer step."""
        return self.failure is None or self.failure.iteration > 1

    @property
    def peak_reached_gb(self) -> float:
        """The most memory asked for by the moments that happen (the failing request, if it fails)."""
        return max(p.total_gb for p in self.ran)

    def phase_peak_gb(self, *, iteration: int, phase: str) -> float:
        """The most memory one phase of one iteration needs (as planned, reached or not)."""
        return self.peak_point(iteration=iteration, phase=phase).total_gb

    def iteration_peak_gb(self, iteration: int) -> float:
        """The most memory one iteration needs (as planned)."""
        return max(p.total_gb for p in self.points if p.iteration == iteration)

    def peak_point(self, *, iteration: int, phase: str) -> TimelinePoint:
        """The moment of a phase that needs the most memory (the first of equals)."""
        return max(
            (p for p in self.points if p.iteration == iteration and p.phase == phase),
            key=lambda p: p.total_gb,
        )


def chart_terms(moment_terms: Mapping[str, float], *, overhead_bytes: float) -> MemoryTerms:
    """A moment's terms as the memory charts stack them; the context and allocator reserve as overhead."""
    sizes: dict[str, float] = {"runtime_overhead": overhead_bytes}
    for term, size in moment_terms.items():
        name = _CHART_TERM[term]
        sizes[name] = sizes.get(name, 0.0) + size
    return MemoryTerms(**{f"{name}_bytes": size for name, size in sizes.items()})


def _iteration_moments(
    setup: StepSetup, iteration: int, moments_of: Callable[[StepSetup], tuple[Moment, ...]]
) -> list[tuple[str, int | None, str, dict[str, float]]]:
    first = replace(setup, first_step=iteration == 1)
    moments = moments_of(first)
    start = {
        k: v
        for k, v in moments[0].terms.items()
        if k in ("weights", "master_weights", "optimizer_state", "gradient_buckets")
    }
    return [("start", None, "start", start)] + [
        (_TIMELINE_PHASE[m.phase], m.block, m.what, dict(m.terms)) for m in moments
    ]


@lru_cache(maxsize=STEP_CACHE_SIZE)  # see STEP_CACHE_SIZE: settings in, nothing about a learner
def step_timeline(setup: StepSetup, *, capacity: Capacity) -> StepTimeline:
    """The first two iterations of `setup` on `capacity`, and where (if anywhere) it fails."""
    return _timeline(setup, capacity, step_moments)


def probe_timeline(setup: StepSetup, *, capacity: Capacity) -> StepTimeline:
    """`step_timeline` worked out afresh and kept nowhere: a search's many probes would otherwise push
    the steps the pages show (Run A's, warmed at start) out of the shared caches."""
    return _timeline(setup, capacity, step_moments.__wrapped__)


def _timeline(
    setup: StepSetup, capacity: Capacity, moments_of: Callable[[StepSetup], tuple[Moment, ...]]
) -> StepTimeline:
    points: list[TimelinePoint] = []
    for iteration in range(1, ITERATIONS + 1):
        moments = _iteration_moments(setup, iteration, moments_of)
        points += [
            TimelinePoint(
                iteration=iteration,
                phase=phase,
                block=block,
                position=iteration - 1 + i / len(moments),
                live=chart_terms(terms, overhead_bytes=capacity.overhead_bytes),
                what=what,
            )
            for i, (phase, block, what, terms) in enumerate(moments)
        ]
    limit_gb = capacity.total_bytes / BYTES_PER_GB
    failure = next((p for p in points if p.total_gb > limit_gb), None)
    return StepTimeline(setup=setup, capacity=capacity, points=tuple(points), failure=failure)
