"""Every chart's description (what a screen reader says for it) names what the chart shows and its key
figure, worked out from the same data the chart draws: a reader who cannot see the chart hears the
number a sighted learner reads off it. Each expected figure is worked out here from the chart's data,
not read back from the describer."""

from __future__ import annotations

import pandas as pd
import pytest

from charts.describe import figure, line
from charts.memory import budget_description, sweep_description
from charts.roofline import roofline_description
from charts.rooms import answers_description, predictions_description
from charts.run_a import iterations_description, map_description, timeline_description
from charts.scaling import (
    efficiency_description,
    overhead_description,
    pipeline_description,
    time_to_target_description,
)
from charts.telemetry import panel_count
from charts.telemetry import panel_description as telemetry_description
from charts.your_run import panel_description as your_run_description
from charts.your_run import your_run_shape
from core.diagnose.columns import guess_mapping
from core.diagnose.detectors import RunContext
from core.diagnose.examples import load_examples
from core.diagnose.reading import example_reading, example_table
from core.estimate_check.view import check_view
from core.memory.lesson import lesson_sweep, lesson_terms
from core.memory.setup import LessonSetup
from core.questions import load_bank
from core.roofline import linear_layer_roofline
from core.rooms import LearnerWork, distribution, scaling_predictions
from core.run_a import budget_series, leak, outcome_map, run_a_timeline
from core.scaling import layout, pipeline, quality, throughput
from core.scaling.scenarios import load_scaling
from core.scaling.scenarios import track as scaling_track
from core.settings_schema import section
from core.telemetry import recorded

SETUP = LessonSetup(hidden=2048, layers=16, dtype="fp32", optimizer="adam", batch=4, seq_len=1024)
CLOUD = scaling_track("cloud")


def test_figures_read_as_a_listener_hears_them():
    assert [figure(v) for v in (41.68, 0.01234, 1536, 2.0, 7.12e23)] == [
        "41.7",
        "0.0123",
        "1,536",
        "2",
        "7.12e+23",
    ]


def test_a_line_is_its_first_last_and_highest_finite_points():
    said = line("Loss", [0, 1, 2, 3], [2.5, 4.0, float("nan"), 1.25], at=lambda x: f"at step {x:g}")
    assert said == "Loss runs from 2.5 at step 0 to 1.25 at step 3, highest 4 at step 1."


@pytest.mark.parametrize("run_id", ["A", "B", "C", "D"])
def test_each_four_runs_panel_names_its_last_and_highest_value(run_id):
    run = recorded(run_id)
    for index, (field, unit) in enumerate(
        [("memory_gb", " GB"), ("utilisation_pct", "%"), ("loss", ""), ("accuracy_pct", "%")][
            : panel_count(run)
        ]
    ):
        said = telemetry_description(run, index, f"Run {run_id}")
        drawn = run.frame.dropna(subset=[field])
        assert said.startswith(f"Run {run_id}: ")
        assert f"to {figure(drawn[field].iloc[-1])}{unit}" in said
        assert f"highest {figure(drawn[field].max())}{unit}" in said
        if run.failure_label:
            assert run.failure_label.lower() in said.lower()
    # Run A's memory climbs to the device and stops there: the panel says the device's size.
    if run_id == "A":
        assert f"{run.device_memory_gb:.1f} GB" in telemetry_description(run, 0, "Run A")


def _readings():
    for example in load_examples():
        table = example_table(example.file)
        yield (
            example,
            example_reading(example.file, guess_mapping(table.columns), RunContext(classes=example.classes)),
        )


def test_each_your_run_panel_names_its_figures_and_the_evidence_marked():
    leaks = 0
    for example, read in _readings():
        for marked in (False, True):
            shape = your_run_shape(read.run, read.diagnosis, marked=marked)
            for index, (panel_id, roles, _) in enumerate(shape[0]):
                said = your_run_description(
                    read.run, read.diagnosis, shape, index, example.title, marked=marked
                )
                assert said.startswith(example.title)
                series = read.run.get(roles[0])
                assert series is not None
                scale = 1e3 if roles[0] in ("step_time", "data_time") else 1.0  # seconds drawn as ms
                finite = [v * scale for v in series.values if abs(v) != float("inf") and v == v]
                assert f"highest {figure(max(finite))}" in said
                if panel_id == "memory" and marked and "trend line" in said:
                    leaks += 1
                if not marked:
                    assert "Marked:" not in said
    assert leaks == 1  # the leaking example's memory panel names its growth per step


