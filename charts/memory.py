"""Charts of training-memory budgets: the split into terms, and peak memory as a setting grows.

`TERM_COLOURS` is the one place a memory term gets its colour; every chart of memory terms in
the app (budget, Run A timeline, scaling lab) colours them from it, so a term looks the same
everywhere.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any, Literal

import altair as alt

from charts.describe import figure
from core import lessons
from core.datafiles import require
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
GUESS_COLOUR = "#9467bd"
# A title line a 390 px phone shows whole (Vega sets titles in 13 px bold, about 7.5 px a character).
TITLE_LINE_CHARS = 34
DEVICE_DATA = alt.NamedData(name="device")


def term_colour_scale(terms: Sequence[str] = TERMS) -> alt.Scale:
    """A colour scale over the labels of `terms`, each in its fixed colour."""
    return alt.Scale(domain=[TERM_LABELS[t] for t in terms], range=[TERM_COLOURS[t] for t in terms])


def _term_rows(bars: Sequence[tuple[str, MemoryTerms]]) -> list[dict]:
    return [
        {
            "bar": name,
            "term": share.term,
            "label": share.label,
            "gb": share.gb,
            "share_percent": share.share_percent,
            "order": TERMS.index(share.term),
        }
        for name, terms in bars
        for share in terms.shares()
    ]


def device_rows(device_gb: float, device_label: str) -> list[dict]:
    """The one row `device_marks` draws: the device's memory (GB) and its name."""
    return [{"gb": device_gb, "label": device_label}]


def device_marks(
    channel: str, device: alt.NamedData | alt.InlineData = DEVICE_DATA
) -> tuple[alt.Chart, alt.Chart]:
    """A dashed line at the device's memory and its label (rows as `device_rows` makes them), at the top
    (vertical line, `channel` "x") or the left (horizontal, "y")."""
    tooltip = [alt.Tooltip("label:N", title="Device"), alt.Tooltip("gb:Q", title="Memory (GB)", format=".1f")]
    at_line: dict[str, Any]
    label_place: dict[str, Any]
    offsets: dict[str, Any]
    if channel == "x":
        # Above the plot, where a bar running past the line cannot hide it.
        at_line, label_place, offsets = (
            {"x": alt.X("gb:Q")},
            {"y": alt.YValue(0)},
            {"dx": 4, "dy": -4, "baseline": "bottom"},
        )
    else:
        at_line, label_place, offsets = {"y": alt.Y("gb:Q")}, {"x": alt.XValue(4)}, {"dy": -6}
    rule = (
        alt.Chart(device)
        .mark_rule(color=DEVICE_COLOUR, strokeDash=[6, 4], strokeWidth=2)
        .encode(**at_line, tooltip=tooltip)
    )
    text = (
        alt.Chart(device)
        .mark_text(color=DEVICE_COLOUR, align="left", fontWeight="bold", **offsets)
        .encode(**at_line, **label_place, text=alt.Text("label:N"), tooltip=tooltip)
    )
    return rule, text


