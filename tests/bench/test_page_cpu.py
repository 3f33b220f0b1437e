"""`bench.page_cpu` reruns: what runs before each, and `--new-charts` leaving no chart cached."""

from __future__ import annotations

from bench.page_cpu import ScriptClock, _forget_charts, _reruns
from ui import charts


def test_the_hook_runs_before_every_rerun_and_the_figures_are_the_reruns_own():
    clock = ScriptClock()
    clock.runs_ms.append(99.0)  # left over from an earlier page
    calls: list[str] = []

    def run() -> None:
        calls.append("run")
        clock.runs_ms.append(1.0)
        clock.runs_messages.append(3)

    assert _reruns(clock, run, 3, lambda: calls.append("before")) == ([1.0] * 3, [3] * 3)
    assert calls == ["before", "run"] * 3


def test_new_charts_leaves_no_chart_or_dataset_cached(monkeypatch):
    monkeypatch.setattr(charts, "_charts", charts.OrderedDict({("a",): "chart"}))
    monkeypatch.setattr(charts, "_shared", charts.OrderedDict({(1, "b"): ("owner", {})}))
    _forget_charts()
    assert not charts._charts and not charts._shared
