"""`streamlit` command line that also logs how long every script run takes inside the server.

    BENCH_TIMING_LOG=runs.jsonl python -m bench.timed_server run Home.py [streamlit flags]

Wraps the function Streamlit's ScriptRunner calls to execute the app script (Streamlit
1.67: `script_runner.exec_func_with_error_handling`, the span Streamlit's own page
profile calls exec time). Each run appends one JSON line: the page's own cost, before
Streamlit's post-run garbage collection and before any message reaches a browser.
Only the benchmark's server process is patched; the app is run unchanged.
"""

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from streamlit.runtime.scriptrunner import script_runner
from streamlit.web.cli import main

_LOG = Path(os.environ["BENCH_TIMING_LOG"])
if not hasattr(script_runner, "exec_func_with_error_handling"):
    sys.exit(
        "bench.timed_server: this Streamlit version has no "
        "script_runner.exec_func_with_error_handling to time."
    )
_run_script = script_runner.exec_func_with_error_handling


def _timed_run(func: Any, ctx: Any) -> Any:
    start, thread_start, process_start = time.perf_counter(), time.thread_time(), time.process_time()
    try:
        return _run_script(func, ctx)
    finally:
        figures = {
            "exec_ms": (time.perf_counter() - start) * 1000,
            "exec_cpu_ms": (time.thread_time() - thread_start) * 1000,
            "process_cpu_at_start_ms": process_start * 1000,
        }
        with _LOG.open("a") as log:
            log.write(json.dumps(figures) + "\n")


script_runner.exec_func_with_error_handling = _timed_run

if __name__ == "__main__":
    main(prog_name="streamlit")
