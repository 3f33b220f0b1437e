"""Run A charts: the step timeline in the memory page's term colours, the failure marked, budget and leak
series."""

import pytest

from charts.memory import FAILURE_COLOUR, TERM_COLOURS
from charts.run_a import iterations_chart, outcome_map_chart, timeline_chart, timeline_frame
from core.memory import TERM_LABELS
from core.run_a import budget_series, leak, run_a_timeline, run_experiment, run_pair
from tests.charts.test_memory_chart import mark_type, marks, rows

LIVE_IN_RUN_A = [
    "parameters",
    "activations",
    "workspace",
    "runtime_overhead",
]  # it dies as backward starts: no gradient and no Adam state exists yet


def test_run_a_timeline_stacks_terms_in_the_shared_colours():
    timeline = run_a_timeline()
    spec = timeline_chart(timeline, title="Run A").to_dict()
    assert spec["title"] == "Run A"
    views = marks(spec)
    assert [mark_type(v) for v in views] == ["area", "rule", "text", "line", "point", "rule", "text"]
    area = views[0]
    assert area["encoding"]["y"]["stack"] == "zero"
    assert (area["encoding"]["x"]["title"], area["encoding"]["y"]["title"]) == (
        "Time into the run (iterations)",
        "Memory in use (GB)",
    )
    scale = area["encoding"]["color"]["scale"]
    assert scale["domain"] == [TERM_LABELS[t] for t in LIVE_IN_RUN_A]
    assert scale["range"] == [TERM_COLOURS[t] for t in LIVE_IN_RUN_A]
    assert area["encoding"]["x"]["scale"]["domain"] == [0, 1]  # drawn to the end of the iteration it died in
    assert all("tooltip" in view["encoding"] for view in views)


def test_the_failure_is_marked_where_the_model_puts_it():
    timeline = run_a_timeline()
    spec = timeline_chart(timeline, title="Run A").to_dict()
    cross = rows(spec, 4)
    assert timeline.failure is not None
    assert len(cross) == 1 and marks(spec)[4]["mark"]["color"] == FAILURE_COLOUR
    assert cross[0]["position"] == timeline.failure.position
    assert cross[0]["total_gb"] == pytest.approx(timeline.failure.total_gb)
    # The grey line runs from the failure to the end of iteration 1: what the step would have needed.
    unreached = rows(spec, 3)
    assert unreached[0]["position"] == timeline.failure.position
    assert max(r["total_gb"] for r in unreached) == pytest.approx(timeline.iteration_peak_gb(1))
    assert all(r["position"] < 1 for r in unreached)
    assert rows(spec, 5) == [{"gb": timeline.device_gb, "label": "24 GiB (25.77 GB) device"}]
    # The area stops at the failure.
    assert max(timeline_frame(timeline)["position"]) == timeline.failure.position


def test_an_experiment_that_runs_shows_two_iterations_against_run_a():
    before, outcome = run_a_timeline(), run_experiment("gpu")
    spec = timeline_chart(outcome.timeline, title="Bigger GPU", before=before).to_dict()
    views = marks(spec)
    assert [mark_type(v) for v in views] == [
        "area",
        "rule",
        "text",
        "line",
        "rule",
        "text",
    ]  # no failure, no unreached line
    assert views[0]["encoding"]["x"]["scale"]["domain"] == [0, 2]
    assert len(rows(spec, 3)) == len(before.ran) and {r["note"] for r in rows(spec, 3)} == {
        "Run A as briefed"
    }
    assert rows(spec, 4) == [{"gb": 40 * 2**30 / 1e9, "label": "40 GiB (42.95 GB) device"}]
    # Adam's state appears in the second iteration, in its own colour.
    colours = dict(
        zip(
            views[0]["encoding"]["color"]["scale"]["domain"],
            views[0]["encoding"]["color"]["scale"]["range"],
            strict=True,
        )
    )
    assert colours["Optimizer state"] == TERM_COLOURS["optimizer_state"]
    phase_labels = [r["name"] for r in rows(spec, 2)]
    assert phase_labels == ["Forward", "loss.backward()", "optimizer.step()"] * 2


def test_timeline_frame_sums_to_the_memory_in_use():
    frame = timeline_frame(run_experiment("batch").timeline)
    sums = frame.groupby("position")["gb"].sum()
    totals = frame.groupby("position")["total_gb"].first()
    assert sums.to_numpy() == pytest.approx(totals.to_numpy())


