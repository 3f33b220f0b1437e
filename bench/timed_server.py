"""`streamlit` command line that also logs how long every script run takes inside the server, and can
profile the runs' CPU time.

    BENCH_TIMING_LOG=runs.jsonl python -m bench.timed_server run Home.py [streamlit flags]
    BENCH_CPU_PROFILE=runs.prof python -m bench.timed_server run Home.py [streamlit flags]
    BENCH_GC_LOG=collections.jsonl python -m bench.timed_server run Home.py [streamlit flags]

Wraps the function Streamlit's ScriptRunner calls to execute the app script (Streamlit
1.67: `script_runner.exec_func_with_error_handling`, the span Streamlit's own page
profile calls exec time). With `BENCH_TIMING_LOG`, each run appends one JSON line: the page's own
cost, before Streamlit's post-run garbage collection and before any message reaches a browser, with
the run's kind (the whole app, or fragments alone), its page's URL path and the messages it queued, in
all and by kind (an element's or a block's type, or the message's own for the rest).
With `BENCH_CPU_PROFILE`, every run is profiled by cProfile on the thread's CPU clock, so time a run
spends waiting (for the interpreter lock, a lock, the disk) is left out and a loaded server's profile
shows work, not queues; the runs' profiles are merged and written to that file (pstats format) at
most every two seconds and when the server stops (a profiled run is slower: read timings from an
unprofiled server). With `BENCH_GC_LOG`, each garbage collection of the process appends one JSON line
(bench/gc_pauses.py). Only the benchmark's server process is patched; the app is run unchanged.
"""

import atexit
import cProfile
import gc
import json
import os
import pstats
import sys
import threading
import time
from pathlib import Path
from typing import Any

from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.web.cli import main

from bench.gc_pauses import CollectionLog
from bench.message_kinds import message_kind

_LOG = Path(os.environ["BENCH_TIMING_LOG"]) if os.environ.get("BENCH_TIMING_LOG") else None
_PROFILE = Path(os.environ["BENCH_CPU_PROFILE"]) if os.environ.get("BENCH_CPU_PROFILE") else None
_GC_LOG = Path(os.environ["BENCH_GC_LOG"]) if os.environ.get("BENCH_GC_LOG") else None
if _LOG is None and _PROFILE is None and _GC_LOG is None:
    sys.exit("bench.timed_server: set BENCH_TIMING_LOG, BENCH_CPU_PROFILE, BENCH_GC_LOG or several.")
if not hasattr(script_runner, "exec_func_with_error_handling"):
    sys.exit(
        "bench.timed_server: this Streamlit version has no "
        "script_runner.exec_func_with_error_handling to time."
    )
_run_script = script_runner.exec_func_with_error_handling
_enqueue = ScriptRunContext.enqueue
_queued = threading.local()  # messages the current run of this thread has queued


def _counted_enqueue(ctx: Any, msg: Any) -> None:
    _queued.count = getattr(_queued, "count", 0) + 1  # a thread may queue before its first timed run
    kinds = getattr(_queued, "kinds", None)
    if kinds is not None:
        kind = message_kind(msg)
        kinds[kind] = kinds.get(kind, 0) + 1
    _enqueue(ctx, msg)


class _MergedProfile:
    """The CPU-clock profiles of every script run so far, merged, and written out now and then."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stats: pstats.Stats | None = None
        self._written_at = 0.0

    def add(self, profile: cProfile.Profile) -> None:
        with self._lock:
            if self._stats is None:
                self._stats = pstats.Stats(profile)
            else:
                self._stats.add(profile)
            if time.monotonic() - self._written_at > 2:
                self._write()

    def write(self) -> None:
        with self._lock:
            self._write()

    def _write(self) -> None:
        if self._stats is not None:
            self._stats.dump_stats(self.path)
            self._written_at = time.monotonic()


_merged = _MergedProfile(_PROFILE) if _PROFILE is not None else None
if _merged is not None:
    atexit.register(_merged.write)


def _page_path(ctx: Any) -> str:
    pages = ctx.pages_manager
    return pages.get_pages().get(pages.current_page_script_hash, {}).get("url_pathname", "?")


def _timed_run(func: Any, ctx: Any) -> Any:
    _queued.count = 0
    _queued.kinds = {}
    start, thread_start, process_start = time.perf_counter(), time.thread_time(), time.process_time()
    profile = cProfile.Profile(time.thread_time) if _merged is not None else None
    if profile is not None:
        profile.enable()
    try:
        return _run_script(func, ctx)
    finally:
        if profile is not None and _merged is not None:
            profile.disable()
            _merged.add(profile)
        if _LOG is not None:
            figures = {
                "exec_ms": (time.perf_counter() - start) * 1000,
                "exec_cpu_ms": (time.thread_time() - thread_start) * 1000,
                "process_cpu_at_start_ms": process_start * 1000,
                "kind": "fragment" if ctx.fragment_ids_this_run else "whole",
                "page": _page_path(ctx),
                "messages": _queued.count,
                "message_kinds": _queued.kinds,
            }
            with _LOG.open("a") as log:
                log.write(json.dumps(figures) + "\n")


script_runner.exec_func_with_error_handling = _timed_run
if _GC_LOG is not None:
    gc.callbacks.append(CollectionLog(_GC_LOG))
if _LOG is not None:
    ScriptRunContext.enqueue = _counted_enqueue  # type: ignore[method-assign,assignment]

if __name__ == "__main__":
    main(prog_name="streamlit")
