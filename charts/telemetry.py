"""Dashboard-style charts of one run's telemetry: memory, utilisation, loss and accuracy."""

from __future__ import annotations

import altair as alt
import pandas as pd

from charts.describe import line
from core import lessons
from core.telemetry import Telemetry

PANEL_HEIGHT = 150
# Each panel is its own chart as wide as its container: the page puts two in a row, and Streamlit
# stacks the columns on a phone, so a dashboard never runs past the edge of the screen.
PANELS_PER_ROW = 2
LINE_COLOUR = "#4a78b5"
ALERT_COLOUR = "#d1495b"
CHANCE_COLOUR = "#6b6b6b"
# Each panel's column, axis title and chart title, in the order a dashboard shows them: the last two only
# for a run that logged its loss.
_PANELS = (
    ("memory_gb", "GPU memory (GB)", "GPU memory"),
    ("utilisation_pct", "GPU utilisation (%)", "GPU utilisation"),
    ("loss", "training loss", "Loss"),
    ("accuracy_pct", "accuracy (%)", "Accuracy"),
)
_UNITS = {"memory_gb": " GB", "utilisation_pct": "%", "accuracy_pct": "%"}  # as a description writes them


def _panel(
    frame: pd.DataFrame,
    x_title: str,
    field: str,
    y_title: str,
    title: str,
    y_domain: list[float] | None = None,
) -> alt.Chart:
    y_scale = alt.Scale(domain=y_domain) if y_domain else alt.Scale(zero=False)
    return (
        alt.Chart(frame, title=title, height=PANEL_HEIGHT)
        .mark_line(color=LINE_COLOUR, point=alt.OverlayMarkDef(size=8, color=LINE_COLOUR))
        .encode(
            x=alt.X("x:Q", title=x_title),
            y=alt.Y(f"{field}:Q", title=y_title, scale=y_scale),
            tooltip=[
                alt.Tooltip("x:Q", title=x_title, format=",.0f"),
                alt.Tooltip(f"{field}:Q", title=y_title, format=",.2f"),
            ],
        )
    )


def _failure_rule(run: Telemetry) -> alt.Chart:
    marker = pd.DataFrame({"x": [run.failure_x], "label": [run.failure_label]})
    return (
        alt.Chart(marker)
        .mark_rule(color=ALERT_COLOUR, strokeDash=[4, 3])
        .encode(
            x=alt.X("x:Q"),
            tooltip=[
                alt.Tooltip("label:N", title="What happened"),
                alt.Tooltip("x:Q", title=run.x_label, format=",.0f"),
            ],
        )
    )


def _device_rule(run: Telemetry) -> alt.Chart:
    limit = pd.DataFrame({"limit_gb": [run.device_memory_gb], "label": ["device memory"]})
    return (
        alt.Chart(limit)
        .mark_rule(color=ALERT_COLOUR)
        .encode(
            y=alt.Y("limit_gb:Q"),
            tooltip=[alt.Tooltip("label:N", title="Line"), alt.Tooltip("limit_gb:Q", title="GB")],
        )
    )


def _chance_marks(chance_loss: float) -> tuple[alt.Chart, alt.Chart]:
    """The loss a model that guesses would score, ln(classes), as a dashed rule with its label."""
    level = pd.DataFrame({"loss": [chance_loss], "label": [f"chance: ln(classes) = {chance_loss:.2f}"]})
    tooltip = [alt.Tooltip("label:N", title="Line")]
    rule = alt.Chart(level).mark_rule(color=CHANCE_COLOUR, strokeDash=[6, 4])
    text = alt.Chart(level).mark_text(align="left", baseline="bottom", dx=4, dy=-2, color=CHANCE_COLOUR)
    return (
        rule.encode(y=alt.Y("loss:Q"), tooltip=tooltip),
        text.encode(y=alt.Y("loss:Q"), x=alt.XValue(0), text=alt.Text("label:N"), tooltip=tooltip),
    )


def panel_count(run: Telemetry) -> int:
    """How many panels `telemetry_panels` draws for this run (without building them)."""
    return 4 if run.has_loss else 2


def telemetry_panels(run: Telemetry) -> list[alt.Chart | alt.LayerChart]:
    """Two to four panels (memory, utilisation, then loss and accuracy when logged), each titled with the
    run; the device limit and the failure point are drawn as rules."""
    return [telemetry_panel(run, index) for index in range(panel_count(run))]


def telemetry_panel(run: Telemetry, index: int) -> alt.Chart | alt.LayerChart:
    """Panel `index` of `telemetry_panels(run)`, built alone: a page draws one chart per column and caches
    each, so a panel's miss builds that panel only."""
    if not 0 <= index < panel_count(run):
        raise ValueError(f"This run has {panel_count(run)} panels, so there is no panel {index}.")
    field, y_title, title = _PANELS[index]
    domains: dict[str, list[float]] = {
        "memory_gb": [0, run.device_memory_gb * 1.05],
        "utilisation_pct": [0, 100],
        "accuracy_pct": [0, 100],
    }
    if run.has_loss:
        # From zero to above the highest loss logged, so the start of a run is never cut off.
        domains["loss"] = [0, float(run.frame["loss"].max(skipna=True)) * 1.05]
    layers = [_panel(run.frame, run.x_label, field, y_title, title, domains.get(field))]
    if field == "memory_gb":
        layers.append(_device_rule(run))
    if field == "loss" and run.chance_loss is not None:
        layers.extend(_chance_marks(run.chance_loss))
    if run.failure_x is not None:
        layers.append(_failure_rule(run))
    return layers[0] if len(layers) == 1 else alt.LayerChart(layer=layers)


def panel_description(run: Telemetry, index: int, title: str) -> str:
    """What panel `index` of `telemetry_panels(run)` shows, for a screen reader: its line's first, last and
    highest values, the device line on the memory panel, and what went wrong and where."""
    if not 0 <= index < panel_count(run):
        raise ValueError(f"This run has {panel_count(run)} panels, so there is no panel {index}.")
    field, _, panel = _PANELS[index]
    frame = run.frame

    def at(x: float) -> str:
        return f"({lessons.sentence('four_runs', run.x_position, x=x)})"

    lines = line(panel, list(frame["x"]), list(frame[field]), at=at, unit=_UNITS.get(field, ""))
    limit = (
        " " + lessons.sentence("charts", "limit", limit_gb=run.device_memory_gb)
        if field == "memory_gb"
        else ""
    )
    failure = run.failure_text
    return lessons.sentence(
        "charts",
        "telemetry",
        title=title,
        lines=lines,
        limit=limit,
        failure=f"{failure[0].upper()}{failure[1:]}."
        if failure
        else lessons.sentence("charts", "no_failure"),
    )
