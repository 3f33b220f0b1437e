"""Charts of training-memory budgets: the split into terms, and peak memory as a setting grows.

`TERM_COLOURS` is the one place a memory term gets its colour; every chart of memory terms in
the app (budget, Run A timeline, scaling lab) colours them from it, so a term looks the same
everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from core.memory import TERM_LABELS, TERMS, MemorySweep, MemoryTerms

TERM_COLOURS = {
    "parameters": "#4c78a8",
    "gradients": "#72b7b2",
    "master_weights": "#b279a2",
    "optimizer_state": "#f58518",
    "activations": "#e45756",
    "communication_buffers": "#54a24b",
    "workspace": "#9d9d9d",
    "runtime_overhead": "#bab0ac",
}
DEVICE_COLOUR = "#8c8c8c"
TOTAL_COLOUR = "#17becf"
FAILURE_COLOUR = "#d62728"


def term_colour_scale(terms: Sequence[str] = TERMS) -> alt.Scale:
    """A colour scale over the labels of `terms`, each in its fixed colour."""
    return alt.Scale(domain=[TERM_LABELS[t] for t in terms], range=[TERM_COLOURS[t] for t in terms])


def budget_frame(bars: Sequence[tuple[str, MemoryTerms]]) -> pd.DataFrame:
    """One row per bar and non-zero term: GB, share of that bar's total and stacking order."""
    rows = [
        {"bar": name, "term": share.term, "label": share.label, "gb": share.gb,
         "share_percent": share.share_percent, "order": TERMS.index(share.term)}
        for name, terms in bars
        for share in terms.shares()
    ]
    return pd.DataFrame(rows, columns=["bar", "term", "label", "gb", "share_percent", "order"])


def _device_marks(device_gb: float, device_label: str, channel: str) -> tuple[alt.Chart, alt.Chart]:
    """A dashed line at the device's memory and its label, at the top (vertical line) or the left (horizontal)."""
    line = pd.DataFrame({"gb": [device_gb], "label": [device_label]})
    tooltip = [alt.Tooltip("label:N", title="Device"), alt.Tooltip("gb:Q", title="Memory (GB)", format=".1f")]
    if channel == "x":
        # Above the plot, where a bar running past the line cannot hide it.
        at_line, label_place, offsets = {"x": alt.X("gb:Q")}, {"y": alt.value(0)}, {"dx": 4, "dy": -4, "baseline": "bottom"}
    else:
        at_line, label_place, offsets = {"y": alt.Y("gb:Q")}, {"x": alt.value(4)}, {"dy": -6}
    rule = alt.Chart(line).mark_rule(color=DEVICE_COLOUR, strokeDash=[6, 4], strokeWidth=2).encode(**at_line, tooltip=tooltip)
    text = (
        alt.Chart(line)
        .mark_text(color=DEVICE_COLOUR, align="left", fontWeight="bold", **offsets)
        .encode(**at_line, **label_place, text="label:N", tooltip=tooltip)
    )
    return rule, text


def budget_chart(bars: Sequence[tuple[str, MemoryTerms]], *, device_gb: float, device_label: str, title: str) -> alt.LayerChart:
    """Stacked horizontal bars of the terms, one bar per budget, with the device's memory as a rule."""
    frame = budget_frame(bars)
    present = [t for t in TERMS if t in set(frame["term"])]
    stacked = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("gb:Q", stack="zero", title="Memory (GB)"),
            y=alt.Y("bar:N", title=None, sort=[name for name, _ in bars], axis=alt.Axis(labelLimit=240)),
            color=alt.Color("label:N", title="Term", scale=term_colour_scale(present), sort=[TERM_LABELS[t] for t in present],
                            legend=alt.Legend(orient="bottom", columns=4)),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("label:N", title="Term"),
                alt.Tooltip("gb:Q", title="Memory (GB)", format=".2f"),
                alt.Tooltip("share_percent:Q", title="Share of total (%)", format=".0f"),
            ],
        )
    )
    # A height per bar (a step): Streamlit draws band-scale bars with a fixed pixel height as slivers.
    return alt.layer(stacked, *_device_marks(device_gb, device_label, "x")).properties(title=title, height=alt.Step(56))


def sweep_frame(sweep: MemorySweep) -> pd.DataFrame:
    """One row per swept value: the peak in GB and whether it fits."""
    return pd.DataFrame({
        "value": sweep.values,
        "total_gb": sweep.total_gb,
        "fits": ["fits" if ok else "out of memory" for ok in sweep.fits],
    })


def sweep_chart(sweep: MemorySweep, *, device_label: str, title: str) -> alt.LayerChart:
    """Peak memory against the swept setting, the device as a rule and the first value that fails marked."""
    frame = sweep_frame(sweep)
    tooltip = [
        alt.Tooltip("value:Q", title=sweep.axis_label, format=","),
        alt.Tooltip("total_gb:Q", title="Peak memory (GB)", format=".1f"),
        alt.Tooltip("fits:N", title="Outcome"),
    ]
    line = (
        alt.Chart(frame)
        .mark_line(color=TOTAL_COLOUR, point=alt.OverlayMarkDef(color=TOTAL_COLOUR, size=30))
        .encode(x=alt.X("value:Q", title=sweep.axis_label), y=alt.Y("total_gb:Q", title="Peak memory (GB)"), tooltip=tooltip)
    )
    layers = [line, *_device_marks(sweep.device_gb, device_label, "y")]
    if sweep.first_failing is not None:
        failing = frame[frame["value"] == sweep.first_failing].assign(note="first value that does not fit")
        marker = (
            alt.Chart(failing)
            .mark_point(shape="cross", size=220, filled=True, color=FAILURE_COLOUR)
            .encode(x="value:Q", y="total_gb:Q", tooltip=[alt.Tooltip("note:N", title="Breaking point"), *tooltip])
        )
        layers.append(marker)
    return alt.layer(*layers).properties(title=title, height=280)
