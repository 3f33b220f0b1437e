"""Per-page rerun timing for the app and Streamlit's hello demo, printed as ratios.

    python -m bench.page_timing --targets app,hello --gc on,off --reruns 20
    python -m bench.page_timing --gc off --nodelay on,off --via direct,proxy --reruns 10

One session, nothing else running against the server. For every page: visit it, then
rerun it `--reruns` times without changing anything (as pressing "R" does). Two figures
per rerun: the server-side time of the script run (logged inside the server by
bench/timed_server.py) and the latency the client saw (script run + post-run GC +
delivery). Ratios
compare each page with the hello demo's Hello page under the same setup.

A setup is the GC setting, the app's TCP_NODELAY fix on or off (`LAB_TCP_NODELAY=0`, see
server/sockets.py; the hello demo is always served as Streamlit ships it) and the path: straight
to the server, or through the workshop proxy (deploy/proxy.sh: HAProxy, HTTPS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.paths import RESULTS_DIR
from bench.proxy import workshop_proxy
from bench.scenarios import TARGETS, Target
from bench.stats import ratio, summarise
from tests.harness.load_client import Session
from tests.harness.server import StreamlitServer, throwaway_store

BASELINE = ("hello", "")


class TimingLog:
    """Reads the JSON lines bench/timed_server.py appends, one per script run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def new_runs(self) -> list[dict[str, Any]]:
        """The script runs logged since the last call, one dict each."""
        if not self.path.exists():
            return []
        with self.path.open() as log:
            log.seek(self._offset)
            lines = log.read()
            self._offset = log.tell()
        return [json.loads(line) for line in lines.splitlines() if line.strip()]

    def new_runs_ms(self) -> list[float]:
        """Script-run times logged since the last call."""
        return [run["exec_ms"] for run in self.new_runs()]


async def _time_pages(
    port: int, target: Target, log: TimingLog, reruns: int, page_budget_s: float, tls: bool, slow_demos: bool
) -> dict[str, Any]:
    session = Session(port=port, marker="bench-s000-time", timeout_s=120, tls=tls)
    try:
        await session.connect("")
        paths = target.timing_pages if slow_demos else target.timing_pages and target.timing_pages[:1]
        pages = list(session.model.pages) if paths is None else [session.model.page(p) for p in paths]
        for page in pages:  # warm-up pass: first visits import modules and fill caches
            await session.rerun(page_hash=page.script_hash)
        log.new_runs_ms()
        timings: dict[str, Any] = {}
        for page in pages:
            await session.rerun(page_hash=page.script_hash)
            log.new_runs_ms()
            timings[page.url_path] = {
                "title": page.title,
                **await _time_reruns(session, log, reruns, page_budget_s),
            }
            if session.model.body_fragment:
                # What a click inside a lesson page's body waits: a rerun of the body fragment alone.
                timings[page.url_path]["body"] = await _time_reruns(
                    session, log, reruns, page_budget_s, click=session.model.click_in_body
                )
            if session.model.clickable_sections:
                # And inside the first part of the body that reruns alone (ui/frame.lesson_section).
                timings[page.url_path]["section"] = await _time_reruns(
                    session, log, reruns, page_budget_s, click=session.model.click_in_section
                )
        return timings
    finally:
        await session.close()


