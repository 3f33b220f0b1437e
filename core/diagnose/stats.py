"""Small robust statistics the detectors share: medians, spreads and a straight-line fit."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count); ValueError when empty."""
    if not values:
        raise ValueError("A median needs at least one value.")
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class _WindowMedian:
    """The median of a sliding window: a max-heap of the lower half and a min-heap of the upper half.

    A value that leaves the window is only counted in `leaving` and dropped when it reaches a heap's
    top, so each step costs O(log n) instead of re-sorting the window.
    """

    def __init__(self) -> None:
        self.low: list[float] = []  # the lower half, negated: heapq keeps a min-heap
        self.high: list[float] = []
        self.low_size = 0  # values in each half still in the window
        self.high_size = 0
        self.leaving: Counter[float] = Counter()

    def _prune(self, heap: list[float], sign: float) -> None:
        while heap and self.leaving[sign * heap[0]]:
            self.leaving[sign * heap[0]] -= 1
            heapq.heappop(heap)

    def _balance(self) -> None:
        if self.low_size > self.high_size + 1:
            heapq.heappush(self.high, -heapq.heappop(self.low))
            self.low_size, self.high_size = self.low_size - 1, self.high_size + 1
            self._prune(self.low, -1.0)
        elif self.low_size < self.high_size:
            heapq.heappush(self.low, -heapq.heappop(self.high))
            self.low_size, self.high_size = self.low_size + 1, self.high_size - 1
            self._prune(self.high, 1.0)

    def add(self, value: float) -> None:
        if not self.low or value <= -self.low[0]:
            heapq.heappush(self.low, -value)
            self.low_size += 1
        else:
            heapq.heappush(self.high, value)
            self.high_size += 1
        self._balance()

    def remove(self, value: float) -> None:
        self.leaving[value] += 1
        # Every value in the lower half is at most its top, every one in the upper half at least it.
        if value <= -self.low[0]:
            self.low_size -= 1
            if value == -self.low[0]:
                self._prune(self.low, -1.0)
        else:
            self.high_size -= 1
            if value == self.high[0]:
                self._prune(self.high, 1.0)
        self._balance()

    def median(self) -> float:
        if (self.low_size + self.high_size) % 2:
            return -self.low[0]
        return (-self.low[0] + self.high[0]) / 2


def rolling_median(values: Sequence[float], width: int) -> list[float]:
    """For each index i, the median of the (up to) `width` values ending at i: O(n log n), not O(n·width)."""
    if width < 1:
        raise ValueError("A rolling median needs a window of at least one value.")
    window = _WindowMedian()
    out = []
    for i, value in enumerate(values):
        window.add(value)
        if i >= width:
            window.remove(values[i - width])
        out.append(window.median())
    return out


def mad(values: Sequence[float]) -> float:
    """Median absolute deviation from the median: a spread that a few wild values do not move."""
    centre = median(values)
    return median([abs(v - centre) for v in values])


@dataclass(frozen=True)
class LineFit:
    """A least-squares line through points: slope per step, value at the first and last step, and R²."""

    slope: float
    start_value: float
    end_value: float
    r_squared: float


def line_fit(steps: Sequence[float], values: Sequence[float]) -> LineFit:
    """The least-squares line through (step, value); R² is 0 when the values do not vary along the line."""
    if len(steps) != len(values) or len(steps) < 2:
        raise ValueError("A line fit needs at least two points, as many steps as values.")
    mean_x = sum(steps) / len(steps)
    mean_y = sum(values) / len(values)
    sxx = sum((x - mean_x) ** 2 for x in steps)
    if sxx == 0:
        raise ValueError("A line fit needs points at more than one step.")
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(steps, values, strict=True))
    slope = sxy / sxx
    syy = sum((y - mean_y) ** 2 for y in values)
    r_squared = (sxy * sxy) / (sxx * syy) if syy > 0 else 0.0
    intercept = mean_y - slope * mean_x
    return LineFit(
        slope=slope,
        start_value=intercept + slope * steps[0],
        end_value=intercept + slope * steps[-1],
        r_squared=r_squared,
    )


def finite_points(steps: Sequence[float], values: Sequence[float]) -> tuple[list[float], list[float]]:
    """The points whose value is a finite number, as two lists."""
    kept = [(s, v) for s, v in zip(steps, values, strict=True) if math.isfinite(v)]
    return [s for s, _ in kept], [v for _, v in kept]
