"""Where a run first dies out of memory: the step and phase of the first moment of `core.memory.timeline`
whose memory, as the caching allocator would have reserved it, passes the line.

Step 1 is not the steady state: Adam's state does not exist until its first `optimizer.step()`
allocates it, so a run can pass forward and backward and die inside that step. Step 2 starts with the
state resident (`zero_grad(set_to_none=True)` has freed the gradients) and can fail in a forward that
step 1 passed. Later steps repeat step 2, so two steps say whether a run goes on.

What is compared with the line, moment by moment (`core.memory.verdict.Capacity`): the tensors live
then (the phase model, its steady-step peaks unchanged), plus the allocator's reserve (reserved but
unallocated: the cap counts what is reserved, `core.memory.allocator`), against a cap, or against a
card's memory less the CUDA context outside PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.memory.setup import StepSetup
from core.memory.timeline import StepTimeline, TimelinePoint, step_timeline
from core.memory.verdict import Capacity

PHASES = ("forward", "backward", "optimizer_step")
PHASE_WORDS = {
    "forward": "the forward pass",
    "backward": "loss.backward()",
    "optimizer_step": "optimizer.step()",
}
# A run that cannot even hold its weights and state at the start fails before step 1's forward runs;
# the contract names no earlier phase, so that failure is step 1's forward.
_FROM_TIMELINE = {"start": "forward", "forward": "forward", "backward": "backward", "step": "optimizer_step"}


@dataclass(frozen=True)
class FirstOom:
    """The first moment a run cannot hold: its step (1 or 2), phase, and the memory it needed then."""

    step: int
    phase: str
    what: str
    needed_bytes: float  # tensors live then, plus the allocator's reserve and (a whole card) the context
    limit_bytes: int

    @property
    def where(self) -> str:
        """The failure in a few words: "loss.backward() of step 1"."""
        return f"{PHASE_WORDS[self.phase]} of step {self.step}"

    def as_json(self) -> dict[str, Any]:
        """The CLI's contract: step and phase."""
        return {"step": self.step, "phase": self.phase}


def _first_oom(point: TimelinePoint, capacity: Capacity) -> FirstOom:
    return FirstOom(
        step=point.iteration,
        phase=_FROM_TIMELINE[point.phase],
        what=point.what,
        needed_bytes=point.live.total_bytes,
        limit_bytes=capacity.total_bytes,
    )


def first_oom(setup: StepSetup, capacity: Capacity) -> FirstOom | None:
    """Where `setup` first fails on `capacity` in its first two steps, or None if both complete."""
    failure = step_timeline(setup, capacity=capacity).failure
    return None if failure is None else _first_oom(failure, capacity)


def step_peaks(setup: StepSetup, capacity: Capacity) -> dict[tuple[int, str], float]:
    """The most each phase of steps 1 and 2 needs (bytes, the allocator's reserve and context included), as
    planned: the failure moment and those after it included, so a chart can show how far over they go."""
    timeline: StepTimeline = step_timeline(setup, capacity=capacity)
    return {
        (step, _FROM_TIMELINE[phase]): timeline.peak_point(iteration=step, phase=phase).live.total_bytes
        for step in (1, 2)
        for phase in ("forward", "backward", "step")
    }
