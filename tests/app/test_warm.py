"""Warming a fresh process: the lab's modules imported and its shared data worked out before any visitor."""

import subprocess
import sys
import textwrap
from pathlib import Path

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


REPO_ROOT = Path(__file__).resolve().parents[2]
# Run in a process of its own: freezing is for the whole process, and a test worker's must stay as it is.
FREEZING = textwrap.dedent(
    """
    import gc, weakref

    class Node:
        pass

    from ui import warm
    warm.warm_caches()
    before = Node(); before.me = before; left_before = weakref.ref(before); del before
    frozen = warm.freeze_loaded()
    after = Node(); after.me = after; left_after = weakref.ref(after); del after
    gc.collect()
    print(frozen, left_before() is None, left_after() is None)
    """
)


def test_freezing_takes_what_warming_loaded_out_of_the_collector_and_still_collects_later_garbage():
    done = subprocess.run(
        [sys.executable, "-c", FREEZING],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    frozen, garbage_before_collected, garbage_after_collected = done.stdout.split()
    assert int(frozen) > 100_000  # the lab, Streamlit, Altair, pandas and the shared data
    assert garbage_before_collected == "True"  # collected, not frozen
    assert garbage_after_collected == "True"  # a later cycle is collected as before
