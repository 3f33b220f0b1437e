"""Telemetry charts: titled panels, units on axes, the device limit and the failure drawn."""

import json

import pytest

from charts.telemetry import panel_count, telemetry_panel, telemetry_panels
from core.telemetry import load_runs, telemetry

RUNS, DEVICE_GB = load_runs()


def _panels(run_id):
    run = next(r for r in RUNS if r.id == run_id)
    return [panel.to_dict() for panel in telemetry_panels(telemetry(run, DEVICE_GB))]


def _layers(panel):
    return panel.get("layer", [panel])


def test_run_a_draws_memory_and_utilisation_only_with_the_limit_and_failure():
    panels = _panels("A")
    assert len(panels) == 2  # no loss was ever logged
    memory_layers = _layers(panels[0])
    titles = [layer.get("encoding", {}).get("y", {}).get("title") for layer in memory_layers]
    assert "GPU memory (GB)" in titles
    rules = [layer for layer in memory_layers if layer["mark"]["type"] == "rule"]
    assert len(rules) == 2  # device limit and failure point


def test_every_mark_has_a_tooltip_and_every_panel_a_title():
    for run in RUNS:
        for panel in _panels(run.id):
            for layer in _layers(panel):
                assert layer["encoding"]["tooltip"]
            assert _layers(panel)[0].get("title") or panel.get("title")


def test_run_c_has_loss_and_accuracy_panels():
    assert len(_panels("C")) == 4


def test_panels_take_their_width_from_the_page_so_they_fit_a_phone():
    for run in RUNS:
        panels = _panels(run.id)
        assert len(panels) == panel_count(telemetry(run, DEVICE_GB))
        for panel in panels:
            assert "width" not in panel and all("width" not in layer for layer in _layers(panel))


def test_a_panel_is_built_alone_with_only_its_own_column():
    run = telemetry(next(r for r in RUNS if r.id == "C"), DEVICE_GB)
    for index, column in enumerate(("memory_gb", "utilisation_pct", "loss", "accuracy_pct")):
        layers = _layers(telemetry_panel(run, index).to_dict())
        assert layers[0]["encoding"]["y"]["field"] == column
    with pytest.raises(ValueError, match="has 4 panels, so there is no panel 4"):
        telemetry_panel(run, 4)


def test_run_ds_loss_panel_shows_its_whole_start_and_the_chance_line():
    from charts.telemetry import telemetry_panel
    from core.telemetry import recorded

    run = recorded("D")
    # Ten classes: guessing scores ln 10 = 2.303; the loss starts at 2.8 and is never cut off.
    assert run.chance_loss == pytest.approx(2.302585)
    spec = telemetry_panel(run, 2).to_dict()
    low, high = spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    assert low == 0 and high > run.frame["loss"].max()
    chance = [layer for layer in spec["layer"] if layer["mark"]["type"] in ("rule", "text")]
    assert {layer["mark"]["color"] for layer in chance} >= {"#6b6b6b"}
    texts = json.dumps(spec)
    assert "chance: ln(classes) = 2.30" in texts
    assert recorded("B").chance_loss is None  # a run that names no classes draws no chance line