def test_the_leaking_examples_trend_is_said_in_megabytes_a_step():
    example, read = next((e, r) for e, r in _readings() if e.file == "leak.tfevents")
    shape = your_run_shape(read.run, read.diagnosis, marked=True)
    index = next(i for i, (panel_id, _, _) in enumerate(shape[0]) if panel_id == "memory")
    trend = read.diagnosis.finding("resource").marks.memory_trend
    assert trend is not None
    first_step, first_gb, last_step, last_gb = trend
    per_step_mb = (last_gb - first_gb) / (last_step - first_step) * 1e3
    assert f"rising {figure(per_step_mb)} MB a step" in your_run_description(
        read.run, read.diagnosis, shape, index, example.title, marked=True
    )


@pytest.mark.parametrize(("gpu", "dtype"), [("A100 80GB SXM", "fp32"), ("H200", "bf16")])
def test_the_roofline_names_its_roof_ridge_and_every_operation(gpu, dtype):
    view = linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype=dtype, gpu_name=gpu)
    said = roofline_description(view.roof, view.points)
    assert f"{figure(view.roof.peak_tflops)} TFLOP/s" in said
    assert f"ridge at {figure(view.roof.ridge_flop_per_byte)} FLOP per byte" in said
    for point in view.points:
        assert f"{point.name} at {figure(point.flop_per_byte)} FLOP per byte" in said
        assert f"{figure(point.attainable_tflops)} TFLOP/s ({point.regime})" in said


def test_the_budget_names_each_bars_total_and_largest_term_against_the_device():
    terms = lesson_terms(SETUP)
    said = budget_description(
        [("The lesson's five terms", terms)], device_gb=25.77, device_label="24 GiB card"
    )
    largest = max(terms.shares(), key=lambda share: share.gb)
    assert f"{terms.total_gb:.2f} GB in all" in said
    assert f"{largest.label.lower()} at {largest.gb:.2f} GB" in said
    assert "24 GiB card (25.77 GB)" in said


def test_the_sweep_names_where_it_stops_fitting():
    sweep = lesson_sweep(SETUP, axis="seq_len", values=range(512, 8193, 512), device_gb=24)
    said = sweep_description(sweep, device_label="24 GB device")
    fits = max(v for v, gb in zip(sweep.values, sweep.total_gb, strict=True) if gb <= 24)
    assert (
        f"It fits up to sequence length (tokens) {figure(fits)} and breaks from {figure(fits + 512)}." in said
    )
    assert f"{sweep.total_gb[-1]:.2f} GB at 8,192" in said


@pytest.mark.parametrize("config_id", section("memory").field("measured_config").choices)
def test_the_estimate_check_names_its_widest_gap(config_id):
    view = check_view(config_id)
    gaps = [
        (row.label.lower(), row.error_percent)
        for row in view.check.rows
        if row.gap_bytes and row.estimate_bytes and row.error_percent is not None
    ]
    assert gaps, "every measured run differs from the estimate somewhere"
    term, percent = max(gaps, key=lambda gap: abs(gap[1]))
    assert f"the widest gap is {term}, {abs(percent):.1f}%" in view.chart_description


def test_run_as_timeline_names_its_peak_the_device_and_where_it_ran_out():
    timeline = run_a_timeline()
    said = timeline_description(timeline, "Run A")
    peak = max(point.total_gb for point in timeline.ran)
    assert f"peaks at {peak:.2f} GB" in said
    assert f"{timeline.device_gb:.2f} GB device" in said
    assert timeline.failure is not None
    assert f"runs out in {timeline.failure.where(timeline.layers)}" in said


