"""The learning rate beside the gradient norm: a jump in the rate that the gradients answer by growing.

A schedule that multiplies the rate several times in one logged step (a warm-up restarted, a
mistyped milestone, a resumed run with the wrong scale) and a gradient norm that grows in the
steps right after it point at the rate itself, whatever the gradients reach later.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.diagnose.columns import Series
from core.diagnose.stats import finite_points, median

LR_JUMP_RATIO = 5.0  # the rate multiplied at least fivefold from one logged value to the next
GRAD_GROWTH_RATIO = 2.0  # the gradient norm's median after the jump at least double its median before
GRAD_WINDOW = 20  # logged gradient norms compared on each side of the jump
MIN_GRAD_POINTS = 3  # fewer on either side say nothing


@dataclass(frozen=True)
class RateJump:
    """The rate's largest jump, and the gradient norm's median in the windows before and after it."""

    step: float
    rate_before: float
    rate_after: float
    grad_before: float
    grad_after: float
    window: int

    @property
    def ratio(self) -> float:
        """How many times the rate was multiplied."""
        return self.rate_after / self.rate_before


def largest_rate_jump(rate: Series) -> tuple[float, float, float] | None:
    """(step, rate before, rate after) of the largest rise by `LR_JUMP_RATIO` or more, else None.

    A rate rising from zero (the first step of a warm-up) has no ratio and is not a jump.
    """
    steps, values = finite_points(rate.steps, rate.values)
    rises = [
        (values[i] / values[i - 1], steps[i], values[i - 1], values[i])
        for i in range(1, len(values))
        if values[i - 1] > 0 and values[i] >= LR_JUMP_RATIO * values[i - 1]
    ]
    if not rises:
        return None
    _, step, before, after = max(rises)
    return step, before, after


def rate_jump_grows_gradients(rate: Series, grad: Series) -> RateJump | None:
    """The rate's largest jump when the gradient norm's median at least doubled right after it, else None."""
    jump = largest_rate_jump(rate)
    if jump is None:
        return None
    step, rate_before, rate_after = jump
    steps, values = finite_points(grad.steps, grad.values)
    before = [v for s, v in zip(steps, values, strict=True) if s < step][-GRAD_WINDOW:]
    after = [v for s, v in zip(steps, values, strict=True) if s >= step][:GRAD_WINDOW]
    window = min(len(before), len(after))
    if window < MIN_GRAD_POINTS:
        return None
    grad_before, grad_after = median(before[-window:]), median(after[:window])
    if grad_before <= 0 or grad_after < GRAD_GROWTH_RATIO * grad_before:
        return None
    return RateJump(step, rate_before, rate_after, grad_before, grad_after, window)
