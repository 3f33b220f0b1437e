"""The CPU time of a learner's first clicks in a fresh process, cold or warmed as the server warms itself.

Shared by the benches of first clicks (`bench.run_a_picks`, `bench.scaling_tabs`): each measures its clicks
in one in-process session (`streamlit.testing.v1.AppTest`), and `compare` runs it twice, each time in a new
process so that the cold one finds nothing cached. For each click it is the process's CPU time over the
rerun (AppTest waits while its script thread runs, so this is the run's CPU and AppTest's small share).
Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

MODES = ("cold", "warm")
Figures = dict[str, list[float]]


def cpu_ms(widget: Any) -> float:
    """The process's CPU milliseconds over one rerun of `widget`'s session (a changed widget, or AppTest)."""
    start = time.process_time()
    widget.run()
    return (time.process_time() - start) * 1000


def measure_here(clicks: Callable[[bool], Figures], mode: str) -> int:
    """Run `clicks(warm)` here against a learner store of its own; print its figures as JSON."""
    os.environ.setdefault("LAB_DATA_DIR", tempfile.mkdtemp(prefix="bench-first-clicks-"))
    os.environ.pop("LAB_DATABASE_URL", None)
    print(json.dumps(clicks(mode == "warm")))
    return 0


def compare(module: str) -> None:
    """`python -m <module> --only cold`, then `--only warm`, each in a fresh process; print the figures."""
    for mode in MODES:
        done = subprocess.run(
            [sys.executable, "-m", module, "--only", mode], capture_output=True, text=True, check=True
        )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        for what, ms in figures.items():
            shown = ", ".join(f"{m:.0f}" for m in ms)
            print(f"{mode:>4} {what}: {shown} ms CPU (median {statistics.median(ms):.0f})")


def main(argv: list[str] | None, *, module: str, clicks: Callable[[bool], Figures], doc: str | None) -> int:
    """The command line of a first-clicks bench: both modes in fresh processes, or `--only` one, here."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=MODES, help="measure one, in this process")
    args = parser.parse_args(argv)
    if args.only is not None:
        return measure_here(clicks, args.only)
    compare(module)
    return 0
