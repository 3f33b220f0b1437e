"""A learner's own run drawn as on Four runs, with the diagnosis's evidence marked on the panels.

Panels follow the Four runs dashboard (same height, colours, two a row that stack on a phone,
step on x), one chart each, as wide as its column. The evidence
is drawn where it was found: a rule at the first non-finite step on every panel, a band at the
chance level and a rule where the loss stopped improving on the loss panel, spikes as points,
the device limit and the fitted leak line on the memory panel. The layout depends only on
`your_run_shape`; the rows (a learner's data) are sent fresh each run through `your_run_datasets`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt

from charts.describe import figure, line
from charts.telemetry import ALERT_COLOUR, LINE_COLOUR, PANEL_HEIGHT
from core import lessons
from core.diagnose.columns import RunLog, Series
from core.diagnose.detectors import CHANCE_TOLERANCE, Marks
from core.diagnose.diagnosis import Diagnosis

CHANCE_COLOUR = "#888888"
DATA_WAIT_COLOUR = "#e09f3e"
LOG_SCALE_SPAN = 1_000  # a panel whose values span more than this factor is drawn on a log scale


@dataclass(frozen=True)
class Panel:
    """One panel: the roles it draws (one line each), its title and its y-axis title."""

    id: str
    roles: tuple[str, ...]
    title: str
    y_title: str


PANELS = (
    Panel("loss", ("loss", "eval_loss"), "Loss", "loss"),
    Panel("grad_norm", ("grad_norm",), "Gradient norm", "gradient norm"),
    Panel("memory", ("memory",), "Memory", "memory (GB)"),
    Panel("utilisation", ("utilisation",), "GPU utilisation", "GPU utilisation (%)"),
    Panel("timing", ("step_time", "data_time"), "Time per step", "time (ms)"),
    Panel("tokens", ("tokens_per_s",), "Throughput", "tokens/s"),
    Panel("samples", ("samples_per_s",), "Throughput", "samples/s"),
    Panel("accuracy", ("accuracy",), "Accuracy", "accuracy (%)"),
    Panel("learning_rate", ("learning_rate",), "Learning rate", "learning rate"),
)
SERIES_NAMES = {
    "loss": "training loss",
    "eval_loss": "evaluation loss",
    "step_time": "whole step",
    "data_time": "waiting for data",
}
ROLE_SCALE = {"step_time": 1e3, "data_time": 1e3}  # seconds drawn as milliseconds


def _present(run: RunLog, panel: Panel) -> tuple[str, ...]:
    return tuple(r for r in panel.roles if run.get(r) is not None)


def _finite(series: Series) -> list[float]:
    return [v for v in series.values if math.isfinite(v)]


def _log_scale(run: RunLog, panel: Panel) -> bool:
    values = [v for r in _present(run, panel) for v in _finite(run.get(r))]  # type: ignore[arg-type]
    return bool(values) and min(values) > 0 and max(values) / min(values) > LOG_SCALE_SPAN


def _marks(diagnosis: Diagnosis, marked: bool) -> Marks:
    if not marked:
        return Marks()
    numerical, correctness, resource = (
        diagnosis.finding(k).marks for k in ("numerical", "correctness", "resource")
    )
    return Marks(
        nan_step=numerical.nan_step,
        spike_steps=numerical.spike_steps,
        plateau_step=correctness.plateau_step,
        chance_loss=correctness.chance_loss,
        device_limit_gb=resource.device_limit_gb,
        memory_trend=resource.memory_trend,
    )


PanelShape = tuple[str, tuple[str, ...], bool]  # panel id, the roles it draws, log scale


Shape = tuple[tuple[PanelShape, ...], tuple[bool, ...]]
MARK_DATASETS = ("nan", "spikes", "plateau", "chance", "limit", "trend")  # in the order of a shape's flags


def your_run_shape(run: RunLog, diagnosis: Diagnosis, *, marked: bool = True) -> Shape:
    """What the chart's layout depends on: each drawn panel (id, lines, log scale) and which marks exist
    (nan, spikes, plateau, chance, device limit, leak line; none when not `marked`)."""
    marks = _marks(diagnosis, marked)
    flags = (
        marks.nan_step is not None,
        bool(marks.spike_steps),
        marks.plateau_step is not None,
        marks.chance_loss is not None,
        marks.device_limit_gb is not None,
        marks.memory_trend is not None,
    )
    panels = tuple((p.id, _present(run, p), _log_scale(run, p)) for p in PANELS if _present(run, p))
    return panels, flags


def your_run_datasets(run: RunLog, diagnosis: Diagnosis, *, marked: bool = True) -> dict[str, list[dict]]:
    """The chart's rows by dataset name: one per panel (step, value, line) and one per kind of mark."""
    datasets: dict[str, list[dict]] = {}
    for panel in PANELS:
        rows = []
        for role_id in _present(run, panel):
            series = run.get(role_id)
            assert series is not None
            scale = ROLE_SCALE.get(role_id, 1.0)
            rows += [
                {"step": s, "value": v * scale, "line": SERIES_NAMES.get(role_id, series.column)}
                for s, v in zip(series.steps, series.values, strict=True)
                if math.isfinite(v)
            ]
        if rows:
            datasets[panel.id] = rows
    marks = _marks(diagnosis, marked)
    loss = run.get("loss")
    if marks.nan_step is not None:
        datasets["nan"] = [{"step": marks.nan_step, "label": "first nan or inf"}]
    if marks.spike_steps and loss is not None:
        at = dict(zip(loss.steps, loss.values, strict=True))
        datasets["spikes"] = [{"step": s, "value": at[s], "label": "loss spike"} for s in marks.spike_steps]
    if marks.plateau_step is not None:
        datasets["plateau"] = [{"step": marks.plateau_step, "label": "loss stopped improving"}]
    if marks.chance_loss is not None:
        level = marks.chance_loss
        datasets["chance"] = [
            {
                "level": level,
                "low": level * (1 - CHANCE_TOLERANCE),
                "high": level * (1 + CHANCE_TOLERANCE),
                "label": "chance level",
            }
        ]
    if marks.device_limit_gb is not None:
        datasets["limit"] = [{"gb": marks.device_limit_gb, "label": "device memory"}]
    if marks.memory_trend is not None:
        first, start, last, end = marks.memory_trend
        datasets["trend"] = [{"step": first, "gb": start}, {"step": last, "gb": end}]
    return datasets


