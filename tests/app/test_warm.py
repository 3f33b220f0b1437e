"""Warming a fresh process: the lab's modules imported and its shared data worked out before any visitor."""

import sys

from core.diagnose.reading import _example_reading
from core.run_a import brief_figures
from core.scaling.outcomes import _contrasts
from ui import warm


def test_warming_imports_every_module_of_the_lab_and_fills_the_shared_caches():
    brief_figures.cache_clear()
    _contrasts.cache_clear()
    _example_reading.cache_clear()
    count = warm.import_all()
    wanted = {"core.scaling.outcomes", "charts.your_run", "ui.charts", "store.rooms", "altair"}
    assert wanted <= set(sys.modules)
    assert count > 50
    warm.load_shared_data()
    assert brief_figures.cache_info().currsize == 1
    assert _contrasts.cache_info().currsize == 1  # the Scaling out page at its defaults
    assert _example_reading.cache_info().currsize == 5  # each shipped example, as Your run first reads it


def test_a_failure_while_warming_is_logged_and_the_server_still_starts(monkeypatch, caplog):
    def broken() -> None:
        raise ValueError("data/lab.json is not valid JSON.")

    monkeypatch.setattr(warm, "load_shared_data", broken)
    warm.warm_caches()
    assert "Warming the per-process caches failed" in caplog.text
