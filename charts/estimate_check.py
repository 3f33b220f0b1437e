"""A chart of the detailed estimate against PyTorch's measured bytes, one row per memory term.

Bytes run from a few dozen (Adam's step counters) to megabytes (optimizer state), so the axis is
logarithmic; a term PyTorch or the estimate puts at zero bytes has no point on that side.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from charts.memory import term_colour_scale
from core.estimate_check.compare import EstimateCheck
from core.memory import TERM_LABELS, TERMS

SOURCES = ("Estimate", "PyTorch")
SOURCE_SHAPES = ("circle", "diamond")
SOURCE_SIZES = (360, 110)
SOURCE_OPACITIES = (0.45, 1.0)
GAP_COLOUR = "#8c8c8c"


def source_scale(values: tuple) -> alt.Scale:
    """A scale giving the estimate and PyTorch one of two `values` each (shape, size or opacity)."""
    return alt.Scale(domain=list(SOURCES), range=list(values))


def check_frame(check: EstimateCheck) -> pd.DataFrame:
    """One row per term and source with bytes above zero (a log axis cannot place zero).

    PyTorch's row comes after the estimate's, so its point draws on top.
    """
    rows = [
        {
            "term": row.label,
            "budget_term": TERM_LABELS[row.budget_term],
            "source": source,
            "bytes": value,
            "error": row.error_text,
        }
        for row in check.rows
        for source, value in zip(SOURCES, (row.estimate_bytes, row.measured_bytes), strict=True)
        if value > 0
    ]
    return pd.DataFrame(rows, columns=["term", "budget_term", "source", "bytes", "error"])


def gap_frame(check: EstimateCheck) -> pd.DataFrame:
    """One row per term where both sides are above zero and differ: the segment between them."""
    rows = [
        {
            "term": row.label,
            "low": min(row.estimate_bytes, row.measured_bytes),
            "high": max(row.estimate_bytes, row.measured_bytes),
            "estimate": row.estimate_bytes,
            "measured": row.measured_bytes,
            "error": row.error_text,
        }
        for row in check.rows
        if row.estimate_bytes > 0 and row.measured_bytes > 0 and row.gap_bytes != 0
    ]
    return pd.DataFrame(rows, columns=["term", "low", "high", "estimate", "measured", "error"])


def estimate_check_chart(check: EstimateCheck, *, title: str) -> alt.LayerChart:
    """Estimate and measured bytes per term as two marks on a log axis, joined where they differ."""
    order = [row.label for row in check.rows]
    present = [term for term in TERMS if term in {row.budget_term for row in check.rows}]
    y = alt.Y("term:N", title=None, sort=order, axis=alt.Axis(labelLimit=260))
    x_scale = alt.Scale(type="log")
    source_legend = alt.Legend(orient="top", columns=1)  # one row is cut off on a phone
    gaps = (
        alt.Chart(gap_frame(check))
        .mark_rule(color=GAP_COLOUR, strokeWidth=3)
        .encode(
            x=alt.X("low:Q", scale=x_scale),
            x2=alt.X2("high:Q"),
            y=y,
            tooltip=[
                alt.Tooltip("term:N", title="Term"),
                alt.Tooltip("estimate:Q", title="Estimate (bytes)", format=","),
                alt.Tooltip("measured:Q", title="PyTorch (bytes)", format=","),
                alt.Tooltip("error:N", title="Relative error"),
            ],
        )
    )
    points = (
        alt.Chart(check_frame(check))
        .mark_point(filled=True)
        .encode(
            x=alt.X(
                "bytes:Q", scale=x_scale, title="Bytes (log scale)", axis=alt.Axis(tickCount=6, format="~s")
            ),
            y=y,
            color=alt.Color(
                "budget_term:N",
                title="Budget term",
                scale=term_colour_scale(present),
                legend=alt.Legend(orient="bottom", columns=1),
            ),
            # A wide pale estimate under a small solid measurement: an exact match still shows both.
            # The three channels share one field and title, so Vega-Lite draws them as one legend.
            shape=alt.Shape(
                "source:N", title="Source", scale=source_scale(SOURCE_SHAPES), legend=source_legend
            ),
            size=alt.Size("source:N", title="Source", scale=source_scale(SOURCE_SIZES), legend=source_legend),
            opacity=alt.Opacity(
                "source:N", title="Source", scale=source_scale(SOURCE_OPACITIES), legend=source_legend
            ),
            tooltip=[
                alt.Tooltip("term:N", title="Term"),
                alt.Tooltip("source:N", title="Source"),
                alt.Tooltip("bytes:Q", title="Bytes", format=","),
                alt.Tooltip("error:N", title="Relative error"),
            ],
        )
    )
    return alt.LayerChart(layer=[gaps, points]).properties(title=title, height=alt.Step(40))
