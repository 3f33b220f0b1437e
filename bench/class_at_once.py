"""A class acting in the same instant on one lesson page: two scenarios of the load runner.

    python -m bench.run_load --mode locks --sessions 100 --page four-runs --question r1
    python -m bench.run_load --mode opens --sessions 100 --page four-runs [--returning]

*locks*: every learner has the page open (and has reported its learner id, as the identity component
does); at the instructor's word all of them lock one marked question, each its own option. Timed: from
pressing *Lock in my answer* to the end of the run it started; a lock counts as held when the question
then shows the learner's own option, locked.

*opens*: every browser opens the link at once and does what the identity component's JavaScript does:
report the learner id its storage keeps, once. New browsers keep the id the page offers; returning ones
(`--returning`) hold a learner with one answer locked on Four runs, as after a reload. Timed: to the end
of the first run (the page is drawn) and to the end of the run the id report led to (*Saved*).

Both report the messages and whole-app runs each learner cost and the server's CPU time over the act
alone, per learner, from one server (GC off, an empty store of its own) that has shown the page once.
Nothing is asserted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.paths import RESULTS_DIR
from bench.stats import LatencySummary, summarise
from core.questions import Question, load_bank
from store import LearnerStore
from store.engine import default_url
from store.ids import new_learner_id
from tests.harness.browser import IDENTITY_COOKIE, Browser, identify, rerun_here
from tests.harness.load_client import RunResult, Session, open_root_once
from tests.harness.page_model import WidgetInfo
from tests.harness.paths import REPO_ROOT
from tests.harness.server import ResourceSampler, StreamlitServer, throwaway_store

FOUR_RUNS_QUESTION = "r1"
NO_WORK: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}  # a new record


@dataclass(frozen=True)
class Act:
    """One learner's part: what was timed (by name, in order), and what it cost."""

    timed_ms: dict[str, float]
    messages: int
    whole_runs: int  # whole-app runs it started (0 when only fragments ran)
    held: bool = True  # locks: the question shows this learner's own option, locked


@dataclass(frozen=True)
class Outcome:
    """The class's acts, summarised, and what they cost the server."""

    scenario: str  # what the class did, e.g. "lock r1 on /four-runs"
    sessions: int
    page: str
    timed: dict[str, LatencySummary]
    messages_per_learner: float
    whole_runs_per_learner: float
    held: int
    server_cpu_ms_per_learner: float
    wall_s: float


# A learner: given the port, its index, a queue to say it is ready on and the word to act on.
Learner = Callable[[int, int, "asyncio.Queue[None]", asyncio.Event], Coroutine[Any, Any, Act]]


def whole_runs_of_report(report: RunResult) -> int:
    """How many whole-app runs one report started: a whole run asked for, a fragment's run that ran the
    whole app after it, or none when the fragment ran alone."""
    if report.status != ForwardMsg.FINISHED_SUCCESSFULLY:
        return 0
    return report.script_runs - (1 if report.fragment_id else 0)


def option_for(question: Question, index: int) -> str:
    """The option learner `index` picks: learners take turns over the options, so answers differ."""
    return question.options[index % len(question.options)].id


def _asking(session: Session, question: Question) -> WidgetInfo | None:
    """The radio on the page that asks `question`, open or locked; None if the page draws none."""
    widgets = session.model.widgets.values()
    return next((w for w in widgets if w.kind == "radio" and w.label == question.prompt), None)


def _locker(page: str, question: Question, timeout_s: float) -> Learner:
    async def learner(port: int, index: int, ready: asyncio.Queue[None], go: asyncio.Event) -> Act:
        browser = Browser()
        session = Session(
            port=port, marker=f"bench-l{index:03d}", timeout_s=timeout_s, cookies=browser.cookies
        )
        try:
            await session.connect(page)
            await identify(session, browser)
            radio = _asking(session, question)
            if radio is None:
                raise ValueError(f"/{page} does not ask {question.id}.")
            submit = next(
                w for w in session.model.widgets.values() if w.is_submit and w.form_id == radio.form_id
            )
            choice = question.option_text(option_for(question, index))
            await ready.put(None)
            await go.wait()
            before = session.traffic.messages
            session.model.set_value(radio.id, choice)
            session.model.click(submit.id)
            result = await rerun_here(session)
            locked = _asking(session, question)
            held = locked is not None and locked.disabled and locked.default == choice
            messages = session.traffic.messages - before
            return Act({"lock": result.latency_ms}, messages, whole_runs_of_report(result), held)
        finally:
            await session.close()

    return learner


