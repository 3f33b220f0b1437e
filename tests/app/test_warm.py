"""Warming a fresh process: the lab's modules imported and its shared data worked out before any visitor."""

import subprocess
import sys
import textwrap
from pathlib import Path

from core.diagnose.reading import _example_reading
from core.run_a import brief_figures
from core.scaling.outcomes import _contrasts
from core.scaling.scenarios import load_scaling
from server import warm


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


def test_warming_builds_every_run_a_experiment_and_pair_chart_so_no_pick_builds_one(monkeypatch):
    from core.run_a import EXPERIMENTS, pairs, run_experiment, run_pair
    from ui import charts
    from ui.run_a_charts import experiment_chart, pair_chart

    monkeypatch.setattr(charts, "_charts", type(charts._charts)())
    warm.load_shared_data()
    keys = [experiment_chart(run_experiment(e))[0] for e in EXPERIMENTS]
    keys += [pair_chart(run_pair(p))[0] for p in pairs()]
    assert len(keys) == 10 and all(key in charts._charts for key in keys)


def test_warming_builds_each_scaling_part_s_chart_as_the_page_draws_it_at_its_defaults(monkeypatch):
    from tests.app.conftest import open_page, open_tab
    from ui import charts

    monkeypatch.setattr(charts, "_charts", type(charts._charts)())
    warm.load_shared_data()
    warmed = set(charts._charts)
    at = open_page("pages/scaling.py")
    for part, option in {
        "A": "middle",
        "B": "optimizer",
        "C": "within",
        "D": "faster-oom",
        "E": "strict",
    }.items():
        open_tab(at, "scaling.part", load_scaling().parts[part].tab)
        at.radio(key=f"scaling.predict.{part}").set_value(option)
        at.button(key=f"scaling.predict.{part}.lock").click().run()
        assert len(at.get("vega_lite_chart")) == 1, part
    drawn = {key for key in charts._charts if str(key[0]).startswith("scaling.")}
    assert len(drawn) == 5 and drawn <= warmed  # every reveal found its chart built already


def test_a_failure_while_warming_is_logged_and_the_server_still_starts(monkeypatch, caplog):
    def broken() -> None:
        raise ValueError("data/lab.json is not valid JSON.")

    monkeypatch.setattr(warm, "load_shared_data", broken)
    warm.warm_caches()
    assert "Warming the per-process caches failed" in caplog.text


REPO_ROOT = Path(__file__).resolve().parents[2]


def _printed_by_own_process(code: str) -> list[str]:
    """What `code` prints, run in a process of its own: freezing is for the whole process, and a test
    worker's must stay as it is."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.split()


FREEZING = textwrap.dedent(
    """
    import gc, weakref

    class Node:
        pass

    from server import warm
    warm.warm_caches()
    before = Node(); before.me = before; left_before = weakref.ref(before); del before
    frozen = warm.freeze_loaded()
    after = Node(); after.me = after; left_after = weakref.ref(after); del after
    gc.collect()
    print(frozen, left_before() is None, left_after() is None)
    """
)


def test_freezing_takes_what_warming_loaded_out_of_the_collector_and_still_collects_later_garbage():
    frozen, garbage_before_collected, garbage_after_collected = _printed_by_own_process(FREEZING)
    assert int(frozen) > 100_000  # the lab, Streamlit, Altair, pandas and the shared data
    assert garbage_before_collected == "True"  # collected, not frozen
    assert garbage_after_collected == "True"  # a later cycle is collected as before


FREEZING_ONCE = textwrap.dedent(
    """
    import gc

    from server import warm
    warm.import_all()
    first = warm.freeze_once()
    frozen = gc.get_freeze_count()
    made_later = [[index] for index in range(1_000)]
    again = warm.freeze_once()
    print(first, again, gc.get_freeze_count() - frozen)
    """
)


def test_freezing_once_freezes_on_the_first_call_of_a_process_only():
    first, again, frozen_by_the_second_call = _printed_by_own_process(FREEZING_ONCE)
    assert (first, again) == ("True", "True")
    assert int(frozen_by_the_second_call) == 0  # the thousand lists made later were not frozen
