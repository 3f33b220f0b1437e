"""A class locks an answer at once: N learners have a lesson page open, and at the instructor's word all
of them lock one marked question in the same instant, each its own option.

    python -m bench.class_locks --sessions 100 --page four-runs --question r1

Each learner opens the page as a browser does (and reports its learner id, as the identity component
does), then waits for the others. Reported: the time from pressing *Lock in my answer* to the end of
the run it started, p50 and p95; the messages each lock brought back and whether any ran the whole app;
the server's CPU time over the locks alone, per lock; and how many learners saw their own option locked
(a lock that did not hold, or showed someone else's option, is counted as such). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.class_opens import class_server, whole_runs_of_report
from bench.paths import RESULTS_DIR
from bench.stats import LatencySummary, save_figures, summarise
from core.questions import Question, load_bank
from tests.harness.browser import Browser, identify, rerun_here
from tests.harness.load_client import Session
from tests.harness.page_model import WidgetInfo
from tests.harness.server import ResourceSampler, throwaway_store


@dataclass(frozen=True)
class Lock:
    """One learner's lock."""

    latency_ms: float  # from the press to the end of the run it started
    messages: int  # what the lock brought back
    whole_runs: int  # runs of the whole app it started (0 when only fragments ran)
    held: bool  # the question now shows this learner's option, locked


@dataclass(frozen=True)
class Outcome:
    """The class's locks, summarised, and what they cost the server."""

    sessions: int
    page: str
    question: str
    lock: LatencySummary
    messages_per_lock: float
    whole_runs_per_lock: float
    held: int
    server_cpu_ms_per_lock: float
    wall_s: float


def option_for(question: Question, index: int) -> str:
    """The option learner `index` picks: learners take turns over the options, so answers differ."""
    options = question.options
    return options[index % len(options)].id


def _asking(session: Session, question: Question) -> WidgetInfo | None:
    """The radio on the page that asks `question`, open or locked; None if the page draws none."""
    widgets = session.model.widgets.values()
    return next((w for w in widgets if w.kind == "radio" and w.label == question.prompt), None)


async def _learner(
    port: int,
    index: int,
    page: str,
    question: Question,
    ready: asyncio.Queue[None],
    go: asyncio.Event,
    timeout_s: float,
) -> Lock:
    """Open the page, report an id, say it is ready, then lock this learner's option when told to."""
    browser = Browser()
    session = Session(port=port, marker=f"bench-l{index:03d}", timeout_s=timeout_s, cookies=browser.cookies)
    try:
        await session.connect(page)
        await identify(session, browser)
        radio = _asking(session, question)
        if radio is None:
            raise ValueError(f"/{page} does not ask {question.id}.")
        submit = next(w for w in session.model.widgets.values() if w.is_submit and w.form_id == radio.form_id)
        choice = question.option_text(option_for(question, index))
        await ready.put(None)
        await go.wait()
        before = session.traffic.messages
        session.model.set_value(radio.id, choice)
        session.model.click(submit.id)
        result = await rerun_here(session)
        locked = _asking(session, question)
        held = locked is not None and locked.disabled and locked.default == choice
        return Lock(result.latency_ms, session.traffic.messages - before, whole_runs_of_report(result), held)
    finally:
        await session.close()


async def _class(
    port: int, sessions: int, page: str, question: Question, sampler: ResourceSampler, timeout_s: float
) -> tuple[list[Lock], float, float]:
    ready: asyncio.Queue[None] = asyncio.Queue()
    go = asyncio.Event()
    tasks = [
        asyncio.create_task(_learner(port, i, page, question, ready, go, timeout_s)) for i in range(sessions)
    ]
    for _ in range(sessions):
        await ready.get()
    before = sampler.read().cpu_s
    started = time.perf_counter()
    go.set()
    locks = await asyncio.gather(*tasks)
    return locks, sampler.read().cpu_s - before, time.perf_counter() - started


def run_locks(
    sessions: int, page: str, question_id: str, *, timeout_s: float = 120.0, log_dir: Path = RESULTS_DIR
) -> Outcome:
    """Start a server (GC off, an empty store of its own), open `page` in `sessions` sessions, then lock
    `question_id` in all of them at once; summarise what the locks took."""
    if sessions < 1:
        raise ValueError("A class needs at least one learner.")
    question = load_bank().question(question_id)
    throwaway_store("lab-class-locks-")
    with class_server(page, timeout_s, log_dir / "class_locks_server.log") as (port, sampler):
        locks, cpu_s, wall_s = asyncio.run(_class(port, sessions, page, question, sampler, timeout_s))
    return Outcome(
        sessions=sessions,
        page=page,
        question=question_id,
        lock=summarise([lock.latency_ms for lock in locks]),
        messages_per_lock=sum(lock.messages for lock in locks) / sessions,
        whole_runs_per_lock=sum(lock.whole_runs for lock in locks) / sessions,
        held=sum(lock.held for lock in locks),
        server_cpu_ms_per_lock=cpu_s * 1000 / sessions,
        wall_s=wall_s,
    )


def describe(outcome: Outcome) -> str:
    """The outcome in a few lines."""
    return "\n".join(
        [
            f"{outcome.sessions} learners lock {outcome.question} on /{outcome.page} at once "
            f"({outcome.wall_s:.1f} s in all)",
            f"  lock:     p50 {outcome.lock.p50_ms:,.0f} ms, p95 {outcome.lock.p95_ms:,.0f} ms",
            f"  per lock: {outcome.messages_per_lock:.0f} messages, {outcome.whole_runs_per_lock:.2f} "
            f"whole-app runs, {outcome.server_cpu_ms_per_lock:.1f} ms of server CPU",
            f"  held:     {outcome.held} of {outcome.sessions} show their own option, locked",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Command line: run one class's locks and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--page", default="four-runs", help="url path of the page the learners have open")
    parser.add_argument("--question", default="r1", help="the marked question they lock")
    parser.add_argument("--out", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    outcome = run_locks(args.sessions, args.page, args.question)
    print(describe(outcome))
    save_figures(outcome, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
