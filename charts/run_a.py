"""Charts of Run A: memory through a training step, term by term, and peak memory over iterations."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from charts.describe import figure
from charts.memory import FAILURE_COLOUR, TOTAL_COLOUR, device_marks, device_rows, term_colour_scale
from core import lessons
from core.memory import TERM_LABELS, TERMS, to_gb
from core.memory.timeline import PHASE_LABELS, StepTimeline, TimelinePoint
from core.run_a import IterationSeries, MapCell
from core.units import BYTES_PER_GB, capacity_label

PLANNED_COLOUR = "#8c8c8c"
PHASE_COLOUR = "#bdbdbd"
POSITION_TITLE = "Time into the run (iterations)"
_MOMENT_TOOLTIP = [
    alt.Tooltip("phase:N", title="Phase"),
    alt.Tooltip("block:N", title="Block"),
    alt.Tooltip("total_gb:Q", title="Memory in use (GB)", format=".2f"),
]


def _moment(point: TimelinePoint) -> dict[str, object]:
    return {
        "position": point.position,
        "phase": f"{PHASE_LABELS[point.phase]}, iteration {point.iteration}",
        "block": "" if point.block is None else str(point.block),
        "total_gb": point.total_gb,
    }


def timeline_frame(timeline: StepTimeline) -> pd.DataFrame:
    """One row per moment that happens and memory term present in the run, in GB."""
    points = timeline.ran
    present = [t for t in TERMS if any(p.live.term_bytes(t) > 0 for p in points)]
    rows = [
        {
            **_moment(p),
            "term": t,
            "label": TERM_LABELS[t],
            "gb": to_gb(p.live.term_bytes(t)),
            "order": TERMS.index(t),
        }
        for p in points
        for t in present
    ]
    return pd.DataFrame(
        rows, columns=["position", "phase", "block", "total_gb", "term", "label", "gb", "order"]
    )


def _total_line(points: Sequence[TimelinePoint], *, colour: str, note: str) -> alt.Chart:
    frame = pd.DataFrame([{**_moment(p), "note": note} for p in points])
    return (
        alt.Chart(frame)
        .mark_line(color=colour, strokeDash=[5, 3], strokeWidth=2)
        .encode(
            x=alt.X("position:Q"),
            y=alt.Y("total_gb:Q"),
            tooltip=[alt.Tooltip("note:N", title="Line"), *_MOMENT_TOOLTIP],
        )
    )


def _phase_marks(timeline: StepTimeline, iterations: list[int]) -> tuple[alt.Chart, alt.Chart]:
    firsts: dict[tuple[int, str], TimelinePoint] = {}
    for point in (p for p in timeline.points if p.iteration in iterations):
        firsts.setdefault((point.iteration, point.phase), point)
    frame = pd.DataFrame(
        [{**_moment(p), "name": PHASE_LABELS[p.phase]} for p in firsts.values() if p.phase != "start"]
    )
    tooltip = [alt.Tooltip("phase:N", title="Phase starts")]
    rule = (
        alt.Chart(frame)
        .mark_rule(color=PHASE_COLOUR, strokeWidth=1)
        .encode(x=alt.X("position:Q"), tooltip=tooltip)
    )
    text = (
        alt.Chart(frame)
        # Written up the left of its rule, so two iterations of labels never run into each other or off
        # the right edge on a phone.
        .mark_text(color=PHASE_COLOUR, angle=270, align="right", baseline="bottom", dy=-3)
        .encode(x=alt.X("position:Q"), y=alt.YValue(2), text=alt.Text("name:N"), tooltip=tooltip)
    )
    return rule, text


def _failure_marker(point: TimelinePoint, where: str) -> alt.Chart:
    frame = pd.DataFrame([{**_moment(point), "note": f"Out of memory in {where}"}])
    return (
        alt.Chart(frame)
        .mark_point(shape="cross", size=260, filled=True, color=FAILURE_COLOUR)
        .encode(
            x=alt.X("position:Q"),
            y=alt.Y("total_gb:Q"),
            tooltip=[alt.Tooltip("note:N", title="Failure"), *_MOMENT_TOOLTIP],
        )
    )


def timeline_chart(
    timeline: StepTimeline,
    *,
    title: str,
    before: StepTimeline | None = None,
    before_note: str = "Run A as briefed",
) -> alt.LayerChart:
    """Memory in use through two iterations, stacked by term, with the device limit and the failure marked.

    Moments after a failure are drawn as a grey dashed total ("never reached"); `before`, when
    given, adds the run it is compared with as a dashed total line named `before_note`.
    """
    frame = timeline_frame(timeline)
    present = [t for t in TERMS if t in set(frame["term"])]
    failure = timeline.failure
    # A failed run is drawn to the end of the iteration it died in; one that runs, through every iteration
    # planned.
    shown_iterations = sorted(
        {p.iteration for p in timeline.points if failure is None or p.iteration <= failure.iteration}
    )
    area = (
        alt.Chart(frame)
        .mark_area(opacity=0.85)
        .encode(
            x=alt.X("position:Q", title=POSITION_TITLE, scale=alt.Scale(domain=[0, len(shown_iterations)])),
            y=alt.Y("gb:Q", stack="zero", title="Memory in use (GB)"),
            color=alt.Color(
                "label:N",
                title="Term",
                scale=term_colour_scale(present),
                sort=[TERM_LABELS[t] for t in present],
                legend=alt.Legend(orient="bottom", columns=2),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("label:N", title="Term"),
                alt.Tooltip("gb:Q", title="Term (GB)", format=".2f"),
                *_MOMENT_TOOLTIP,
            ],
        )
    )
    layers: list[alt.Chart] = [area, *_phase_marks(timeline, shown_iterations)]
    if before is not None:
        layers.append(_total_line(before.ran, colour=TOTAL_COLOUR, note=before_note))
    if failure is not None:
        unreached = [
            p for p in timeline.points[timeline.points.index(failure) :] if p.iteration == failure.iteration
        ]
        layers += [
            _total_line(unreached, colour=PLANNED_COLOUR, note="Planned, never reached"),
            _failure_marker(failure, failure.where(timeline.layers)),
        ]
    layers += _device_marks_at(timeline.device_gb)
    return alt.LayerChart(layer=layers).properties(title=title, height=440)


def _device_marks_at(device_gb: float) -> tuple[alt.Chart, alt.Chart]:
    """The device's memory as a horizontal rule, labelled with its size."""
    label = f"{capacity_label(round(device_gb * BYTES_PER_GB))} device"
    return device_marks("y", alt.InlineData(values=device_rows(device_gb, label)))