def _opener(page: str, stored_ids: list[str | None], timeout_s: float) -> Learner:
    async def learner(port: int, index: int, ready: asyncio.Queue[None], go: asyncio.Event) -> Act:
        # A returning browser keeps the id in its storage and the component's copy in its cookie.
        stored_id = stored_ids[index]
        browser = Browser(cookies={IDENTITY_COOKIE: stored_id} if stored_id else {}, stored_id=stored_id)
        session = Session(
            port=port, marker=f"bench-c{index:03d}", timeout_s=timeout_s, cookies=browser.cookies
        )
        await ready.put(None)
        await go.wait()
        start = time.perf_counter()
        try:
            first = await session.connect(page)
            drawn_ms = (time.perf_counter() - start) * 1000
            report = await identify(session, browser)
            saved_ms = (time.perf_counter() - start) * 1000
            whole_runs = first.script_runs + (0 if report is None else whole_runs_of_report(report))
            return Act({"page drawn": drawn_ms, "saved": saved_ms}, session.traffic.messages, whole_runs)
        finally:
            await session.close()

    return learner


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
    """A server for a class (the lab's Home.py, GC off) that has shown the root and `page` once (the
    first visits import what the page needs, once a process), and a sampler of its process."""
    with StreamlitServer(script=REPO_ROOT / "Home.py", post_script_gc=False, log_path=log_path) as server:
        assert server.process is not None
        asyncio.run(_warm_up(server.port, page, timeout_s))
        yield server.port, ResourceSampler(pid=server.process.pid)


async def _warm_up(port: int, page: str, timeout_s: float) -> None:
    await open_root_once(port, timeout_s=timeout_s)
    go = asyncio.Event()
    go.set()
    await _opener(page, [None], timeout_s)(port, 0, asyncio.Queue(), go)


async def _at_once(
    port: int, sessions: int, learner: Learner, sampler: ResourceSampler
) -> tuple[list[Act], float, float]:
    """Every learner gets ready, then all act in the same instant: their acts, the server's CPU seconds
    and the wall seconds from the word to the last act's end."""
    ready: asyncio.Queue[None] = asyncio.Queue()
    go = asyncio.Event()
    tasks = [asyncio.create_task(learner(port, i, ready, go)) for i in range(sessions)]
    for _ in range(sessions):
        await ready.get()
    before = sampler.read().cpu_s
    started = time.perf_counter()
    go.set()
    acts = await asyncio.gather(*tasks)
    return acts, sampler.read().cpu_s - before, time.perf_counter() - started


def run_class(
    scenario: str,
    sessions: int,
    page: str,
    *,
    question_id: str = FOUR_RUNS_QUESTION,
    returning: bool = False,
    timeout_s: float = 120.0,
    log_dir: Path = RESULTS_DIR,
) -> Outcome:
    """Start a server with an empty store of its own, let `sessions` learners `scenario` ("locks" or
    "opens") on `page` at once, and summarise what it took."""
    if sessions < 1:
        raise ValueError("A class needs at least one learner.")
    throwaway_store(f"lab-class-{scenario}-")
    if scenario == "locks":
        question = load_bank().question(question_id)
        learner, what = _locker(page, question, timeout_s), f"lock {question_id} on /{page}"
    elif scenario == "opens":
        stored_ids: list[str | None] = [*returning_learners(sessions)] if returning else [None] * sessions
        browsers = "returning" if returning else "new"
        learner, what = _opener(page, stored_ids, timeout_s), f"open /{page} in {browsers} browsers"
    else:
        raise ValueError(f"Unknown class scenario {scenario!r}; choose locks or opens.")
    with class_server(page, timeout_s, log_dir / f"class_{scenario}_server.log") as (port, sampler):
        acts, cpu_s, wall_s = asyncio.run(_at_once(port, sessions, learner, sampler))
    return Outcome(
        scenario=what,
        sessions=sessions,
        page=page,
        timed={name: summarise([act.timed_ms[name] for act in acts]) for name in acts[0].timed_ms},
        messages_per_learner=sum(act.messages for act in acts) / sessions,
        whole_runs_per_learner=sum(act.whole_runs for act in acts) / sessions,
        held=sum(act.held for act in acts),
        server_cpu_ms_per_learner=cpu_s * 1000 / sessions,
        wall_s=wall_s,
    )


def describe(outcome: Outcome) -> str:
    """The outcome in a few lines."""
    lines = [f"{outcome.sessions} learners at once: {outcome.scenario} ({outcome.wall_s:.1f} s in all)"]
    lines += [
        f"  {name + ':':<12} p50 {s.p50_ms:,.0f} ms, p95 {s.p95_ms:,.0f} ms"
        for name, s in outcome.timed.items()
    ]
    lines.append(
        f"  per learner: {outcome.messages_per_learner:.0f} messages, {outcome.whole_runs_per_learner:.2f} "
        f"whole-app runs, {outcome.server_cpu_ms_per_learner:.1f} ms of server CPU"
    )
    if "lock" in outcome.timed:
        lines.append(f"  held:        {outcome.held} of {outcome.sessions} show their own option, locked")
    return "\n".join(lines)