def test_budget_chart_crosses_every_launch():
    series = budget_series()
    spec = iterations_chart(series, title="Budget").to_dict()
    views = marks(spec)
    assert [mark_type(v) for v in views] == ["line", "point", "rule", "text"]
    assert [r["x"] for r in rows(spec, 1)] == [1, 2, 3, 4]
    assert (
        views[0]["encoding"]["x"]["title"] == "Launch"
        and views[0]["encoding"]["y"]["title"] == "Peak memory asked for (GB)"
    )
    assert all("tooltip" in v["encoding"] for v in views)


def test_two_changes_are_drawn_against_the_one_that_met_the_second_wall():
    pair = run_pair("batch+optim")
    alone = pair.wall_mover
    assert alone is not None and alone.experiment == "batch"
    spec = timeline_chart(
        pair.together.timeline, title="Both", before=alone.timeline, before_note="half the tokens alone"
    ).to_dict()
    views = marks(spec)
    assert [mark_type(v) for v in views] == ["area", "rule", "text", "line", "rule", "text"]  # it runs
    line = rows(spec, 3)
    assert {r["note"] for r in line} == {"half the tokens alone"}
    # Half the tokens with Adam: 4 + 4 + 8 + 4 (foreach's copy) = 20 bytes per parameter, plus 256 MiB.
    assert max(r["total_gb"] for r in line) == pytest.approx((20 * 1_973_265_408 + 2**28) / 1e9)  # 39.73


def test_leak_chart_crosses_only_where_it_dies():
    series = leak().series
    spec = iterations_chart(series, title="Leak").to_dict()
    assert [r["x"] for r in rows(spec, 1)] == [series.failed_at]
    assert len(rows(spec, 0)) == len(series.x)
    assert rows(spec, 2) == [{"gb": 40 * 2**30 / 1e9, "label": "40 GiB (42.95 GB) device"}]


def test_outcome_map_shows_the_h200_beside_the_phase_model_in_one_view_that_takes_the_page_width():
    from charts.run_a import OUTCOME_ORDER, SOURCES, map_frame, outcome_map_chart
    from core.run_a import outcome_map

    cells = outcome_map()
    spec = outcome_map_chart(cells, title="Map").to_dict()
    assert spec["title"] == "Map"
    # A facet keeps a fixed width per panel (810 px at 390 px); one view stretches to the container.
    assert "facet" not in spec and "width" not in spec
    assert spec["encoding"]["xOffset"] == {"field": "source", "type": "nominal", "sort": list(SOURCES)}
    assert spec["encoding"]["color"]["scale"]["domain"] == [o for o in OUTCOME_ORDER if o != "ok"]
    # 51 runs: eager and sdpa at batches 1-6 and 10, though not every sequence length.
    rows = spec["encoding"]["y"]["sort"]
    assert rows[:2] == ["eager, batch 10", "eager, batch 6"] and len(rows) == 14
    frame = map_frame(cells)
    assert len(frame) == 2 * 51 and set(frame["source"]) == set(SOURCES)
    assert spec["height"] == 22 * 14


def test_the_captions_name_the_comparison_line_by_the_colour_it_is_drawn_in():
    import colorsys

    from charts.memory import TOTAL_COLOUR
    from core import lessons

    red, green, blue = (int(TOTAL_COLOUR[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue_degrees = colorsys.rgb_to_hsv(red, green, blue)[0] * 360
    assert 170 <= hue_degrees <= 195  # teal: between green and blue, nowhere near blue's 240
    for caption in (
        lessons.sentence("run_a", "experiment_caption"),
        lessons.sentence("run_a", "pair_caption", compared="Run A as briefed"),
    ):
        assert "Teal dashed line" in caption and "Blue" not in caption


def test_the_grids_legend_lists_only_outcomes_some_square_has():
    from core.run_a import outcome_map

    cells = outcome_map()
    spec = outcome_map_chart(cells, title="Grid").to_dict()
    legend = spec["encoding"]["color"]["scale"]["domain"]
    present = {c.measured for c in cells} | {c.estimated for c in cells}
    assert set(legend) == present and "ok" not in legend  # no run of Run A's shape completes on 24 GiB