def budget_shape(bars: Sequence[tuple[str, MemoryTerms]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the budget chart's layout depends on: the bars' names and the terms present in any of them."""
    present = {share.term for _, terms in bars for share in terms.shares()}
    return tuple(name for name, _ in bars), tuple(t for t in TERMS if t in present)


def budget_datasets(
    bars: Sequence[tuple[str, MemoryTerms]], *, device_gb: float, device_label: str
) -> dict[str, list[dict]]:
    """The budget chart's rows by dataset name: "terms" (one per bar and term) and "device"."""
    return {"terms": _term_rows(bars), "device": device_rows(device_gb, device_label)}


# A legend label that reads the term's GB from the chart's own "terms" rows (the rows are unique by
# label when there is one bar), so the spec stays the same while sliders change the GB.
GB_LABEL_EXPR = (
    "datum.label + ': ' + format(pluck(data('terms'), 'gb')"
    "[indexof(pluck(data('terms'), 'label'), datum.label)], ',.2f') + ' GB'"
)


def _legend(gb_legend: bool) -> alt.Legend:
    if gb_legend:
        return alt.Legend(orient="bottom", columns=1, labelLimit=260, labelExpr=GB_LABEL_EXPR)
    return alt.Legend(orient="bottom", columns=1)  # two columns of long labels are cut off on a phone


def budget_chart(
    bars: Sequence[tuple[str, MemoryTerms]],
    *,
    device_gb: float,
    device_label: str,
    title: str,
    gb_legend: bool = False,
) -> alt.LayerChart:
    """Stacked horizontal bars of the terms, one bar per budget, with the device's memory as a rule.

    With `gb_legend` (one bar only) each legend label gives its term's GB, not only its colour."""
    names, present = budget_shape(bars)
    require(not gb_legend or len(names) == 1, "A legend with GB per term needs exactly one bar.")
    stacked = (
        alt.Chart(alt.NamedData(name="terms"))
        .mark_bar()
        .encode(
            x=alt.X("gb:Q", stack="zero", title="Memory (GB)"),
            y=alt.Y("bar:N", title=None, sort=list(names), axis=alt.Axis(labelLimit=240)),
            color=alt.Color(
                "label:N",
                title="Term",
                scale=term_colour_scale(present),
                sort=[TERM_LABELS[t] for t in present],
                legend=_legend(gb_legend),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("label:N", title="Term"),
                alt.Tooltip("gb:Q", title="Memory (GB)", format=".2f"),
                alt.Tooltip("share_percent:Q", title="Share of total (%)", format=".0f"),
            ],
        )
    )
    # A height per bar (a step): Streamlit draws band-scale bars with a fixed pixel height as slivers.
    return alt.LayerChart(layer=[stacked, *device_marks("x")]).properties(
        title=title,
        height=alt.Step(56),
        datasets=budget_datasets(bars, device_gb=device_gb, device_label=device_label),
    )


def _sweep_rows(sweep: MemorySweep) -> list[dict]:
    return [
        {"value": value, "total_gb": total_gb, "fits": "fits" if fits else "out of memory"}
        for value, total_gb, fits in zip(sweep.values, sweep.total_gb, sweep.fits, strict=True)
    ]


def sweep_shape(sweep: MemorySweep, *, guessed: bool = False) -> tuple[str, bool, bool]:
    """What the sweep chart's layout depends on: the swept setting, whether some value fails and whether
    the learner's guess is drawn."""
    return sweep.axis_label, sweep.first_failing is not None, guessed


def sweep_datasets(
    sweep: MemorySweep, *, device_label: str, guess: int | None = None
) -> dict[str, list[dict]]:
    """The sweep chart's rows by dataset name: "sweep", "device", "breaking" when a value fails, and
    "guess" when the learner's guessed breaking point is given."""
    rows = _sweep_rows(sweep)
    datasets = {"sweep": rows, "device": device_rows(sweep.device_gb, device_label)}
    if guess is not None:
        middle = (sweep.values[0] + sweep.values[-1]) / 2
        side = "right" if guess <= middle else "left"  # where the label has room
        datasets["guess"] = [{"value": guess, "label": f"your guess: {guess:,}", "side": side}]
    if sweep.first_failing is not None:
        datasets["breaking"] = [
            {**row, "note": "first value that does not fit"}
            for row in rows
            if row["value"] == sweep.first_failing
        ]
    return datasets


def _guess_marks() -> tuple[alt.Chart, alt.Chart, alt.Chart]:
    """The guess as a rule, and its label on whichever side of the rule has room: right of a guess in the
    sweep's first half, left of one in its second, so a phone's narrow chart never cuts it off."""
    guess = alt.Chart(alt.NamedData(name="guess"))
    tooltip = [alt.Tooltip("label:N", title="Your prediction")]
    rule = guess.mark_rule(color=GUESS_COLOUR, strokeWidth=2).encode(x=alt.X("value:Q"), tooltip=tooltip)

    def label(side: str, align: Literal["left", "right"], dx: int) -> alt.Chart:
        return (
            guess.transform_filter(alt.datum.side == side)
            .mark_text(color=GUESS_COLOUR, align=align, dx=dx, dy=8, fontWeight="bold")
            .encode(x=alt.X("value:Q"), y=alt.YValue(0), text=alt.Text("label:N"), tooltip=tooltip)
        )

    return rule, label("right", "left", 4), label("left", "right", -4)


def wrapped_title(title: str) -> alt.TitleParams:
    """A chart title in lines of at most TITLE_LINE_CHARS characters: Vega never wraps a title, and a phone's
    chart is about that wide."""
    return alt.TitleParams(text=textwrap.wrap(title, TITLE_LINE_CHARS))


def sweep_chart(
    sweep: MemorySweep, *, device_label: str, title: str, guess: int | None = None
) -> alt.LayerChart:
    """Peak memory against the swept setting, the device as a rule, the first value that fails marked and,
    when given, the learner's guess as a solid rule the line is drawn over."""
    axis_label, breaks, guessed = sweep_shape(sweep, guessed=guess is not None)
    tooltip = [
        alt.Tooltip("value:Q", title=axis_label, format=","),
        alt.Tooltip("total_gb:Q", title="Peak memory (GB)", format=".1f"),
        alt.Tooltip("fits:N", title="Outcome"),
    ]
    line = (
        alt.Chart(alt.NamedData(name="sweep"))
        .mark_line(color=TOTAL_COLOUR, point=alt.OverlayMarkDef(color=TOTAL_COLOUR, size=30))
        .encode(
            x=alt.X("value:Q", title=axis_label),
            y=alt.Y("total_gb:Q", title="Peak memory (GB)"),
            tooltip=tooltip,
        )
    )
    layers = [*(_guess_marks() if guessed else ()), line, *device_marks("y")]
    if breaks:
        marker = (
            alt.Chart(alt.NamedData(name="breaking"))
            .mark_point(shape="cross", size=220, filled=True, color=FAILURE_COLOUR)
            .encode(
                x=alt.X("value:Q"),
                y=alt.Y("total_gb:Q"),
                tooltip=[alt.Tooltip("note:N", title="Breaking point"), *tooltip],
            )
        )
        layers.append(marker)
    return alt.LayerChart(layer=layers).properties(
        title=wrapped_title(title),
        height=280,
        datasets=sweep_datasets(sweep, device_label=device_label, guess=guess),
    )


def budget_description(
    bars: Sequence[tuple[str, MemoryTerms]], *, device_gb: float, device_label: str
) -> str:
    """What `budget_chart` shows, for a screen reader: each bar's total and its largest term, from the rows
    the chart draws, against the device."""
    described = []
    for name, terms in bars:
        largest = max(terms.shares(), key=lambda share: share.gb)
        described.append(
            lessons.sentence(
                "charts",
                "budget_bar",
                name=name,
                total_gb=terms.total_gb,
                largest=largest.label.lower(),
                largest_gb=largest.gb,
                share_percent=largest.share_percent,
            )
        )
    return lessons.sentence(
        "charts", "budget", bars="; ".join(described), device=device_label, device_gb=device_gb
    )


def sweep_description(sweep: MemorySweep, *, device_label: str) -> str:
    """What `sweep_chart` shows, for a screen reader: peak memory at the sweep's ends, against the device,
    and where it stops fitting."""
    axis = sweep.axis_label.lower()
    if sweep.first_failing is None:
        ending = lessons.sentence("charts", "sweep_all_fit", axis=axis)
    elif sweep.largest_fitting is None:
        ending = lessons.sentence("charts", "sweep_none_fit", axis=axis)
    else:
        ending = lessons.sentence(
            "charts",
            "sweep_crosses",
            axis=axis,
            fits=figure(sweep.largest_fitting),
            fails=figure(sweep.first_failing),
        )
    return lessons.sentence(
        "charts",
        "sweep",
        axis=axis,
        first=figure(sweep.values[0]),
        first_gb=sweep.total_gb[0],
        last=figure(sweep.values[-1]),
        last_gb=sweep.total_gb[-1],
        device=device_label,
        device_gb=sweep.device_gb,
        ending=ending,
    )
