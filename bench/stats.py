"""Summary statistics for latency samples: percentiles and a compact summary record."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


def percentile(samples: Sequence[float], pct: float) -> float:
    """The `pct`-th percentile (0-100) with linear interpolation between closest ranks.

    Same definition as numpy's default ("linear"): rank = pct/100 * (n - 1).
    """
    if not samples:
        raise ValueError("A percentile needs at least one sample.")
    if not 0 <= pct <= 100:
        raise ValueError(f"A percentile must lie between 0 and 100, not {pct}.")
    ordered = sorted(samples)
    rank = pct / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class LatencySummary:
    """Count, mean and tail percentiles of one latency series, in milliseconds."""

    count: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        """Plain dict for JSON output."""
        return asdict(self)


def summarise(samples_ms: Sequence[float]) -> LatencySummary:
    """Summarise a latency series; an empty series gives a count of 0 and no figures."""
    if not samples_ms:
        return LatencySummary(0, None, None, None, None, None)
    return LatencySummary(
        count=len(samples_ms),
        mean_ms=sum(samples_ms) / len(samples_ms),
        p50_ms=percentile(samples_ms, 50),
        p95_ms=percentile(samples_ms, 95),
        p99_ms=percentile(samples_ms, 99),
        max_ms=max(samples_ms),
    )


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, or None when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def least_squares_slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Slope of the least-squares line through (xs, ys); None with fewer than two distinct xs."""
    if len(xs) != len(ys):
        raise ValueError("The two series must have the same length.")
    if len(set(xs)) < 2:
        return None
    mean_x = sum(xs) / len(xs)
    mean_y = sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def save_figures(figures: Any, path: Path | None) -> None:
    """Write a run's figures (a dataclass, summaries nested) to `path` as JSON; nothing without a path."""
    if path is not None:
        path.write_text(json.dumps(asdict(figures), indent=2) + "\n")
