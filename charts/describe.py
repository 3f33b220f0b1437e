"""Chart descriptions for a screen reader: what a chart shows and its key figures, worked out from the
rows the chart draws. The sentences are lesson text (data/lessons/charts/sentences.toml)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from core import lessons


def figure(value: float) -> str:
    """A value as a chart's reader hears it: whole numbers with separators from 100 up to ten million,
    else three significant figures ("41.7", "0.0123", "1,536", "7.12e+23")."""
    if 100 <= abs(value) < 1e7:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def line(
    name: str, xs: Sequence[float], ys: Sequence[float], *, at: Callable[[float], str], unit: str = ""
) -> str:
    """One line of a line chart in a sentence: its first and last points and its highest, finite values
    only (a chart draws no nan or inf). `at(x)` says where an x value falls ("at step 2,000"); `unit`
    follows each value as written ("", " GB", "%")."""
    points = [(x, y) for x, y in zip(xs, ys, strict=True) if math.isfinite(x) and math.isfinite(y)]
    if not points:
        return lessons.sentence("charts", "no_line", name=name)
    (first_x, first), (last_x, last) = points[0], points[-1]
    peak_x, peak = max(points, key=lambda point: point[1])
    return lessons.sentence(
        "charts",
        "line",
        name=name,
        first=figure(first) + unit,
        first_at=at(first_x),
        last=figure(last) + unit,
        last_at=at(last_x),
        peak=figure(peak) + unit,
        peak_at=at(peak_x),
    )