def series_frame(series: IterationSeries) -> pd.DataFrame:
    """One row per iteration (or launch): the peak asked for and whether the device held it."""
    return pd.DataFrame(
        {
            "x": series.x,
            "peak_gb": series.peak_gb,
            "outcome": ["out of memory" if failed else "fits" for failed in series.fails],
        }
    )


def iterations_chart(series: IterationSeries, *, title: str) -> alt.LayerChart:
    """Peak memory asked for per iteration (or launch), the device as a rule and every failure marked."""
    frame = series_frame(series)
    tooltip = [
        alt.Tooltip("x:Q", title=series.x_label),
        alt.Tooltip("peak_gb:Q", title="Peak asked for (GB)", format=".2f"),
        alt.Tooltip("outcome:N", title="Outcome"),
    ]
    x = alt.X(
        "x:Q",
        title=series.x_label,
        axis=alt.Axis(tickMinStep=1, format="d"),
        scale=alt.Scale(domain=[0, series.x[-1]]),
    )
    y = alt.Y("peak_gb:Q", title="Peak memory asked for (GB)")
    line = (
        alt.Chart(frame)
        .mark_line(color=TOTAL_COLOUR, point=alt.OverlayMarkDef(color=TOTAL_COLOUR, size=30))
        .encode(x=x, y=y, tooltip=tooltip)
    )
    failures = frame[frame["outcome"] == "out of memory"]
    cross = (
        alt.Chart(failures)
        .mark_point(shape="cross", size=220, filled=True, color=FAILURE_COLOUR)
        .encode(x=alt.X("x:Q"), y=alt.Y("peak_gb:Q"), tooltip=tooltip)
    )
    return alt.LayerChart(layer=[line, cross, *_device_marks_at(series.device_gb)]).properties(
        title=title, height=320
    )


OUTCOME_ORDER = ("ok", "step 1 optimizer.step", "step 1 backward", "step 1 forward")
OUTCOME_COLOURS = ("#4caf50", "#ffb300", "#e53935", "#6d4c41")


SOURCES = ("Measured on the H200", "Phase model")