def _lines(panel: Panel, roles: tuple[str, ...], log_scale: bool) -> alt.Chart:
    names = [SERIES_NAMES.get(r, r) for r in roles]
    many = len(roles) > 1
    colour = (
        alt.Color(
            "line:N",
            title=None,
            scale=alt.Scale(domain=names, range=[LINE_COLOUR, DATA_WAIT_COLOUR][: len(names)]),
            legend=alt.Legend(orient="top"),
        )
        if many
        else alt.ColorValue(LINE_COLOUR)
    )
    y_scale = alt.Scale(type="log") if log_scale else alt.Scale(zero=panel.id in ("memory", "timing"))
    return (
        alt.Chart(alt.NamedData(name=panel.id), title=panel.title, height=PANEL_HEIGHT)
        .mark_line(point=alt.OverlayMarkDef(size=8, color=LINE_COLOUR) if not many else False)
        .encode(
            x=alt.X("step:Q", title="step"),
            y=alt.Y("value:Q", title=panel.y_title, scale=y_scale),
            color=colour,
            tooltip=[
                alt.Tooltip("step:Q", title="step", format=",.0f"),
                alt.Tooltip("value:Q", title=panel.y_title, format=",.4g"),
                alt.Tooltip("line:N", title="line"),
            ],
        )
    )


def _step_rule(name: str, dash: list[int]) -> alt.Chart:
    return (
        alt.Chart(alt.NamedData(name=name))
        .mark_rule(color=ALERT_COLOUR, strokeDash=dash)
        .encode(
            x=alt.X("step:Q"),
            tooltip=[
                alt.Tooltip("label:N", title="Evidence"),
                alt.Tooltip("step:Q", title="step", format=",.0f"),
            ],
        )
    )


def _chance_band() -> list[alt.Chart]:
    tooltip = [alt.Tooltip("label:N", title="Evidence"), alt.Tooltip("level:Q", title="ln N", format=".3f")]
    band = (
        alt.Chart(alt.NamedData(name="chance"))
        .mark_rect(color=CHANCE_COLOUR, opacity=0.25)
        .encode(y=alt.Y("low:Q"), y2=alt.Y2("high:Q"), tooltip=tooltip)
    )
    rule = (
        alt.Chart(alt.NamedData(name="chance"))
        .mark_rule(color=CHANCE_COLOUR)
        .encode(y=alt.Y("level:Q"), tooltip=tooltip)
    )
    return [band, rule]


def _memory_marks(limit: bool, trend: bool) -> list[alt.Chart]:
    layers = []
    if limit:
        layers.append(
            alt.Chart(alt.NamedData(name="limit"))
            .mark_rule(color=ALERT_COLOUR)
            .encode(
                y=alt.Y("gb:Q"),
                tooltip=[alt.Tooltip("label:N", title="Line"), alt.Tooltip("gb:Q", title="GB")],
            )
        )
    if trend:
        layers.append(
            alt.Chart(alt.NamedData(name="trend"))
            .mark_line(color=ALERT_COLOUR, strokeDash=[6, 3])
            .encode(
                x=alt.X("step:Q"),
                y=alt.Y("gb:Q"),
                tooltip=[
                    alt.Tooltip("step:Q", format=",.0f"),
                    alt.Tooltip("gb:Q", title="fitted GB", format=".3f"),
                ],
            )
        )
    return layers


def your_run_panels(shape: Shape) -> tuple[alt.LayerChart, ...]:
    """One chart per panel of the shape, with the evidence drawn on it; each declares the datasets it
    draws (`panel_dataset_names`) with no rows, so a cached panel holds no one's data."""
    return tuple(your_run_panel(shape, index) for index in range(len(shape[0])))


