"""`streamlit` command line that also logs how long every script run takes inside the server.

    BENCH_TIMING_LOG=runs.jsonl python -m bench.timed_server run Home.py [streamlit flags]

Wraps the function Streamlit's ScriptRunner calls to execute the app script (Streamlit 1.67:
`script_runner.exec_func_with_error_handling`, the span Streamlit's own page profile calls exec time).
Each run appends one JSON line: the page's own cost on the wall clock and on the thread's CPU clock
(before Streamlit's post-run garbage collection and before any message reaches a browser), the run's
kind (the whole app, or fragments alone), its page's URL path and the messages it queued. Only the
benchmark's server process is patched; the app is run unchanged. Where the time goes inside a run is
the sampler's question (bench/sampled.py), not this log's.
"""

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.web.cli import main

if not os.environ.get("BENCH_TIMING_LOG"):
    sys.exit("bench.timed_server: set BENCH_TIMING_LOG to the file that gets one line a script run.")
if not hasattr(script_runner, "exec_func_with_error_handling"):
    sys.exit(
        "bench.timed_server: this Streamlit version has no "
        "script_runner.exec_func_with_error_handling to time."
    )
_LOG = Path(os.environ["BENCH_TIMING_LOG"])
_run_script = script_runner.exec_func_with_error_handling
_enqueue = ScriptRunContext.enqueue
_queued = threading.local()  # messages the current run of this thread has queued


def _counted_enqueue(ctx: Any, msg: Any) -> None:
    _queued.count = getattr(_queued, "count", 0) + 1  # a thread may queue before its first timed run
    _enqueue(ctx, msg)


def _page_path(ctx: Any) -> str:
    pages = ctx.pages_manager
    return pages.get_pages().get(pages.current_page_script_hash, {}).get("url_pathname", "?")


def _timed_run(func: Any, ctx: Any) -> Any:
    _queued.count = 0
    start, thread_start = time.perf_counter(), time.thread_time()
    try:
        return _run_script(func, ctx)
    finally:
        figures = {
            "exec_ms": (time.perf_counter() - start) * 1000,
            "exec_cpu_ms": (time.thread_time() - thread_start) * 1000,
            "kind": "fragment" if ctx.fragment_ids_this_run else "whole",
            "page": _page_path(ctx),
            "messages": _queued.count,
        }
        with _LOG.open("a") as log:
            log.write(json.dumps(figures) + "\n")


script_runner.exec_func_with_error_handling = _timed_run
ScriptRunContext.enqueue = _counted_enqueue  # type: ignore[method-assign,assignment]

if __name__ == "__main__":
    main(prog_name="streamlit")