def map_frame(cells: Sequence[MapCell]) -> pd.DataFrame:
    """One row per grid cell and source: the H200's outcome and the phase model's, side by side."""
    rows = [
        {
            "batch": c.batch,
            "seq_len": c.seq_len,
            "attention": c.attention,
            "row": f"{c.attention}, batch {c.batch}",
            "source": src,
            "outcome": outcome,
        }
        for c in cells
        for src, outcome in zip(SOURCES, (c.measured, c.estimated), strict=True)
    ]
    return pd.DataFrame(rows)


def outcome_map_chart(cells: Sequence[MapCell], *, title: str) -> alt.Chart:
    """Where Run A's shape dies on a batch × sequence grid: each cell's left half is the H200, its right
    half the phase model. One view (no facets), so it takes the page's width, a phone's included."""
    frame = map_frame(cells)
    present = set(frame["outcome"])
    shown = [(o, colour) for o, colour in zip(OUTCOME_ORDER, OUTCOME_COLOURS, strict=True) if o in present]
    rows = [
        f"{attention}, batch {batch}"
        for attention in sorted(set(frame["attention"]))
        for batch in sorted(set(frame["batch"]), reverse=True)
        if ((frame["attention"] == attention) & (frame["batch"] == batch)).any()
    ]
    return (
        alt.Chart(frame)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("seq_len:O", title="Sequence length (tokens)"),
            xOffset=alt.XOffset("source:N", sort=list(SOURCES)),
            y=alt.Y("row:N", title="Attention, batch", sort=rows),
            color=alt.Color(
                "outcome:N",
                title="Where it stops",
                # Only the outcomes some square has: a legend entry that no square shows only puzzles.
                scale=alt.Scale(domain=[o for o, _ in shown], range=[colour for _, colour in shown]),
                legend=alt.Legend(orient="bottom", columns=1),
            ),
            tooltip=[
                alt.Tooltip(f) for f in ("source:N", "attention:N", "batch:O", "seq_len:O", "outcome:N")
            ],
        )
        .properties(title=title, height=22 * len(rows))
    )


def timeline_description(timeline: StepTimeline, title: str) -> str:
    """What `timeline_chart` shows of `timeline`, for a screen reader: the highest memory in use and
    when, against the device, and where the device ran out or how much it had to spare."""
    peak = max(timeline.ran, key=lambda point: point.total_gb)
    ending = (
        lessons.sentence("charts", "timeline_fails", where=timeline.failure.where(timeline.layers))
        if timeline.failure is not None
        else lessons.sentence("charts", "timeline_fits", spare_gb=timeline.device_gb - peak.total_gb)
    )
    return lessons.sentence(
        "charts",
        "timeline",
        title=title,
        peak_gb=peak.total_gb,
        where=peak.where(timeline.layers),
        device_gb=timeline.device_gb,
        ending=ending,
    )


def iterations_description(series: IterationSeries, title: str) -> str:
    """What `iterations_chart` shows of `series`, for a screen reader: the peak asked for at the first and
    last point, against the device, and how many fail from where."""
    x_name = series.x_label.lower()
    failed = [x for x, fails in zip(series.x, series.fails, strict=True) if fails]
    return lessons.sentence(
        "charts",
        "iterations",
        title=title,
        x_name=x_name,
        first_x=figure(series.x[0]),
        first_gb=series.peak_gb[0],
        last_x=figure(series.x[-1]),
        last_gb=series.peak_gb[-1],
        device_gb=series.device_gb,
        ending=(
            lessons.sentence(
                "charts",
                "iterations_fail",
                failed=len(failed),
                total=len(series.x),
                x_name=x_name,
                first=failed[0],
            )
            if failed
            else lessons.sentence("charts", "iterations_fit", total=len(series.x))
        ),
    )


def map_description(cells: Sequence[MapCell], title: str) -> str:
    """What `outcome_map_chart` shows of `cells`, for a screen reader: how many runs the H200 completed,
    and on how many the phase model agrees with it."""
    return lessons.sentence(
        "charts",
        "outcome_map",
        title=title,
        total=len(cells),
        measured_ok=sum(c.measured == OUTCOME_ORDER[0] for c in cells),
        estimated_ok=sum(c.estimated == OUTCOME_ORDER[0] for c in cells),
        agree=sum(c.measured == c.estimated for c in cells),
    )
