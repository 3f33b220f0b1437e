"""The interpreter's garbage collections in a loaded server: how many of each generation, how long.

A collection holds the interpreter lock, so every session's run waits while it lasts; a full one walks
every object the process tracks. `bench.timed_server` logs each collection (`BENCH_GC_LOG`: one JSON
line each, its generation and milliseconds, from `gc.callbacks`), `run_load --run-log` asks for that log
beside the run log, and reports the collections made while the learners ran.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

GENERATIONS = {0: "young", 1: "middle", 2: "full"}


def gc_log_path(run_log: Path) -> Path:
    """Where the server logs its collections, beside the run log."""
    return run_log.with_name(run_log.name + ".gc")


class CollectionLog:
    """A `gc.callbacks` entry that appends one line per collection of this process to a file."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", buffering=1)  # a line is written whole, as the collection ends
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        # One collection at a time in a process: it runs holding the interpreter lock.
        if phase == "start":
            self._started = time.perf_counter()
            return
        ms = (time.perf_counter() - self._started) * 1000
        self._file.write(json.dumps({"generation": info["generation"], "ms": ms}) + "\n")


def collections(logged: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Logged collections by generation (young, middle, full): how many, their milliseconds in all, the
    longest; and all of them together."""
    summary: dict[str, dict[str, float]] = {}
    for name, group in [
        *((name, [c for c in logged if c["generation"] == g]) for g, name in GENERATIONS.items()),
        ("all", logged),
    ]:
        ms = [c["ms"] for c in group]
        summary[name] = {"count": len(ms), "total_ms": sum(ms), "longest_ms": max(ms, default=0.0)}
    return summary


def describe(summary: dict[str, dict[str, float]], server_cpu_s: float) -> str:
    """One line for a run's report: each generation's collections, and all of them as a share of the
    server's CPU."""
    parts = [
        f"{name} {summary[name]['count']:,.0f} ({summary[name]['total_ms']:,.0f} ms, longest "
        f"{summary[name]['longest_ms']:,.0f})"
        for name in ("full", "middle", "young")
    ]
    share = summary["all"]["total_ms"] / 1000 / server_cpu_s if server_cpu_s > 0 else 0.0
    return (
        f"  garbage collections: {', '.join(parts)}; {summary['all']['total_ms']:,.0f} ms in all, "
        f"{share:.1%} of the server's CPU"
    )
