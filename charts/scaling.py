"""Charts of the Scaling out lab: efficiency, exposed overhead, the bubble, time to target.

Part B's memory per GPU uses `charts.memory.budget_chart`, so memory terms keep their colours.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from charts.describe import figure
from charts.memory import DEVICE_COLOUR, TOTAL_COLOUR
from core import lessons

HEIGHT = 280
MODE_COLOURS = ("#4a78b5", "#e8710a")
OVERHEAD_COLOURS = {
    "DP communication": "#4a78b5",
    "TP communication": "#e8710a",
    "Pipeline bubble": "#7f8c8d",
}
POLICY_COLOURS = ("#4a78b5", "#e8710a")
BUBBLE_COLOUR = "#4a78b5"

Rows = Sequence[dict[str, object]]


def _tooltips(frame: pd.DataFrame, formats: dict[str, str]) -> list[alt.Tooltip]:
    return [
        alt.Tooltip(column, format=formats[column]) if column in formats else alt.Tooltip(column)
        for column in frame.columns
    ]


def efficiency_chart(rows: Rows) -> alt.LayerChart:
    """Parallel efficiency against workers, one line per scaling mode, with ideal scaling at 1."""
    frame = pd.DataFrame(rows)
    modes = list(dict.fromkeys(frame["Mode"]))
    workers = sorted({int(w) for w in frame["Workers"]})  # ticks at the pools themselves, not 10, 15, 20
    lines = (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(size=70, filled=True))
        .encode(
            x=alt.X(
                "Workers:Q",
                title="GPUs in the pool (log scale)",
                scale=alt.Scale(type="log", base=2, domain=[workers[0], workers[-1]]),
                axis=alt.Axis(values=workers, format="d"),
            ),
            y=alt.Y(
                "Parallel efficiency:Q",
                title="Parallel efficiency (1 = ideal)",
                scale=alt.Scale(domain=[0, 1.05]),
            ),
            color=alt.Color(
                "Mode:N",
                scale=alt.Scale(domain=modes, range=list(MODE_COLOURS[: len(modes)])),
                legend=alt.Legend(orient="bottom", columns=1),  # one row is cut off on a phone
            ),
            tooltip=_tooltips(
                frame,
                {
                    "Local batch": ",.2~f",  # a count: 32, not 32.00
                    "Global batch": ",.0f",
                    "Compute (ms)": ",.4f",
                    "Communication (ms)": ",.4f",
                    "Step (ms)": ",.4f",
                    "Speedup (x)": ",.2f",
                    "Parallel efficiency": ".3f",
                },
            ),
        )
    )
    ideal = (
        alt.Chart(pd.DataFrame({"Parallel efficiency": [1.0], "Line": ["ideal scaling"]}))
        .mark_rule(color="#9aa0a6", strokeDash=[6, 4])
        .encode(
            y=alt.Y("Parallel efficiency:Q"),
            tooltip=[alt.Tooltip("Line:N"), alt.Tooltip("Parallel efficiency:Q")],
        )
    )
    return alt.LayerChart(layer=[lines, ideal]).properties(
        title=alt.Title("Parallel efficiency as the pool grows", subtitle="1 = every added GPU pays in full"),
        height=HEIGHT,
    )


def _hbm_rule(hbm_gb: float, field: str = "Memory (GB)") -> alt.Chart:
    return (
        alt.Chart(pd.DataFrame({field: [hbm_gb], "Line": ["HBM on one GPU"]}))
        .mark_rule(color=DEVICE_COLOUR, strokeDash=[6, 4], strokeWidth=2)
        .encode(
            y=alt.Y(f"{field}:Q"), tooltip=[alt.Tooltip("Line:N"), alt.Tooltip(f"{field}:Q", format=",.0f")]
        )
    )


def overhead_chart(rows: Rows) -> alt.LayerChart:
    """Exposed overhead per layout as horizontal stacked bars (DP and TP communication, the pipeline
    bubble), each bar labelled with its total so a short one still reads."""
    frame = pd.DataFrame(rows)
    kinds = list(OVERHEAD_COLOURS)
    layouts = list(dict.fromkeys(frame["Layout"]))
    y = alt.Y("Layout:N", title=None, sort=layouts, axis=alt.Axis(labelLimit=260))
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("Time (ms):Q", title="Exposed overhead per step (ms)", stack="zero"),
            color=alt.Color(
                "Overhead:N",
                scale=alt.Scale(domain=kinds, range=[OVERHEAD_COLOURS[k] for k in kinds]),
                legend=alt.Legend(orient="bottom", columns=1),  # one row is cut off on a phone
            ),
            tooltip=_tooltips(frame, {"Time (ms)": ",.1f", "Step (ms)": ",.1f"}),
        )
    )
    totals = (
        alt.Chart(frame)
        .transform_aggregate(total="sum(Time (ms))", groupby=["Layout"])
        .transform_calculate(label="format(datum.total, ',.1f') + ' ms'")
        .mark_text(align="left", dx=4)
        .encode(
            y=y,
            x=alt.X("total:Q"),
            text=alt.Text("label:N"),
            tooltip=[alt.Tooltip("Layout:N"), alt.Tooltip("label:N", title="Total")],
        )
    )
    return alt.LayerChart(layer=[bars, totals]).properties(
        title="Time added on top of compute, per step", height=alt.Step(48)
    )


def pipeline_chart(rows: Rows, *, hbm_gb: float) -> alt.LayerChart:
    """Over the micro-batch count: the bubble fraction (left axis) and the worst stage's memory against HBM
    (right axis), in one panel so it narrows with the screen instead of running off it."""
    frame = pd.DataFrame(rows)
    x = alt.X("Micro-batches:Q", title="Micro-batches per step")
    tooltip = _tooltips(
        frame, {"Bubble fraction": ".3f", "Retained activations (GB)": ",.1f", "Memory (GB)": ",.1f"}
    )
    base = alt.Chart(frame)
    bubble = base.mark_line(
        color=BUBBLE_COLOUR, point=alt.OverlayMarkDef(size=60, filled=True, color=BUBBLE_COLOUR)
    ).encode(
        x=x,
        y=alt.Y(
            "Bubble fraction:Q",
            title="Bubble fraction (idle share)",
            scale=alt.Scale(domain=[0, 1]),
            axis=alt.Axis(titleColor=BUBBLE_COLOUR, orient="left"),
        ),
        tooltip=tooltip,
    )
    memory = base.mark_line(
        color=TOTAL_COLOUR, point=alt.OverlayMarkDef(size=60, filled=True, color=TOTAL_COLOUR)
    ).encode(
        x=x,
        y=alt.Y(
            "Memory (GB):Q",
            title="Worst stage's memory per GPU (GB)",
            axis=alt.Axis(titleColor=TOTAL_COLOUR, orient="right"),
        ),
        tooltip=tooltip,
    )
    return (
        alt.layer(bubble, alt.layer(memory, _hbm_rule(hbm_gb)))
        .resolve_scale(y="independent")
        .properties(
            title=alt.Title(
                "More micro-batches of a fixed size",
                subtitle="The bubble shrinks (left axis); the worst stage holds more (right axis)",
            ),
            height=HEIGHT,
            # Room for the right axis's rotated title, whose glyphs Vega measures a few pixels short.
            padding={"left": 5, "top": 5, "bottom": 5, "right": 10},
        )
    )


def time_to_target_chart(rows: Rows) -> alt.Chart:
    """Time to the same quality target under each straggler policy, in the rows' unit (illustrative)."""
    frame = pd.DataFrame(rows)
    policies = list(frame["Policy"])
    unit = str(frame["Unit"].iloc[0])
    return (
        alt.Chart(
            frame,
            title="Time to the same target (illustrative assumptions)",
            height=HEIGHT * 2 // 3,
        )
        .mark_bar()
        .encode(
            x=alt.X("Time to target:Q", title=f"Time to target ({unit})"),
            y=alt.Y("Policy:N", title=None, sort=policies),
            color=alt.Color(
                "Policy:N",
                scale=alt.Scale(domain=policies, range=list(POLICY_COLOURS[: len(policies)])),
                legend=None,
            ),
            tooltip=_tooltips(
                frame,
                {
                    "Global batch": ",.0f",
                    "Step": ",.3r",  # three significant figures as the table: 3.30, never 3.3 or 3.29e+3
                    "Steps to target": ",.0f",
                    "Time to target": ",.3r",
                },
            ),
        )
    )


