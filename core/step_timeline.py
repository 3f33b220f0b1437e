"""One training step, moment by moment: when each term of the lesson's five-term budget is live.

`lesson_terms` says how big each term is; this module says when each one exists. A step is
sampled once per transformer block: forward saves each block's activations; backward takes its
workspace, then walks the blocks from last to first, creating that block's gradients and
releasing its activations; `optimizer.step()` creates the optimizer state on its first call
only. A run fails at the first moment whose live terms exceed the device. Iteration 2 stands
for every later one: the optimizer state stays, `zero_grad()` has freed the gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.datafiles import positive_number
from core.memory import MemoryTerms
from core.memory_lesson import LessonSetup, lesson_terms

PHASES = ("start", "forward", "backward", "step")
PHASE_LABELS = {
    "start": "Start",
    "forward": "Forward",
    "backward": "loss.backward()",
    "step": "optimizer.step()",
}
ITERATIONS = 2  # the first step, and the steady state every later step repeats


@dataclass(frozen=True)
class TimelinePoint:
    """One moment of a training step and the terms live at it."""

    iteration: int
    phase: str
    block: int | None  # the block being processed (1 = nearest the input); None outside the blocks
    position: float  # iterations since the start: 0.5 is halfway through the first step
    live: MemoryTerms

    @property
    def total_gb(self) -> float:
        """Memory in use at this moment."""
        return self.live.total_gb

    def where(self, layers: int) -> str:
        """This moment in words, as a training loop would locate it."""
        step = f"iteration {self.iteration}"
        if self.phase == "forward":
            return f"the forward pass of {step}, at block {self.block} of {layers}"
        if self.phase == "backward":
            return (
                f"`loss.backward()` of {step}, at block {self.block} of {layers} (backward starts from "
                "the last block)"
            )
        if self.phase == "step" and self.block is not None:
            return (
                "the first `optimizer.step()`, while it creates the optimizer state of block "
                f"{self.block} of {layers}"
            )
        if self.phase == "step":
            return f"`optimizer.step()` of {step}"
        return f"the start of {step}"


@dataclass(frozen=True)
class StepTimeline:
    """Every moment of the first two iterations as planned, and the first one the device cannot hold."""

    setup: LessonSetup
    device_gb: float
    points: tuple[TimelinePoint, ...]
    failure: TimelinePoint | None

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
        return max(p.total_gb for p in self.points if p.iteration == iteration and p.phase == phase)

    def iteration_peak_gb(self, iteration: int) -> float:
        """The most memory one iteration needs (as planned)."""
        return max(p.total_gb for p in self.points if p.iteration == iteration)

    def peak_point(self, *, iteration: int, phase: str) -> TimelinePoint:
        """The moment of a phase that needs the most memory (the first of equals)."""
        return max(
            (p for p in self.points if p.iteration == iteration and p.phase == phase),
            key=lambda p: p.total_gb,
        )


def _iteration(
    terms: MemoryTerms, *, layers: int, state_exists: bool
) -> list[tuple[str, int | None, MemoryTerms]]:
    """The moments of one iteration: (phase, block, live terms)."""
    share = {
        name: terms.term_bytes(name) / layers for name in ("activations", "gradients", "optimizer_state")
    }
    state = terms.optimizer_state_bytes if state_exists else 0.0
    base = MemoryTerms(parameters_bytes=terms.parameters_bytes, optimizer_state_bytes=state)
    moments: list[tuple[str, int | None, MemoryTerms]] = [("start", None, base)]
    moments += [
        ("forward", k, replace(base, activations_bytes=share["activations"] * k))
        for k in range(1, layers + 1)
    ]
    for done in range(
        1, layers + 1
    ):  # block `layers` first: its gradients appear while every activation is still held
        block = layers - done + 1
        moments.append(
            (
                "backward",
                block,
                replace(
                    base,
                    workspace_bytes=terms.workspace_bytes,
                    activations_bytes=share["activations"] * block,
                    gradients_bytes=share["gradients"] * done,
                ),
            )
        )
    after_backward = replace(
        base, workspace_bytes=terms.workspace_bytes, gradients_bytes=terms.gradients_bytes
    )
    if state_exists or terms.optimizer_state_bytes == 0:
        moments.append(
            ("step", None, replace(after_backward, optimizer_state_bytes=terms.optimizer_state_bytes))
        )
    else:  # lazy: the first step() creates the state block by block before it updates anything
        moments += [
            ("step", k, replace(after_backward, optimizer_state_bytes=share["optimizer_state"] * k))
            for k in range(1, layers + 1)
        ]
    return moments


def step_timeline(setup: LessonSetup, *, device_gb: float) -> StepTimeline:
    """The first two iterations of `setup` on a device of `device_gb`, and where (if anywhere) it fails."""
    device_gb = positive_number(device_gb, "Device memory (GB)")
    terms = lesson_terms(setup)
    points: list[TimelinePoint] = []
    for iteration in range(1, ITERATIONS + 1):
        moments = _iteration(terms, layers=setup.layers, state_exists=iteration > 1)
        points += [
            TimelinePoint(
                iteration=iteration,
                phase=phase,
                block=block,
                position=iteration - 1 + i / len(moments),
                live=live,
            )
            for i, (phase, block, live) in enumerate(moments)
        ]
    failure = next((p for p in points if p.total_gb > device_gb), None)
    return StepTimeline(setup=setup, device_gb=device_gb, points=tuple(points), failure=failure)
