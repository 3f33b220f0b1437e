"""CPU time per rerun of every page, counted on the script thread, with an optional profile.

    python -m bench.page_cpu --reruns 20
    python -m bench.page_cpu --reruns 20 --profile scaling --top 30
    python -m bench.page_cpu --reruns 5 --new-charts

One in-process session (`streamlit.testing.v1.AppTest`) visits every page once, then reruns each
page `--reruns` times without changing anything. For each rerun it counts the CPU time of the
thread that runs the script (`time.thread_time` around the function Streamlit's ScriptRunner
executes a page with, as bench/timed_server.py wraps it): the script's own work and Streamlit's
building of every element it sends, without the test harness, other threads or other processes.
On a shared machine wall times move with everyone's load; this figure barely does. AppTest runs a
page it switches to on its own, in Streamlit's pages-folder mode, so the frame Home.py draws around
every page (sidebar boxes, learner check, menu) is not in this figure: it is the page's own cost.
`bench.page_timing`'s server column times whole runs in a real server.

Streamlit's hello demo's Hello page is measured the same way, as the yardstick. `--profile PAGE`
(a URL path, "" for Home) runs cProfile on that page's reruns and prints the functions with the
most own time, then the most cumulative time. `--new-charts` empties the chart caches before each
rerun of an app page, so every rerun builds its charts: what a learner costs whose settings nobody in
the process used before.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.paths import RESULTS_DIR
from tests.harness.paths import HELLO_SCRIPT, REPO_ROOT

HELLO = "hello demo's Hello page"
OURS = str(REPO_ROOT) + "/(core|ui|charts|pages|store)/"  # what the profile's last table keeps


class ScriptClock:
    """Wraps Streamlit's script execution to count each run's CPU time on its own thread, and the
    messages it sends (each element is one; under load each pays Streamlit's per-message costs)."""

    def __init__(self) -> None:
        self.runs_ms: list[float] = []
        self.runs_messages: list[int] = []
        self.profile: cProfile.Profile | None = None
        self._messages = 0

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Patch `script_runner.exec_func_with_error_handling` for the duration of the block."""
        from streamlit.runtime.scriptrunner import script_runner
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
        from streamlit.testing.v1 import app_test, local_script_runner

        original = getattr(script_runner, "exec_func_with_error_handling", None)
        if original is None:
            sys.exit("bench.page_cpu: this Streamlit version has no exec_func_with_error_handling to time.")

        enqueue = ScriptRunContext.enqueue

        def counted(ctx: Any, msg: Any) -> None:
            self._messages += 1
            enqueue(ctx, msg)

        def timed(func: Callable[[], Any], ctx: Any) -> Any:
            self._messages = 0
            start = time.thread_time()
            profile = self.profile
            if profile is not None:
                profile.enable()
            try:
                return original(func, ctx)
            finally:
                if profile is not None:
                    profile.disable()
                self.runs_ms.append((time.thread_time() - start) * 1000)
                self.runs_messages.append(self._messages)

        # AppTest compiles Home.py and the page afresh every run (a new ScriptCache each time, for its
        # runner and its pages manager); a server keeps one bytecode cache per process.
        shared_cache = ScriptCache()
        script_runner.exec_func_with_error_handling = timed
        ScriptRunContext.enqueue = counted  # type: ignore[method-assign,assignment]
        for module in (app_test, local_script_runner):
            setattr(module, "ScriptCache", lambda: shared_cache)  # noqa: B010  # mypy: a class
        try:
            yield
        finally:
            script_runner.exec_func_with_error_handling = original
            ScriptRunContext.enqueue = enqueue  # type: ignore[method-assign]
            for module in (app_test, local_script_runner):
                setattr(module, "ScriptCache", ScriptCache)  # noqa: B010


def _app_pages() -> list[tuple[str, str]]:
    from ui.nav import PAGES

    return [(entry.title, f"pages/{entry.file}") for entry in PAGES]


def _reruns(
    clock: ScriptClock, run: Callable[[], Any], reruns: int, before: Callable[[], None] | None = None
) -> tuple[list[float], list[int]]:
    """CPU ms and messages sent of each of `reruns` reruns, calling `before` ahead of each."""
    clock.runs_ms.clear()
    clock.runs_messages.clear()
    for _ in range(reruns):
        if before is not None:
            before()
        run()
    return list(clock.runs_ms), list(clock.runs_messages)


def _forget_charts() -> None:
    """Empty the process's chart caches (ui/charts.py), as the tests do, so the next run builds every
    chart: what a learner whose settings nobody used before costs."""
    from ui import charts

    charts._charts.clear()
    charts._shared.clear()


def measure(
    reruns: int, profile_page: str | None, top: int = 25, *, new_charts: bool = False
) -> dict[str, Any]:
    """CPU ms of every rerun, by page, for the app and the hello page; the profile text if asked. With
    `new_charts`, every rerun of an app page builds its charts anew."""
    from streamlit.testing.v1 import AppTest

    clock = ScriptClock()
    pages: dict[str, list[float]] = {}
    messages: dict[str, list[int]] = {}
    profile_report = ""
    with clock.installed():
        at = AppTest.from_file(str(REPO_ROOT / "Home.py"), default_timeout=60)
        at.run()
        for _, path in _app_pages():  # the first visit fills the per-process caches
            at.switch_page(path).run()
        for title, path in _app_pages():
            at.query_params.clear()
            at.switch_page(path).run()
            wanted = profile_page is not None and path.endswith(f"/{profile_page or 'home'}.py")
            if wanted:
                clock.profile = cProfile.Profile()
            pages[title], messages[title] = _reruns(
                clock, at.run, reruns, _forget_charts if new_charts else None
            )
            if wanted and clock.profile is not None:
                profile_report = profile_text(
                    clock.profile, f"cProfile of {reruns} reruns (times are totals over them)", top
                )
                clock.profile = None
        hello = AppTest.from_file(str(HELLO_SCRIPT), default_timeout=60)
        hello.run()
        pages[HELLO], messages[HELLO] = _reruns(clock, hello.run, reruns)
    return {"reruns": reruns, "runs_ms": pages, "runs_messages": messages, "profile": profile_report}


def profile_text(source: cProfile.Profile | str, heading: str, top: int) -> str:
    """A profile (or a pstats file) as text: `heading`, the functions with the most own time, the most
    cumulative time, and our code (core/, ui/, charts/, pages/, store/) by cumulative time."""
    out = io.StringIO()
    stats = pstats.Stats(source, stream=out)
    out.write(heading + "\n")
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    out.write("Our code only (core/, ui/, charts/, pages/, store/), by cumulative time\n")
    stats.sort_stats("cumulative").print_stats(OURS, top)
    return out.getvalue()


def table(result: dict[str, Any]) -> str:
    """Markdown table: CPU ms per rerun (least and p50), the p50's ratio to the hello page's, and the
    messages a rerun sends (p50).

    Other processes on the same cores still slow a thread's work (shared caches, hyper-threads), so
    the least of the reruns is the steadiest figure on a shared machine.
    """
    runs = result["runs_ms"]
    hello = statistics.median(runs[HELLO])
    messages = result.get("runs_messages", {})
    lines = [
        "| page | CPU ms per rerun, least | p50 | p50 × hello | messages per rerun |",
        "| --- | --- | --- | --- | --- |",
    ]
    for page, values in runs.items():
        p50 = statistics.median(values)
        sent = f"{statistics.median(messages[page]):.0f}" if messages.get(page) else "-"
        lines.append(f"| {page} | {min(values):.1f} | {p50:.1f} | {p50 / hello:.1f}× | {sent} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reruns", type=int, default=20)
    parser.add_argument("--profile", metavar="PAGE", help='URL path of a page to profile ("" for Home)')
    parser.add_argument("--top", type=int, default=25, help="functions listed in each profile table")
    parser.add_argument(
        "--new-charts", action="store_true", help="build every chart anew on each rerun (no chart cache)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "page_cpu.json")
    args = parser.parse_args(argv)
    # The app's embedded store goes to a throwaway folder, never a developer's .lab-data/.
    os.environ.setdefault("LAB_DATA_DIR", tempfile.mkdtemp(prefix="bench-page-cpu-"))
    os.environ.pop("LAB_DATABASE_URL", None)
    profile = None if args.profile is None else args.profile.replace("-", "_")
    result = measure(args.reruns, profile, args.top, new_charts=args.new_charts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({k: v for k, v in result.items() if k != "profile"}, indent=1))
    if result["profile"]:
        print(result["profile"])
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
