"""Scaling charts: titled, axes with units, tooltips on every mark, fixed colours, real core data."""

import pytest

from charts.scaling import (
    MODE_COLOURS,
    OVERHEAD_COLOURS,
    efficiency_chart,
    overhead_chart,
    pipeline_chart,
    time_to_target_chart,
)
from core.scaling import layout, pipeline, quality, throughput
from core.scaling.scenarios import load_scaling, track

DATA = load_scaling()
CLOUD = track("cloud")


def views(spec: dict) -> list[dict]:
    """Every single-view chart inside layers and concatenations."""
    for key in ("layer", "hconcat", "vconcat"):
        if key in spec:
            return [v for part in spec[key] for v in views(part)]
    return [spec]


def title_text(spec: dict) -> str:
    title = spec.get("title")
    return str(title["text"] if isinstance(title, dict) else title)


def unit_of(title: str) -> str:
    """The unit an axis title names in its closing parentheses: "Time (ms)" reads "ms"."""
    assert title.endswith(")"), f"{title!r} names no unit"
    return title.rsplit("(", 1)[1].removesuffix(")")


def assert_tooltips_everywhere(spec: dict) -> None:
    for view in views(spec):
        assert view["encoding"].get("tooltip"), f"no tooltip on {view['mark']}"


def test_efficiency_chart_has_both_modes_in_fixed_colours_and_an_ideal_line():
    contrast = throughput.scaling_contrast(CLOUD, mode="strong", pool=1, efficiency=0.5, dtype="bf16")
    spec = efficiency_chart(throughput.scaling_rows(contrast.sweeps)).to_dict()
    assert title_text(spec)
    line, ideal = views(spec)
    assert unit_of(line["encoding"]["y"]["title"]) == "1 = ideal"
    assert "GPUs" in line["encoding"]["x"]["title"]
    assert line["encoding"]["color"]["scale"]["range"] == list(MODE_COLOURS)
    assert spec["datasets"][ideal["data"]["name"]] == [{"Parallel efficiency": 1.0, "Line": "ideal scaling"}]
    assert_tooltips_everywhere(spec)
    efficiencies = [row["Parallel efficiency"] for row in spec["datasets"][line["data"]["name"]]]
    assert len(efficiencies) == 8 and max(efficiencies) <= 1 + 1e-9
    # Ticks at the pools themselves on the log axis, and a real height with a title.
    assert line["encoding"]["x"]["axis"]["values"] == list(CLOUD.worker_counts)
    assert spec["height"] >= 250 and "subtitle" in spec["title"]


def test_overhead_chart_stacks_the_three_overheads_per_layout():
    contrast = layout.layout_contrast(
        fleet=CLOUD.fleet, case=DATA.cases.layout, alternative="pipeline", efficiency=0.5, dtype="bf16"
    )
    spec = overhead_chart(layout.overhead_rows(contrast.timings)).to_dict()
    assert title_text(spec)
    bars, totals = views(spec)
    encoding = bars["encoding"]
    assert unit_of(encoding["x"]["title"]) == "ms" and encoding["x"]["stack"] == "zero"
    assert encoding["color"]["scale"] == {
        "domain": list(OVERHEAD_COLOURS),
        "range": list(OVERHEAD_COLOURS.values()),
    }
    assert len(spec["datasets"][spec["data"]["name"]]) == 9  # 3 layouts x 3 overheads
    # Every bar carries its total, so the short baseline bar still reads.
    assert totals["mark"]["type"] == "text" and totals["encoding"]["text"]["field"] == "label"
    assert spec["height"] == {"step": 48}
    assert_tooltips_everywhere(spec)


def test_pipeline_chart_links_the_bubble_to_memory_against_hbm():
    contrast = pipeline.pipeline_contrast(fleet=CLOUD.fleet, cases=DATA.cases, micro_batches=8)
    spec = pipeline_chart(pipeline.pipeline_rows(contrast.sweep), hbm_gb=80).to_dict()
    bubble, memory, hbm = views(spec)
    assert unit_of(bubble["encoding"]["y"]["title"]) == "idle share"
    assert unit_of(memory["encoding"]["y"]["title"]) == "GB"
    assert "Micro-batches" in bubble["encoding"]["x"]["title"] == memory["encoding"]["x"]["title"]  # one axis
    assert spec["datasets"][hbm["data"]["name"]][0]["Memory (GB)"] == 80
    assert_tooltips_everywhere(spec)


def test_time_to_target_chart_says_it_is_illustrative():
    result = quality.compare_policies(
        step_ms=100, global_batch=256, convergence=CLOUD.convergence, straggler=CLOUD.straggler
    )
    spec = time_to_target_chart(quality.quality_rows(result)).to_dict()
    assert "illustrative" in title_text(spec)
    # Strict: 2,500 × (1 + 2,048 / 256) = 22,500 steps of 0.1 s + Cloud's 10 ms lag: 41.25 minutes;
    # dropping: 34,875 steps of 0.1 s = 58.1 minutes, so the axis reads in minutes.
    assert unit_of(spec["encoding"]["x"]["title"]) == "min"
    rows = spec["datasets"][spec["data"]["name"]]
    assert [row["Time to target"] for row in rows] == pytest.approx([41.25, 58.125])
    assert [row["Policy"] for row in spec["datasets"][spec["data"]["name"]]] == [
        "Strict synchronisation",
        "Drop slow workers",
    ]
    assert_tooltips_everywhere(spec)
