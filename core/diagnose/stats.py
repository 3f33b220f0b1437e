"""Small robust statistics the detectors share: medians, spreads and a straight-line fit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count); ValueError when empty."""
    if not values:
        raise ValueError("A median needs at least one value.")
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


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
