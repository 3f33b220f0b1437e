"""A loaded server's garbage collections, one line each, summed by generation (bench/gc_pauses.py)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from bench.gc_pauses import CollectionLog, collections, describe, gc_log_path


def test_each_collection_is_one_line_with_its_generation_and_length(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl.gc"
    log = CollectionLog(path)
    gc.callbacks.append(log)
    try:
        gc.collect(0)
        gc.collect(2)
    finally:
        gc.callbacks.remove(log)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    # Automatic collections may come between; the two asked for are there, in order.
    generations = [line["generation"] for line in lines]
    assert generations.index(0) < len(generations) - 1 - generations[::-1].index(2)
    assert all(line["ms"] >= 0 for line in lines)


def test_collections_are_summed_by_generation() -> None:
    logged = [
        {"generation": 0, "ms": 0.5},
        {"generation": 0, "ms": 1.5},
        {"generation": 2, "ms": 40.0},
        {"generation": 2, "ms": 160.0},
    ]
    summary = collections(logged)
    assert summary["young"] == {"count": 2, "total_ms": 2.0, "longest_ms": 1.5}
    assert summary["middle"] == {"count": 0, "total_ms": 0.0, "longest_ms": 0.0}
    assert summary["full"] == {"count": 2, "total_ms": 200.0, "longest_ms": 160.0}
    assert summary["all"]["total_ms"] == 202.0
    # 202 ms of 10 s of the server's CPU: 2.0%.
    line = describe(summary, server_cpu_s=10.0)
    assert "full 2 (200 ms, longest 160)" in line and "young 2 (2 ms, longest 2)" in line
    assert line.endswith("202 ms in all, 2.0% of the server's CPU")


def test_the_log_sits_beside_the_run_log() -> None:
    assert gc_log_path(Path("/tmp/x/runs.jsonl")) == Path("/tmp/x/runs.jsonl.gc")


@pytest.mark.parametrize("cpu_s", [0.0, -1.0])
def test_no_server_cpu_gives_no_share_rather_than_a_division_by_zero(cpu_s: float) -> None:
    assert describe(collections([]), server_cpu_s=cpu_s).endswith("0 ms in all, 0.0% of the server's CPU")
