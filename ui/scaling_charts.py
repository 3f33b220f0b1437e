"""Each Scaling out part's chart by key: the page draws it once the part's prediction is locked, and the
server builds every part's chart at the page's default settings once at start (`server.warm`).

A chart costs a fresh process 30-90 ms of CPU to build (more under a class's burst; bench:
`python -m bench.scaling_tabs`), and without this the first learner to reveal each part paid it inside the
click that revealed it. A key names every setting its chart depends on, so one copy serves every learner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from charts import scaling as charts
from charts.memory import budget_chart, budget_description
from core.scaling import layout, pipeline, quality, throughput
from core.scaling.evidence import current_settings
from core.scaling.outcomes import PartContrasts, part_contrasts
from core.scaling.wording import PARTS
from ui.charts import ChartRecipe, cached_chart


def _efficiency(parts: PartContrasts, settings: Mapping[str, Any]) -> ChartRecipe:
    contrast = parts.a
    return (
        ("scaling.A", parts.track.key, contrast.mode, settings["pool"]),
        lambda: charts.efficiency_chart(throughput.scaling_rows(contrast.sweeps)),
    )


def _memory(parts: PartContrasts, settings: Mapping[str, Any]) -> ChartRecipe:
    card, plans = parts.track.fleet.card, (parts.b.baseline, parts.b.result)
    return (
        ("scaling.B", parts.track.key, settings["pool"], settings["zero_stage"], settings["recompute"]),
        lambda: budget_chart(
            [(plan.label, plan.terms) for plan in plans],
            device_gb=card.memory_gb,
            device_label=f"{card.name} HBM",
            title="Memory per GPU against HBM",
        ),
    )


def _overhead(parts: PartContrasts, settings: Mapping[str, Any]) -> ChartRecipe:
    timings = parts.c.timings
    return (
        ("scaling.C", parts.track.key, settings["layout"]),
        lambda: charts.overhead_chart(layout.overhead_rows(timings)),
    )


def _bubble(parts: PartContrasts, settings: Mapping[str, Any]) -> ChartRecipe:
    sweep, hbm_gb = parts.d.sweep, parts.track.fleet.card.memory_gb
    return (
        ("scaling.D", parts.track.key, settings["micro_batches"]),
        lambda: charts.pipeline_chart(pipeline.pipeline_rows(sweep), hbm_gb=hbm_gb),
    )


def _time_to_target(parts: PartContrasts, settings: Mapping[str, Any]) -> ChartRecipe:
    rows = quality.quality_rows(parts.e)
    return (
        ("scaling.E", parts.track.key, settings["mode"], settings["pool"]),
        lambda: charts.time_to_target_chart(rows),
    )


_RECIPES: dict[str, Callable[[PartContrasts, Mapping[str, Any]], ChartRecipe]] = {
    "A": _efficiency,
    "B": _memory,
    "C": _overhead,
    "D": _bubble,
    "E": _time_to_target,
}


def part_description(part: str, parts: PartContrasts) -> str:
    """What `part`'s chart shows, for a screen reader, from the same rows the chart draws."""
    card = parts.track.fleet.card
    if part == "A":
        return charts.efficiency_description(throughput.scaling_rows(parts.a.sweeps))
    if part == "B":
        plans = (parts.b.baseline, parts.b.result)
        return budget_description(
            [(plan.label, plan.terms) for plan in plans],
            device_gb=card.memory_gb,
            device_label=f"{card.name} HBM",
        )
    if part == "C":
        return charts.overhead_description(layout.overhead_rows(parts.c.timings))
    if part == "D":
        return charts.pipeline_description(pipeline.pipeline_rows(parts.d.sweep), hbm_gb=card.memory_gb)
    return charts.time_to_target_description(quality.quality_rows(parts.e))


def part_chart(part: str, parts: PartContrasts, settings: Mapping[str, Any]) -> ChartRecipe:
    """The key and builder of `part`'s chart for these settings (`parts` worked out from them)."""
    return _RECIPES[part](parts, settings)


def warm_scaling_charts() -> int:
    """Build each part's chart at the page's default settings into the per-process chart cache; how many."""
    settings = current_settings({})
    parts = part_contrasts(settings)
    for part in PARTS:
        cached_chart(*part_chart(part, parts, settings))
    return len(PARTS)