def test_the_launches_and_the_leak_name_their_peaks_and_first_failure():
    for series in (budget_series(), leak().series):
        said = iterations_description(series, "Title")
        assert f"{series.peak_gb[-1]:.2f} GB" in said
        failed = [x for x, fails in zip(series.x, series.fails, strict=True) if fails]
        assert f"{len(failed)} of {len(series.x)} run out of memory, the first at" in said
        assert said.endswith(f"{failed[0]:,}.")


def test_the_outcome_map_names_how_often_the_model_agrees_with_the_h200():
    cells = outcome_map()
    said = map_description(cells, "Map")
    agree = sum(cell.measured == cell.estimated for cell in cells)
    assert f"in {agree} of {len(cells)}" in said


def test_scaling_efficiency_names_each_modes_efficiency_on_the_largest_pool():
    contrast = throughput.scaling_contrast(CLOUD, mode="strong", pool=1, efficiency=0.5, dtype="bf16")
    rows = throughput.scaling_rows(contrast.sweeps)
    said = efficiency_description(rows)
    frame = pd.DataFrame(rows)
    largest = frame["Workers"].max()
    for _, row in frame[frame["Workers"] == largest].iterrows():
        assert f"{row['Mode']} falls from" in said
        assert f"to {row['Parallel efficiency']:.2f} on {largest}" in said


def test_scaling_overhead_names_each_layouts_total():
    contrast = layout.layout_contrast(
        fleet=CLOUD.fleet,
        case=load_scaling().cases.layout,
        alternative="pipeline",
        efficiency=0.5,
        dtype="bf16",
    )
    rows = layout.overhead_rows(contrast.timings)
    said = overhead_description(rows)
    for name, total in pd.DataFrame(rows).groupby("Layout")["Time (ms)"].sum().items():
        assert f"{name} adds {total:,.1f} ms" in said


def test_the_pipeline_names_the_bubble_and_memory_at_both_ends():
    contrast = pipeline.pipeline_contrast(fleet=CLOUD.fleet, cases=load_scaling().cases, micro_batches=8)
    rows = pipeline.pipeline_rows(contrast.sweep)
    said = pipeline_description(rows, hbm_gb=80)
    frame = pd.DataFrame(rows).sort_values("Micro-batches")
    fewest, most = frame.iloc[0], frame.iloc[-1]
    assert f"{fewest['Bubble fraction']:.3f} at {fewest['Micro-batches']} micro-batches" in said
    assert f"{most['Memory (GB)']:,.1f} GB, against 80 GB of HBM" in said


def test_time_to_target_names_each_policys_time():
    result = quality.compare_policies(
        step_ms=100, global_batch=256, convergence=CLOUD.convergence, straggler=CLOUD.straggler
    )
    rows = quality.quality_rows(result)
    said = time_to_target_description(rows)
    # Strict: 22,500 steps of 0.1 s plus the cloud's lag, 41.25 minutes (tests/charts/test_scaling_charts.py).
    assert "41.2 min" in said
    for _, row in pd.DataFrame(rows).iterrows():
        assert f"{row['Policy']}, {figure(row['Time to target'])} {row['Unit']}" in said


def test_the_room_charts_name_every_count_and_the_right_answer():
    question = load_bank().question("r1")
    works = [
        LearnerWork(answers={"r1": "mem"}),
        LearnerWork(answers={"r1": "mem"}),
        LearnerWork(answers={"r1": "num"}),
    ]
    said = answers_description(distribution(question, works))
    right = question.option_text("mem")
    assert "3 in all" in said
    assert f"{right} (the right answer), 2" in said
    assert f"{question.option_text('num')}, 1" in said
    predicted = [LearnerWork(answers={}, records={"scaling.predictions": {"A": "middle"}})]
    said = predictions_description(scaling_predictions(predicted), "A", "Part A")
    for row in scaling_predictions(predicted):
        if row.part == "A":
            assert f"{row.label}, predicted by {row.predicted}, true for {row.computed}" in said
    assert (
        "predicted by 1, true for 0" in said
    )  # "Between 0.5 and 0.75" predicted; the settings give "Below 0.5"
    assert predictions_description([], "A", "Part A") == "Part A: no predictions yet."