async def _time_reruns(
    session: Session,
    log: TimingLog,
    reruns: int,
    page_budget_s: float,
    *,
    click: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Server, client and delivery times of `reruns` reruns of the current page, changing nothing:
    the whole page (as pressing "R" does), or the fragment `click` names before each rerun alone."""
    server_ms: list[float] = []
    client_ms: list[float] = []
    delivery_ms: list[float] = []
    exceptions = 0
    page_deadline = time.monotonic() + page_budget_s
    # Slow pages (the hello demo's animations) stop early, after at least three reruns.
    for done in range(reruns):
        if done >= 3 and time.monotonic() > page_deadline:
            break
        if click is not None:
            click()
        result = await session.rerun()
        client_ms.append(result.latency_ms)
        server_ms.append(sum(log.new_runs_ms()))
        delivery_ms.append(client_ms[-1] - server_ms[-1])
        exceptions += len(result.exceptions)
    return {
        "server": summarise(server_ms).as_dict(),
        "client": summarise(client_ms).as_dict(),
        # What the tab waited beyond the script run, rerun by rerun: the delivery stall.
        "delivery": summarise(delivery_ms).as_dict(),
        "exception_elements": exceptions,
    }


def setup_label(gc: str, nodelay: str, via: str) -> str:
    """The results key (and table cell) for one setup."""
    return f"GC {gc}, NODELAY {nodelay}, {via}"


def measure(
    target: Target,
    post_script_gc: bool,
    reruns: int,
    page_budget_s: float,
    results_dir: Path,
    *,
    nodelay: bool = True,
    via_proxy: bool = False,
    slow_demos: bool = True,
) -> dict[str, Any]:
    """Time every page of one target under one setup."""
    stem = (
        f"timing-{target.name}-{'gc' if post_script_gc else 'nogc'}"
        f"{'' if nodelay else '-nagle'}{'-proxy' if via_proxy else ''}"
    )
    log = TimingLog(results_dir / f"{stem}.runs.jsonl")
    log.path.unlink(missing_ok=True)
    # Reruns go back to back, faster than the app's per-connection message cap allows (10 a
    # second, server/message_rate.py), which would drop some: the cap is off for this one session.
    env = {"BENCH_TIMING_LOG": str(log.path), "LAB_MESSAGES_PER_S": "0"}
    if not nodelay:
        env["LAB_TCP_NODELAY"] = "0"
    server = StreamlitServer(
        script=target.script,
        post_script_gc=post_script_gc,
        log_path=results_dir / f"{stem}.server.log",
        env=env,
        launcher="bench.timed_server",
    )
    with server:
        if not via_proxy:
            return asyncio.run(
                _time_pages(server.port, target, log, reruns, page_budget_s, False, slow_demos)
            )
        with workshop_proxy([server.port], results_dir / f"{stem}.proxy.log") as port:
            return asyncio.run(_time_pages(port, target, log, reruns, page_budget_s, True, slow_demos))


def _same_path(one: str, other: str) -> bool:
    """Whether two setup labels differ at most in their NODELAY setting."""

    def strip(label: str) -> str:
        return label.replace("NODELAY off", "NODELAY on")

    return strip(one) == strip(other)


def add_ratios(results: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Give every page its p50 ratios against the baseline page under the same setup."""
    for setup, targets in results.items():
        # The hello demo has no NODELAY switch: it is timed once, under the fix's first setting.
        hello = next(
            (t[BASELINE[0]] for s, t in results.items() if BASELINE[0] in t and _same_path(s, setup)), {}
        )
        base = hello.get(BASELINE[1])
        for pages in targets.values():
            for page in pages.values():
                for timed in (page, page.get("body"), page.get("section")):
                    if timed is None:
                        continue
                    timed["server_p50_vs_hello"] = ratio(
                        timed["server"]["p50_ms"], base and base["server"]["p50_ms"]
                    )
                    timed["client_p50_vs_hello"] = ratio(
                        timed["client"]["p50_ms"], base and base["client"]["p50_ms"]
                    )


def _cell(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """A markdown table: one row per page and GC setting."""
    rows = [
        "| setup | app | page | server p50 ms | server p95 ms | client p50 ms | client p95 ms "
        "| client − server p50 ms | server × hello | client × hello | exceptions |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for setup, targets in results.items():
        for name, pages in targets.items():
            for path, page in pages.items():
                timed_runs = [(f"{page['title']} (`/{path}`)", page)]
                if "body" in page:
                    timed_runs.append((f"{page['title']}, a click in its body", page["body"]))
                if "section" in page:
                    timed_runs.append((f"{page['title']}, a click in its first section", page["section"]))
                for label, timed in timed_runs:
                    rows.append(
                        f"| {setup} | {name} | {label} | "
                        f"{_cell(timed['server']['p50_ms'])} | {_cell(timed['server']['p95_ms'])}"
                        f" | {_cell(timed['client']['p50_ms'])} | {_cell(timed['client']['p95_ms'])}"
                        f" | {_cell(timed.get('delivery', {}).get('p50_ms'))}"
                        f" | {_cell(timed['server_p50_vs_hello'], '×')} | "
                        f"{_cell(timed['client_p50_vs_hello'], '×')} | {timed['exception_elements']} |"
                    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", default="app,hello")
    parser.add_argument("--gc", default="on,off", help="runner.postScriptGC settings to try")
    parser.add_argument(
        "--nodelay", default="on", help="the app's TCP_NODELAY fix: on, off, or on,off (LAB_TCP_NODELAY)"
    )
    parser.add_argument("--via", default="direct", help="direct, proxy (HAProxy, HTTPS), or both")
    parser.add_argument(
        "--no-slow-demos",
        action="store_true",
        help="time only the hello demo's Hello page, not its Plotting and Animation demos (seconds a run)",
    )
    parser.add_argument("--reruns", type=int, default=20, help="reruns per page")
    parser.add_argument(
        "--page-budget-s", type=float, default=30.0, help="stop a slow page's reruns after this long"
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "page_timing.json")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    throwaway_store("bench-page-timing-")
    if not 1 <= args.reruns <= 1000:
        parser.error("--reruns must be between 1 and 1000")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for gc in args.gc.split(","):
        for via in args.via.split(","):
            for nodelay in args.nodelay.split(","):
                results[setup_label(gc, nodelay, via)] = {
                    name: measure(
                        TARGETS[name],
                        gc == "on",
                        args.reruns,
                        args.page_budget_s,
                        args.out.parent,
                        nodelay=nodelay == "on",
                        via_proxy=via == "proxy",
                        slow_demos=not args.no_slow_demos,
                    )
                    for name in args.targets.split(",")
                    # Only the app has the fix: the hello demo is timed once per GC setting and path.
                    if name == "app" or nodelay == args.nodelay.split(",")[0]
                }
    add_ratios(results)
    args.out.write_text(json.dumps(results, indent=1))
    print(table(results))
    print(f"\nfigures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
