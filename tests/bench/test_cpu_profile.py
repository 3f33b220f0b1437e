"""A load run can profile the server's script runs on their CPU clock (`run_load --cpu-profile`), and log
each run to report them by kind and page (`run_load --run-log`)."""

from __future__ import annotations

import pstats
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.message_kinds import message_kind, message_kind_shares
from bench.page_cpu import profile_text
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


def test_the_profile_holds_every_script_run_the_server_made(tmp_path: Path):
    profile = tmp_path / "runs.prof"
    result = run(_config(), tmp_path / "load.json", cpu_profile=profile)
    functions = pstats.Stats(str(profile)).get_stats_profile().func_profiles
    runs = functions["exec_func_with_error_handling"]
    served = result["initial_load"]["count"] + result["rerun"]["count"] + result["navigate"]["count"]
    # The warm-up visit is profiled too, and a run the client gave up waiting for may still finish.
    assert int(runs.ncalls) >= served > 0
    assert runs.file_name.endswith("exec_code.py") and runs.cumtime > 0
    assert any(f.file_name.endswith("hello/streamlit_app.py") for f in functions.values())
    assert "Our code only" in profile_text(str(profile), "heading", 5)


@pytest.mark.parametrize("changes", [{"store": False}, {"replicas": 2}])
def test_a_profile_of_more_than_one_server_or_without_the_store_is_refused(tmp_path: Path, changes):
    with pytest.raises(ValueError, match="CPU profile"):
        run(_config(**changes), tmp_path / "load.json", cpu_profile=tmp_path / "runs.prof")
    with pytest.raises(ValueError, match="run log"):
        run(_config(**changes), tmp_path / "load.json", run_log=tmp_path / "runs.jsonl")


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


def test_a_run_s_messages_are_told_apart_by_what_they_carry():
    heading, column, page_info = ForwardMsg(), ForwardMsg(), ForwardMsg()
    heading.delta.new_element.heading.body = "Budget"
    column.delta.add_block.column.weight = 0.5
    page_info.page_info_changed.query_string = "batch=8"
    assert [message_kind(m) for m in (heading, column, page_info)] == [
        "element:heading",
        "block:column",
        "page_info_changed",
    ]


def test_message_kinds_are_shares_of_every_run_s_messages_most_first():
    runs = [
        {"message_kinds": {"element:markdown": 3, "block:column": 2}},
        {"message_kinds": {"element:markdown": 1, "page_info_changed": 2}},
        {},  # logged before kinds were counted
    ]
    shares = message_kind_shares(runs)
    assert shares == {"element:markdown": 0.5, "block:column": 0.25, "page_info_changed": 0.25}
    assert list(shares) == ["element:markdown", "block:column", "page_info_changed"]
    assert message_kind_shares([]) == {}


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
    kinds = grouped["message_kinds"]
    assert sum(kinds.values()) == pytest.approx(1.0)
    assert "element:markdown" in kinds and any(kind.startswith("block:") for kind in kinds)
    collected = result["garbage_collections"]  # the learners' runs made garbage, young first
    assert collected["young"]["count"] > 0 and collected["all"]["total_ms"] > 0
