"""A load run can have the timed server (bench/timed_server.py) log each script run, and report the
learners' runs by kind and page (`run_load --run-log`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run_load import LoadConfig, run, script_runs
from ui.nav import PAGES

PAGE_PATHS = {entry.url_path for entry in PAGES if entry.url_path}


def _config(**changes: object) -> LoadConfig:
    settings: dict = {
        "target": "hello",
        "sessions": 2,
        "mode": "think",
        "duration_s": 3.0,
        "post_script_gc": False,
        "ramp_s": 0.0,
        "think_min_s": 0.2,
        "think_max_s": 0.4,
        "lifetime_s": 0.0,
        "timeout_s": 30.0,
    }
    return LoadConfig(**{**settings, **changes})


def test_a_run_log_of_more_than_one_server_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="run log or a sampled profile is taken of one server"):
        run(_config(replicas=2), tmp_path / "load.json", run_log=tmp_path / "runs.jsonl")
    assert not (tmp_path / "load.json").exists()


def test_logged_runs_are_grouped_by_kind_and_page():
    def logged(kind: str, page: str, cpu_ms: float, messages: int) -> dict:
        return {"kind": kind, "page": page, "exec_cpu_ms": cpu_ms, "messages": messages, "exec_ms": cpu_ms}

    runs = [
        logged("whole", "", 30.0, 60),
        logged("whole", "memory-budget", 50.0, 80),
        logged("fragment", "memory-budget", 10.0, 20),
        logged("fragment", "memory-budget", 30.0, 40),
    ]
    grouped = script_runs(runs)
    # 120 ms in all: the whole runs 80 (two thirds), the fragments 40 (p50 and mean both 20 ms).
    assert grouped["kinds"]["whole"] == {
        "runs": 2,
        "cpu_ms_p50": 40.0,
        "cpu_ms_mean": 40.0,
        "cpu_share": pytest.approx(2 / 3),
        "messages_mean": 70.0,
    }
    assert grouped["kinds"]["fragment"]["cpu_ms_p50"] == 20.0
    assert grouped["kinds"]["fragment"]["messages_mean"] == 30.0
    assert list(grouped["pages"]) == ["home (whole)", "memory-budget (fragment)", "memory-budget (whole)"]
    assert grouped["pages"]["home (whole)"]["cpu_share"] == pytest.approx(0.25)


def test_the_run_log_counts_every_learner_run_by_kind_page_and_messages(tmp_path: Path):
    # The app, whose learners rerun lesson bodies (fragments) and switch pages (whole runs).
    config = _config(target="app", sessions=2, duration_s=4.0)
    result = run(config, tmp_path / "load.json", run_log=tmp_path / "runs.jsonl")
    grouped = result["script_runs"]
    served = result["initial_load"]["count"] + result["rerun"]["count"] + result["navigate"]["count"]
    # The warm-up's runs are left out; a run the client gave up waiting for may still be logged.
    assert sum(kind["runs"] for kind in grouped["kinds"].values()) >= served > 0
    assert set(grouped["kinds"]) == {"whole", "fragment"}
    assert sum(page["cpu_share"] for page in grouped["pages"].values()) == pytest.approx(1.0)
    assert all(page["messages_mean"] > 0 and page["cpu_ms_mean"] > 0 for page in grouped["pages"].values())
    assert all(name.split(" (")[0] in {"home", *PAGE_PATHS} for name in grouped["pages"])