def your_run_panel(shape: Shape, index: int) -> alt.LayerChart:
    """Panel `index` of `your_run_panels(shape)`, built alone: a page draws one chart per column and
    caches each, so a panel's miss builds that panel only."""
    panels, (nan, spikes, plateau, chance, limit, trend) = shape
    if not 0 <= index < len(panels):
        raise ValueError(f"This run has {len(panels)} panels, so there is no panel {index}.")
    panel_id, roles, log_scale = panels[index]
    panel = next(p for p in PANELS if p.id == panel_id)
    layers: list[alt.Chart] = [_lines(panel, roles, log_scale)]
    if panel_id == "loss":
        layers += _chance_band() if chance and not log_scale else []
        layers += [_step_rule("plateau", [2, 2])] if plateau else []
        if spikes:
            layers.append(
                alt.Chart(alt.NamedData(name="spikes"))
                .mark_point(color=ALERT_COLOUR, size=60, filled=True)
                .encode(
                    x=alt.X("step:Q"),
                    y=alt.Y("value:Q"),
                    tooltip=[alt.Tooltip("label:N", title="Evidence"), alt.Tooltip("step:Q")],
                )
            )
    if panel_id == "memory":
        layers += _memory_marks(limit, trend)
    if nan:
        layers.append(_step_rule("nan", [4, 3]))
    names = panel_dataset_names(shape)[index]
    return alt.LayerChart(layer=layers).properties(datasets={name: [] for name in names})


def panel_dataset_names(shape: Shape) -> tuple[tuple[str, ...], ...]:
    """For each panel of the shape, the names of the datasets it draws: its lines, then its marks."""
    panels, (nan, spikes, plateau, chance, limit, trend) = shape
    names = []
    for panel_id, _, log_scale in panels:
        marks = {
            "loss": (("chance", chance and not log_scale), ("plateau", plateau), ("spikes", spikes)),
            "memory": (("limit", limit), ("trend", trend)),
        }.get(panel_id, ())
        names.append((panel_id, *(name for name, drawn in marks if drawn), *(("nan",) if nan else ())))
    return tuple(names)


def dataset_names(shape: Shape) -> tuple[str, ...]:
    """The names of the datasets a chart of this shape draws (what `your_run_datasets` returns)."""
    panels, flags = shape
    return (
        *(panel_id for panel_id, _, _ in panels),
        *(n for n, f in zip(MARK_DATASETS, flags, strict=True) if f),
    )


_UNITS = {
    "memory": " GB",
    "utilisation": "%",
    "accuracy": "%",
    "timing": " ms",
}  # as a description writes them


def panel_description(
    run: RunLog, diagnosis: Diagnosis, shape: Shape, index: int, title: str, *, marked: bool
) -> str:
    """What panel `index` of a chart of `shape` shows, for a screen reader: each line's first, last and
    highest values, from the rows the panel draws, and the evidence marked on it."""
    panels, _ = shape
    if not 0 <= index < len(panels):
        raise ValueError(f"This run has {len(panels)} panels, so there is no panel {index}.")
    panel_id, roles, _ = panels[index]
    panel = next(p for p in PANELS if p.id == panel_id)
    lines = []
    for role_id in roles:
        series = run.get(role_id)
        assert series is not None  # the shape holds only the roles the log has
        scale = ROLE_SCALE.get(role_id, 1.0)
        name = SERIES_NAMES.get(role_id, panel.title)
        lines.append(
            line(
                name[0].upper() + name[1:],
                series.steps,
                [v * scale for v in series.values],
                at=lambda step: f"at step {figure(step)}",
                unit=_UNITS.get(panel_id, ""),
            )
        )
    evidence = _evidence(_marks(diagnosis, marked), panel_id)
    return lessons.sentence(
        "charts",
        "your_run",
        title=title,
        panel=panel.title.lower(),
        lines=" ".join(lines),
        marks=" " + lessons.sentence("charts", "your_run_marked", marks="; ".join(evidence))
        if evidence
        else "",
    )


def _evidence(marks: Marks, panel_id: str) -> list[str]:
    """The evidence a panel marks, each in words with its figures."""
    said = []
    if panel_id == "loss":
        if marks.chance_loss is not None:
            said.append(lessons.sentence("charts", "mark_chance", loss=figure(marks.chance_loss)))
        if marks.plateau_step is not None:
            said.append(lessons.sentence("charts", "mark_plateau", step=figure(marks.plateau_step)))
        if marks.spike_steps:
            step_list = ", ".join(figure(s) for s in marks.spike_steps)  # each written by figure()
            said.append(lessons.sentence("charts", "mark_spikes", step_list=step_list))
    if panel_id == "memory":
        if marks.device_limit_gb is not None:
            said.append(lessons.sentence("charts", "mark_limit", limit_gb=marks.device_limit_gb))
        if marks.memory_trend is not None:
            first_step, first_gb, last_step, last_gb = marks.memory_trend
            per_step_mb = (
                (last_gb - first_gb) / (last_step - first_step) * 1e3 if last_step != first_step else 0.0
            )
            said.append(lessons.sentence("charts", "mark_trend", per_step_mb=figure(per_step_mb)))
    if marks.nan_step is not None:
        said.append(lessons.sentence("charts", "mark_nan", step=figure(marks.nan_step)))
    return said