def efficiency_description(rows: Rows) -> str:
    """What `efficiency_chart` shows, for a screen reader: each mode's efficiency on the smallest and the
    largest pool, from the rows the chart draws."""
    frame = pd.DataFrame(rows).sort_values("Workers")
    modes = []
    for mode, points in frame.groupby("Mode", sort=False):
        first, last = points.iloc[0], points.iloc[-1]
        modes.append(
            lessons.sentence(
                "charts",
                "efficiency_mode",
                mode=mode,
                first=float(first["Parallel efficiency"]),
                first_workers=int(first["Workers"]),
                last=float(last["Parallel efficiency"]),
                last_workers=int(last["Workers"]),
            )
        )
    return lessons.sentence("charts", "efficiency", modes="; ".join(modes))


def overhead_description(rows: Rows) -> str:
    """What `overhead_chart` shows, for a screen reader: each layout's total exposed overhead and its
    largest part."""
    frame = pd.DataFrame(rows)
    layouts = []
    for name, parts in frame.groupby("Layout", sort=False):
        largest = parts.sort_values("Time (ms)").iloc[-1]
        layouts.append(
            lessons.sentence(
                "charts",
                "overhead_layout",
                layout=name,
                total_ms=float(parts["Time (ms)"].sum()),
                largest=str(largest["Overhead"]),
                largest_ms=float(largest["Time (ms)"]),
            )
        )
    return lessons.sentence("charts", "overhead", layouts="; ".join(layouts))


def pipeline_description(rows: Rows, *, hbm_gb: float) -> str:
    """What `pipeline_chart` shows, for a screen reader: the bubble and the worst stage's memory at the
    fewest and the most micro-batches, against HBM."""
    frame = pd.DataFrame(rows).sort_values("Micro-batches")
    first, last = frame.iloc[0], frame.iloc[-1]
    return lessons.sentence(
        "charts",
        "pipeline",
        first=int(first["Micro-batches"]),
        last=int(last["Micro-batches"]),
        first_bubble=float(first["Bubble fraction"]),
        last_bubble=float(last["Bubble fraction"]),
        first_gb=float(first["Memory (GB)"]),
        last_gb=float(last["Memory (GB)"]),
        hbm_gb=hbm_gb,
    )


def time_to_target_description(rows: Rows) -> str:
    """What `time_to_target_chart` shows, for a screen reader: each policy's time to the target."""
    policies = "; ".join(
        lessons.sentence(
            "charts",
            "time_to_target_policy",
            policy=row["Policy"],
            time=figure(float(str(row["Time to target"]))),
            unit=row["Unit"],
        )
        for row in rows
    )
    return lessons.sentence("charts", "time_to_target", policies=policies)
