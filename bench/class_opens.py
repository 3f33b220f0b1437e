"""A class opens one link at once: N browsers load a lesson page in the same instant, and each does what
the identity component's JavaScript does: report the learner id its storage keeps, once, unless the
script already knows it. New browsers keep the id the page offers; with `--returning`, each browser's
storage and cookie hold a learner with one answer locked on Four runs, as after a reload or a new tab.

    python -m bench.class_opens --sessions 50 --page four-runs
    python -m bench.class_opens --sessions 50 --page four-runs --returning

For each learner, the time from opening the page to the end of its first run (when the page is drawn)
and to the end of the run its id report led to (when the sidebar says *Saved*); the server's CPU time
over the whole opening, per learner (after one visit to the root and one to the page, which import
what the page needs, once per process); how many whole-app runs each learner cost; and the messages
each received. Reports figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.paths import RESULTS_DIR
from bench.stats import LatencySummary, save_figures, summarise
from core.questions import load_bank
from store import LearnerStore
from store.engine import default_url
from store.ids import new_learner_id
from tests.harness.browser import IDENTITY_COOKIE, Browser, identify
from tests.harness.load_client import RunResult, Session, open_root_once
from tests.harness.paths import REPO_ROOT
from tests.harness.server import ResourceSampler, StreamlitServer, throwaway_store

FOUR_RUNS_QUESTION = "r1"
NO_WORK: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}  # a new record


@dataclass(frozen=True)
class Opening:
    """One learner's opening of the page."""

    drawn_ms: float  # until the first run ended
    saved_ms: float  # until the run the id report led to ended
    whole_runs: int  # whole-app runs, the first one included
    messages: int


@dataclass(frozen=True)
class Outcome:
    """The class's openings, summarised, and what they cost the server."""

    sessions: int
    page: str
    returning: bool
    drawn: LatencySummary
    saved: LatencySummary
    whole_runs_per_learner: float
    messages_per_learner: float
    server_cpu_ms_per_learner: float
    wall_s: float


def whole_runs_of_report(report: RunResult) -> int:
    """How many whole-app runs one report of the id started: a whole run asked for, a fragment's run
    that ran the whole app after it, or none when the fragment ran alone."""
    if report.status != ForwardMsg.FINISHED_SUCCESSFULLY:
        return 0
    return report.script_runs - (1 if report.fragment_id else 0)


async def _open(port: int, index: int, page: str, stored_id: str | None, timeout_s: float) -> Opening:
    # A returning browser keeps the id in its storage and the component's copy in its cookie.
    browser = Browser(cookies={IDENTITY_COOKIE: stored_id} if stored_id else {}, stored_id=stored_id)
    session = Session(port=port, marker=f"bench-c{index:03d}", timeout_s=timeout_s, cookies=browser.cookies)
    start = time.perf_counter()
    try:
        first = await session.connect(page)
        drawn_ms = (time.perf_counter() - start) * 1000
        report = await identify(session, browser)
        saved_ms = (time.perf_counter() - start) * 1000
        whole_runs = first.script_runs + (0 if report is None else whole_runs_of_report(report))
        return Opening(drawn_ms, saved_ms, whole_runs, session.traffic.messages)
    finally:
        await session.close()


async def _warm_up(port: int, page: str, timeout_s: float) -> None:
    """Open the root, then the page, once each: the page's first visit imports its modules, a cost the
    process pays once and a class does not pay per learner."""
    await open_root_once(port, timeout_s=timeout_s)
    await _open(port, 0, page, None, timeout_s)


async def _class(port: int, page: str, stored_ids: list[str | None], timeout_s: float) -> list[Opening]:
    openings = (_open(port, i, page, stored_id, timeout_s) for i, stored_id in enumerate(stored_ids))
    return list(await asyncio.gather(*openings))


def returning_learners(count: int) -> list[str]:
    """`count` learners in the app's store, each with one answer locked on Four runs."""
    store = LearnerStore.open(default_url())
    answer = load_bank().question(FOUR_RUNS_QUESTION).correct
    learners = [new_learner_id() for _ in range(count)]
    for learner in learners:
        store.open_record(learner, NO_WORK, shown={})
        store.add_answer(learner, FOUR_RUNS_QUESTION, answer)
    return learners


@contextmanager
def class_server(page: str, timeout_s: float, log_path: Path) -> Iterator[tuple[int, ResourceSampler]]:
    """A server for a class (the lab's Home.py, GC off) that has shown `page` once, and a sampler of its
    process: its port and the sampler, for the block."""
    with StreamlitServer(script=REPO_ROOT / "Home.py", post_script_gc=False, log_path=log_path) as server:
        assert server.process is not None
        asyncio.run(_warm_up(server.port, page, timeout_s))
        yield server.port, ResourceSampler(pid=server.process.pid)


def run_class(
    sessions: int,
    page: str,
    *,
    returning: bool = False,
    timeout_s: float = 120.0,
    log_dir: Path = RESULTS_DIR,
) -> Outcome:
    """Start a server (GC off, an empty store of its own), let `sessions` browsers (new, or returning
    ones) open `page` at once, and summarise what it took."""
    if sessions < 1:
        raise ValueError("A class needs at least one learner.")
    throwaway_store("lab-class-opens-")
    stored_ids: list[str | None] = [*returning_learners(sessions)] if returning else [None] * sessions
    with class_server(page, timeout_s, log_dir / "class_opens_server.log") as (port, sampler):
        before = sampler.read()
        started = time.perf_counter()
        openings = asyncio.run(_class(port, page, stored_ids, timeout_s))
        wall_s = time.perf_counter() - started
        cpu_s = sampler.read().cpu_s - before.cpu_s
    return Outcome(
        sessions=sessions,
        page=page,
        returning=returning,
        drawn=summarise([o.drawn_ms for o in openings]),
        saved=summarise([o.saved_ms for o in openings]),
        whole_runs_per_learner=sum(o.whole_runs for o in openings) / sessions,
        messages_per_learner=sum(o.messages for o in openings) / sessions,
        server_cpu_ms_per_learner=cpu_s * 1000 / sessions,
        wall_s=wall_s,
    )


def describe(outcome: Outcome) -> str:
    """The outcome in a few lines."""
    return "\n".join(
        [
            f"{outcome.sessions} {'returning' if outcome.returning else 'new'} browsers open /{outcome.page} "
            f"at once ({outcome.wall_s:.1f} s in all)",
            f"  page drawn:  p50 {outcome.drawn.p50_ms:,.0f} ms, p95 {outcome.drawn.p95_ms:,.0f} ms",
            f"  saved:       p50 {outcome.saved.p50_ms:,.0f} ms, p95 {outcome.saved.p95_ms:,.0f} ms",
            f"  per learner: {outcome.whole_runs_per_learner:.2f} whole-app runs, "
            f"{outcome.messages_per_learner:.0f} messages, "
            f"{outcome.server_cpu_ms_per_learner:.1f} ms of server CPU",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Command line: run one class opening and print (and optionally save) its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--page", default="four-runs", help="url path of the page the link opens")
    parser.add_argument("--returning", action="store_true", help="browsers that keep a learner with work")
    parser.add_argument("--out", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    outcome = run_class(args.sessions, args.page, returning=args.returning)
    print(describe(outcome))
    save_figures(outcome, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
