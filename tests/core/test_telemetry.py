"""Each run's telemetry carries its failure's signature."""

import math

import numpy as np
import pytest

from core import lessons
from core.run_a import brief_figures, run_a_timeline
from core.telemetry import device_gib, load_runs, recorded, telemetry

RUNS, DEVICE_GB = load_runs()
BY_ID = {run.id: telemetry(run, DEVICE_GB) for run in RUNS}


def test_runs_are_the_lessons_four_on_a_24_gib_card():
    assert [r.id for r in RUNS] == ["A", "B", "C", "D"]
    assert [r.question_id for r in RUNS] == ["r1", "r2", "r3", "r4"]
    assert DEVICE_GB == 24 * 2**30 / 1e9 == run_a_timeline().device_gb


def test_run_a_is_the_run_a_page_timeline_up_to_its_failure():
    run, timeline = BY_ID["A"], run_a_timeline()
    memory = run.frame["memory_gb"].to_numpy()
    reached = [p for p in timeline.ran if p.iteration == 1]
    assert memory.tolist() == pytest.approx([min(p.total_gb, DEVICE_GB) for p in reached])
    assert memory[0] == pytest.approx(
        timeline.points[0].total_gb
    )  # the weights (and the allocator's reserve)
    assert memory[-1] == DEVICE_GB and np.all(memory[:-1] < DEVICE_GB)
    assert run.failure_x is not None
    assert run.frame["x"].max() == run.failure_x < 100  # ends before the step does
    assert run.failure_label == lessons.sentence("four_runs", "oom_in_backward")
    assert not run.has_loss


def test_run_a_forward_fits_and_backward_breaks_it():
    frame, brief = BY_ID["A"].frame, brief_figures()
    assert frame["memory_gb"].iloc[:-1].max() == pytest.approx(brief.forward_peak_gb)
    assert brief.forward_peak_gb < DEVICE_GB < brief.backward_peak_gb


def test_run_b_hovers_near_a_quarter_utilisation_at_sixty_percent_memory():
    frame = BY_ID["B"].frame
    assert abs(frame["utilisation_pct"].mean() - 25) < 2
    assert abs(frame["memory_gb"].mean() - 0.6 * DEVICE_GB) < 0.1
    assert frame["loss"].iloc[-1] < frame["loss"].iloc[0]


def test_run_c_loss_is_finite_before_step_2000_and_nan_from_then_on():
    frame = BY_ID["C"].frame
    before, after = frame[frame["x"] < 2000], frame[frame["x"] >= 2000]
    assert before["loss"].notna().all() and len(before) > 0
    assert after["loss"].isna().all() and len(after) > 0
    assert before["loss"].iloc[-1] < before["loss"].iloc[0]


def test_run_d_is_busy_and_stuck_at_chance():
    frame = BY_ID["D"].frame
    late = frame[frame["x"] >= 50]
    assert abs(frame["utilisation_pct"].mean() - 90) < 2
    # Ten classes: chance accuracy is 10% and chance cross-entropy is ln(10) = 2.303.
    assert abs(late["loss"].mean() - math.log(10)) < 0.01
    assert late["loss"].std() < 0.02
    assert abs(late["accuracy_pct"].mean() - 10) < 0.5


def test_telemetry_is_the_same_every_time():
    for run in RUNS:
        assert telemetry(run, DEVICE_GB).frame.equals(BY_ID[run.id].frame)


def test_recorded_is_each_runs_series_on_the_lessons_card():
    for run in RUNS:
        series = recorded(run.id)
        assert series.frame.equals(BY_ID[run.id].frame)
        assert (series.failure_x, series.device_memory_gb) == (BY_ID[run.id].failure_x, DEVICE_GB)


def test_recorded_names_the_runs_when_asked_for_one_that_does_not_exist():
    with pytest.raises(ValueError, match="the runs are A, B, C, D"):
        recorded("E")


def test_each_failure_is_told_in_words_where_it_happened():
    def says(key: str, **figures: object) -> str:
        return lessons.sentence("four_runs", key, **figures)

    x_a = recorded("A").failure_x
    assert x_a is not None and round(x_a) == 49  # moment 18 of 37: backward's start
    assert [recorded(run.id).failure_text for run in RUNS] == [
        f"{says('oom_in_backward')} {says('in_step_one', x=49)}",
        None,
        f"{says('loss_becomes_nan')} {says('at_step', x=2000)}",
        f"{says('loss_stops_moving')} {says('at_step', x=50)}",
    ]


def test_the_lesson_device_reads_back_in_the_gib_the_card_reports():
    # 24 GiB = 24 × 2^30 = 25,769,803,776 bytes = 25.77 GB.
    assert device_gib(24 * 2**30 / 1e9) == pytest.approx(24.0)
