"""Your run charts: panels as on Four runs, evidence drawn where it was found, no data in the cached spec."""

from __future__ import annotations

import math

import pytest

from charts.your_run import (
    dataset_names,
    panel_dataset_names,
    your_run_datasets,
    your_run_panel,
    your_run_panels,
    your_run_shape,
)
from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import diagnose, diagnose_bytes
from core.diagnose.examples import example_bytes
from tests.core.diagnose_helpers import make_run


def _example(file: str, **context):
    _, run, result = diagnose_bytes(example_bytes(file), file, RunContext(classes=10, **context))
    return run, result


def _spec(run, result, marked=True):
    """Every panel's spec, in order, as a page draws them (one chart each)."""
    return {
        "concat": [panel.to_dict() for panel in your_run_panels(your_run_shape(run, result, marked=marked))]
    }


def _layers(panel):
    return panel.get("layer", [panel])


def _marks_of(panel):
    return [(layer["mark"]["type"], layer["data"]["name"]) for layer in _layers(panel)]


def test_the_nan_step_is_a_rule_on_every_panel():
    run, result = _example("too_high_lr.jsonl")
    panels = _spec(run, result)["concat"]
    assert [_layers(p)[0]["title"] for p in panels] == ["Loss", "Gradient norm", "Learning rate"]
    assert all(("rule", "nan") in _marks_of(p) for p in panels)
    assert your_run_datasets(run, result)["nan"] == [{"step": 16.0, "label": "first nan or inf"}]


def test_an_exploding_loss_is_drawn_on_a_log_scale():
    run, result = _example("too_high_lr.jsonl")
    loss = _layers(_spec(run, result)["concat"][0])[0]
    assert loss["encoding"]["y"]["scale"] == {"type": "log"}


def test_chance_is_a_band_and_a_rule_and_the_plateau_a_rule_on_the_loss_panel():
    run, result = _example("shuffled_labels_trainer_state.json")
    loss_panel = _spec(run, result)["concat"][0]
    assert {("rect", "chance"), ("rule", "chance"), ("rule", "plateau")} <= set(_marks_of(loss_panel))
    [band] = your_run_datasets(run, result)["chance"]
    # ln 10 = 2.302585, band ±5%: 0.95 × 2.302585 = 2.187556 to 1.05 × 2.302585 = 2.417714.
    assert (round(band["level"], 4), round(band["low"], 4), round(band["high"], 4)) == (
        2.3026,
        2.1875,
        2.4177,
    )


def test_the_device_limit_and_the_leak_line_are_on_the_memory_panel():
    run, result = _example("leak.tfevents", device_gb=1.0)
    memory_panel = _spec(run, result)["concat"][1]
    assert {("rule", "limit"), ("line", "trend")} <= set(_marks_of(memory_panel))
    assert _layers(memory_panel)[0]["encoding"]["y"]["title"] == "memory (GB)"
    assert your_run_datasets(run, result)["limit"] == [{"gb": 1.0, "label": "device memory"}]


def test_before_the_answer_no_evidence_is_drawn():
    run, result = _example("leak.tfevents", device_gb=1.0)
    assert set(your_run_datasets(run, result, marked=False)) == {"loss", "memory"}
    assert all(len(_layers(p)) == 1 for p in _spec(run, result, marked=False)["concat"])


def test_every_mark_has_a_tooltip_and_the_spec_holds_no_rows():
    for file in ("healthy.csv", "too_high_lr.jsonl", "leak.tfevents", "slow_loader.csv"):
        run, result = _example(file, device_gb=24.0)
        shape = your_run_shape(run, result)
        panels = _spec(run, result)["concat"]
        for panel, names in zip(panels, panel_dataset_names(shape), strict=True):
            for layer in _layers(panel):
                assert layer["encoding"]["tooltip"]
                assert layer.get("data", panel.get("data"))["name"] in names
            assert panel["datasets"] == {name: [] for name in names}
            assert "width" not in panel  # as wide as its column, so it fits a phone
        assert set(your_run_datasets(run, result)) == set(dataset_names(shape))
        assert {name for names in panel_dataset_names(shape) for name in names} <= set(dataset_names(shape))


def test_two_runs_of_the_same_shape_share_one_spec():
    first = make_run(loss=[2.0 - i / 100 for i in range(50)] + [math.nan])
    second = make_run(loss=[5.0 - i / 50 for i in range(80)] + [math.inf])
    shapes = [your_run_shape(r, diagnose(r, RunContext())) for r in (first, second)]
    assert shapes[0] == shapes[1]
    assert [p.to_dict() for p in your_run_panels(shapes[0])] == [
        p.to_dict() for p in your_run_panels(shapes[1])
    ]


def test_timing_draws_the_step_and_the_wait_in_milliseconds():
    run, result = _example("slow_loader.csv")
    rows = your_run_datasets(run, result)["timing"]
    assert {row["line"] for row in rows} == {"whole step", "waiting for data"}
    first_step = run.get("step_time").values[0]
    assert rows[0]["value"] == first_step * 1e3


def test_a_panel_is_built_alone_and_draws_only_its_own_datasets():
    run, result = _example("too_high_lr.jsonl")
    shape = your_run_shape(run, result, marked=True)
    for index, names in enumerate(panel_dataset_names(shape)):
        drawn = {layer["data"]["name"] for layer in _layers(your_run_panel(shape, index).to_dict())}
        assert drawn == set(names)
    with pytest.raises(ValueError, match="so there is no panel"):
        your_run_panel(shape, len(shape[0]))
