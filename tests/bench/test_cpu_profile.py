"""A load run can profile the server's script runs on their CPU clock (`run_load --cpu-profile`)."""

from __future__ import annotations

import pstats
from pathlib import Path

import pytest

from bench.page_cpu import profile_text
from bench.run_load import LoadConfig, run


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
