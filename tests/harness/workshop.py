"""A workshop through HAProxy: learners in rooms on several replicas, one replica stopped mid-run.

Replicas of `streamlit run Home.py` share one PostgreSQL store behind the workshop proxy
(deploy/proxy.sh, HTTPS, cookie affinity), all on loopback. Simulated learners (tests/harness/load_client.py,
Streamlit's own protocol) keep a browser's cookies and its stored learner id (the identity
component's localStorage), join their room by code with a marker as display name, and answer the
marked questions one after another; one instructor per room watches the live class view, which
the client refreshes as the browser's timer does (a fragment rerun every few seconds). Once half
the answers are in, one replica is killed (SIGKILL); its learners and instructors reconnect through
the proxy to another replica and carry on. At the end every learner revisits its answers.

Reported: p50/p95 of reruns, page switches, first loads and the instructors' refreshes; errors.
Checked (the run fails if any check does): every answer given is in the store exactly once,
every learner is in its room once, the instructor aggregates (`core.rooms` over
`RoomStore.class_work`) and the instructor's screen equal the store's counts, the stopped
replica's learners continued on another with nothing lost, and no session ever received another
learner's marker or saw another answer under its own questions.

    python -m tests.harness.workshop --learners 200 --rooms 4 --replicas 3

A check of the whole deployment rather than a benchmark (it fails when a check does), so it lives with
the harness that tests/bench/test_failover.py runs it from, at small scale.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import random
import re
import secrets
import string
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from bench.proxy import workshop_proxy
from bench.stats import summarise
from core.questions import Bank, load_bank
from core.rooms import distributions
from store import LearnerStore
from store.room_schema import memberships
from store.rooms import RoomStore
from store.schema import answers
from tests.harness.browser import Browser, identify, rerun_here
from tests.harness.isolation import IsolationTally, text_marker
from tests.harness.load_client import Session, SessionError, open_root_once
from tests.harness.page_model import WidgetInfo
from tests.harness.paths import REPO_ROOT
from tests.harness.postgres import temporary_postgres
from tests.harness.server import ResourceSampler, StreamlitServer

# The marked questions a learner answers, in order, and the page (URL path) that asks each.
QUESTION_PAGES = {
    "r1": "four-runs",
    "r2": "four-runs",
    "r3": "four-runs",
    "r4": "four-runs",
    "q1": "quiz-report",
    "q2": "quiz-report",
    "q3": "quiz-report",
}
INSTRUCTOR_PAGE = "instructor"
ATTEMPTS = 6  # reconnects a learner tries for one step before it gives up
ROOM_BOX = "Workshop room"  # ui/rooms.py: the sidebar box a learner joins a room in
# The caption under each question of the live view (ui/instructor.py): "<label>: n answered, r right".
COUNTS_CAPTION = re.compile(r"^(?P<label>.*): (?P<answered>\d+) answered, (?P<right>\d+) right$")


@dataclass
class Figures:
    """Latencies and errors of everyone, for the report."""

    first_load_ms: list[float] = field(default_factory=list)
    rerun_ms: list[float] = field(default_factory=list)
    switch_ms: list[float] = field(default_factory=list)
    refresh_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    exceptions: Counter[str] = field(default_factory=Counter)
    # Reruns once a replica was stopped, when the others carry its learners too.
    rerun_after_stop_ms: list[float] = field(default_factory=list)
    stopped: bool = False

    def add_rerun(self, latency_ms: float) -> None:
        """Count one rerun (in both series once a replica was stopped)."""
        self.rerun_ms.append(latency_ms)
        if self.stopped:
            self.rerun_after_stop_ms.append(latency_ms)


def _widget(session: Session, kind: str, label: str) -> WidgetInfo:
    for info in session.model.widgets.values():
        if info.kind == kind and info.label.startswith(label):
            return info
    raise SessionError("widget", f"no {kind} {label!r} on the page")


async def open_box(session: Session, label: str) -> None:
    """Open the sidebar box (a stateful expander) labelled `label`, as a click on its header does: the
    app builds a box's content only while it is open."""
    info = _widget(session, "expander", label)
    if not session.model.values.get(info.id, info.pushed_value):
        session.model.set_value(info.id, True)
        await rerun_here(session)


async def submit_form(session: Session, values: dict[str, Any], button: str, figures: Figures) -> None:
    """Type values into one form's text inputs (label -> value) and press its submit button."""
    form_id = ""
    for label, value in values.items():
        info = _widget(session, "text_input", label)
        session.model.set_value(info.id, value)
        form_id = info.form_id
    submit = _widget(session, "button", button)
    if submit.form_id != form_id:
        raise SessionError("widget", f"{button!r} is not the button of the form with {list(values)}")
    session.model.click(submit.id)
    figures.add_rerun((await rerun_here(session)).latency_ms)


@dataclass
class Client:
    """One simulated browser tab that reconnects through the proxy when its connection drops."""

    port: int
    marker: str
    figures: Figures
    timeout_s: float
    browser: Browser = field(default_factory=Browser)
    session: Session | None = None
    replicas_seen: list[str] = field(default_factory=list)
    reconnects: int = 0
    gave_up: str = ""
    isolation: IsolationTally = field(default_factory=IsolationTally)
    # Lesson pages draw the identity component; the Instructor page does not.
    identifies: bool = True
    finished: bool = False

    async def connect(self, url_path: str = "") -> Session:
        """A fresh websocket session for this browser (its cookies and stored id go with it)."""
        if self.session is not None:
            self.isolation.merge(self.session.text_markers)
            await self.session.close()
        self.session = Session(
            port=self.port,
            marker=self.marker,
            tls=True,
            timeout_s=self.timeout_s,
            cookies=self.browser.cookies,
        )
        first = await self.session.connect(url_path)
        self.figures.first_load_ms.append(first.latency_ms)
        self.replicas_seen.append(self.browser.replica)
        if self.identifies:
            await identify(self.session, self.browser)
        return self.session

    async def step(
        self, action: Callable[[], Awaitable[None]], reopen: Callable[[], Awaitable[None]]
    ) -> bool:
        """Run one action; when the connection fails, reopen the session and try again."""
        last = ""
        for _ in range(ATTEMPTS):
            try:
                await action()
                return True
            except SessionError as error:
                self.figures.errors[error.kind] += 1
                last = str(error)
            await asyncio.sleep(0.5)
            with contextlib.suppress(SessionError):
                self.reconnects += 1
                await reopen()
        self.gave_up = last
        return False

    async def close(self) -> None:
        """Close the tab, keeping its isolation tally."""
        self.finished = True
        if self.session is not None:
            self.isolation.merge(self.session.text_markers)
            self.session.text_markers = IsolationTally()
            await self.session.close()


@dataclass
class Learner(Client):
    """Joins a room, answers the marked questions with its own options, then checks them all."""

    index: int = 0
    room: str = ""
    bank: Bank | None = None
    think_s: tuple[float, float] = (3.0, 8.0)
    given: dict[str, str] = field(default_factory=dict)
    answers_shown: IsolationTally = field(default_factory=IsolationTally)
    room_kept: IsolationTally = field(default_factory=IsolationTally)

    def choice(self, question_id: str) -> str:
        """This learner's option for a question: learners spread over every option."""
        assert self.bank is not None
        options = self.bank.question(question_id).options
        return options[(self.index + list(QUESTION_PAGES).index(question_id)) % len(options)].id

    async def run(self, start_delay_s: float) -> None:
        """The whole visit: open the link, join, answer every question, review, leave."""
        await asyncio.sleep(start_delay_s)
        if await self.step(self._join, self._reopen):
            for question_id in QUESTION_PAGES:
                await asyncio.sleep(random.uniform(*self.think_s))
                if not await self.step(functools.partial(self._answer, question_id), self._reopen):
                    break
            else:
                await self.step(self._review, self._reopen)
        await self.close()

    async def _join(self) -> None:
        session = await self.connect()
        await open_box(session, ROOM_BOX)
        await submit_form(
            session, {"Room code": self.room, "Display name": self.marker}, "Join", self.figures
        )
        self._check_room(session)

    async def _reopen(self) -> None:
        session = await self.connect()
        await open_box(session, ROOM_BOX)  # a new session draws the box closed
        self._check_room(session)

    def _check_room(self, session: Session) -> None:
        # The sidebar says so once the store has the membership: on any replica, after any reconnect.
        self.room_kept.record("You are in room" in session.model.run_texts, f"{self.marker} lost its room")

    async def _go(self, url_path: str) -> Session:
        assert self.session is not None
        page = self.session.model.page(url_path)
        if self.session.model.current_page != page.script_hash:
            self.figures.switch_ms.append((await self.session.rerun(page_hash=page.script_hash)).latency_ms)
        self.figures.exceptions.update(self.session.model.run_exceptions)
        return self.session

    async def _answer(self, question_id: str) -> None:
        assert self.bank is not None
        session = await self._go(QUESTION_PAGES[question_id])
        question = self.bank.question(question_id)
        radio = _widget(session, "radio", question.prompt)
        if not radio.disabled:  # not answered yet (or the lock was lost with a dying replica)
            session.model.set_value(radio.id, question.option_text(self.choice(question_id)))
            submit = next(
                w for w in session.model.widgets.values() if w.is_submit and w.form_id == radio.form_id
            )
            session.model.click(submit.id)
            self.figures.add_rerun((await rerun_here(session)).latency_ms)
            radio = _widget(session, "radio", question.prompt)
        self._check_locked(question_id, radio)

    def _check_locked(self, question_id: str, radio: WidgetInfo) -> None:
        """A locked question shows this learner's own option, never someone else's."""
        assert self.bank is not None
        question = self.bank.question(question_id)
        shown = next((o.id for o in question.options if question.option_text(o.id) == radio.default), None)
        expected = self.given.get(question_id, self.choice(question_id))
        self.answers_shown.record(
            radio.disabled and shown == expected,
            f"{self.marker} saw {shown} for {question_id}, gave {expected}",
        )
        if radio.disabled and shown is not None:
            self.given[question_id] = shown

    async def _review(self) -> None:
        for question_id in self.given:
            session = await self._go(QUESTION_PAGES[question_id])
            radio = _widget(session, "radio", self.bank.question(question_id).prompt if self.bank else "")
            self._check_locked(question_id, radio)


@dataclass
class Instructor(Client):
    """Signs in, opens its room, and refreshes the live class view as the browser's timer would."""

    room: str = ""
    key: str = ""
    refresh_s: float = 5.0
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    identifies: bool = False

    async def open(self) -> None:
        """Open the Instructor page, sign in with the key, and open the room by its code."""
        session = await self.connect(INSTRUCTOR_PAGE)
        await submit_form(session, {"Instructor key": self.key}, "Sign in", self.figures)
        await submit_form(session, {"Or open a room by its code": self.room}, "Open", self.figures)
        if not session.model.auto_rerun_fragment:
            raise SessionError("instructor", f"room {self.room} shows no live view")

    async def refresh(self) -> None:
        """One run of the live view's fragment; reads the per-question counts it shows."""
        assert self.session is not None
        self.session.model.run_texts = []
        result = await self.session.rerun(
            page_hash=self.session.model.current_page, fragment_id=self.session.model.auto_rerun_fragment
        )
        self.figures.refresh_ms.append(result.latency_ms)
        self.figures.exceptions.update(self.session.model.run_exceptions)
        found = {}
        for text in self.session.model.run_texts:
            if match := COUNTS_CAPTION.match(text):
                found[match["label"]] = (int(match["answered"]), int(match["right"]))
        if not found:
            raise SessionError("instructor", "the refresh showed no counts")
        self.counts = found

    async def run(self, done: asyncio.Event) -> None:
        """Watch until the learners are done, then take one last look."""
        if not await self.step(self.open, self.open):
            return
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self.refresh_s)
            await self.step(self.refresh, self.open)
        await self.step(self.refresh, self.open)  # the last look, after every learner is done
        await self.close()


@dataclass(frozen=True)
class WorkshopConfig:
    """How big the workshop is and how learners pace themselves."""

    learners: int = 200
    rooms: int = 4
    replicas: int = 3
    think_s: tuple[float, float] = (3.0, 8.0)
    ramp_s: float = 30.0
    stop_at: float = 0.5  # the share of all answers given when one replica is killed
    refresh_s: float = 5.0
    timeout_s: float = 60.0


@dataclass
class Check:
    """One correctness check: what it says, whether it held, and what it found."""

    name: str
    ok: bool
    detail: str


@dataclass
class Outcome:
    """Everything a workshop run produced."""

    learners: list[Learner]
    instructors: list[Instructor]
    figures: Figures
    victim: str
    victims: list[Learner]
    stopped_after_s: float | None
    duration_s: float
    checks: list[Check] = field(default_factory=list)
    # Per replica: mean CPU (% of one core) while it ran, and its peak memory.
    replicas: list[dict[str, float]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Plain figures for JSON and the printout."""
        f = self.figures
        return {
            "learners": len(self.learners),
            "instructors": len(self.instructors),
            "duration_s": round(self.duration_s, 1),
            "replicas": self.replicas,
            "replica_stopped": self.victim,
            "stopped_after_s": None if self.stopped_after_s is None else round(self.stopped_after_s, 1),
            "learners_on_stopped_replica": len(self.victims),
            "answers_given": sum(len(learner.given) for learner in self.learners),
            "reconnects": sum(c.reconnects for c in [*self.learners, *self.instructors]),
            "rerun_ms": summarise(f.rerun_ms).as_dict(),
            "rerun_after_stop_ms": summarise(f.rerun_after_stop_ms).as_dict(),
            "page_switch_ms": summarise(f.switch_ms).as_dict(),
            "first_load_ms": summarise(f.first_load_ms).as_dict(),
            "instructor_refresh_ms": summarise(f.refresh_ms).as_dict(),
            "errors": dict(f.errors),
            "exception_elements": dict(f.exceptions),
            "gave_up": [c.gave_up for c in [*self.learners, *self.instructors] if c.gave_up],
            "checks": [vars(check) for check in self.checks],
        }


async def _stop_midway(
    learners: list[Learner],
    planned: int,
    share: float,
    kill: Callable[[], None],
    victim: str,
    figures: Figures,
) -> tuple[float, list[Learner]]:
    start = time.monotonic()
    while sum(len(learner.given) for learner in learners) < share * planned:
        await asyncio.sleep(0.2)
    # Learners still working there; one that already left has nothing to continue.
    on_victim = [
        learner for learner in learners if learner.browser.replica == victim and not learner.finished
    ]
    await asyncio.get_running_loop().run_in_executor(None, kill)
    figures.stopped = True
    return time.monotonic() - start, on_victim


async def _drive(
    config: WorkshopConfig, port: int, codes: list[str], key: str, kill: Callable[[], None], victim: str
) -> Outcome:
    bank, figures = load_bank(), Figures()
    token = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(4))
    learners = [
        Learner(
            port=port,
            figures=figures,
            timeout_s=config.timeout_s,
            marker=text_marker(i, token),
            index=i,
            room=codes[i % len(codes)],
            bank=bank,
            think_s=config.think_s,
        )
        for i in range(config.learners)
    ]
    instructors = [
        Instructor(
            port=port,
            figures=figures,
            timeout_s=config.timeout_s,
            marker=f"instructor-{code}",
            room=code,
            key=key,
            refresh_s=config.refresh_s,
        )
        for code in codes
    ]
    done = asyncio.Event()
    start = time.monotonic()
    watching = [asyncio.create_task(instructor.run(done)) for instructor in instructors]
    stopper = asyncio.create_task(
        _stop_midway(learners, config.learners * len(QUESTION_PAGES), config.stop_at, kill, victim, figures)
    )
    await asyncio.gather(
        *(learner.run(config.ramp_s * i / config.learners) for i, learner in enumerate(learners))
    )
    stopped_after_s, victims = (await stopper) if stopper.done() else (None, [])
    stopper.cancel()
    done.set()
    await asyncio.gather(*watching)
    return Outcome(
        learners=learners,
        instructors=instructors,
        figures=figures,
        victim=victim,
        victims=victims,
        stopped_after_s=stopped_after_s,
        duration_s=time.monotonic() - start,
    )


def verify(outcome: Outcome, store: LearnerStore, codes: list[str]) -> list[Check]:
    """The correctness checks, from the store itself and from what every session saw."""
    bank, rooms = load_bank(), RoomStore(store)
    learners = outcome.learners
    with store.engine.connect() as connection:
        stored = Counter(
            connection.execute(
                sa.select(answers.c.learner_id, answers.c.question_id, answers.c.option_id)
            ).tuples()
        )
        members = Counter(
            connection.execute(
                sa.select(memberships.c.room_code, memberships.c.learner_id, memberships.c.display_name)
            ).tuples()
        )
    ids = [learner.browser.stored_id for learner in learners]
    given = Counter(
        (learner.browser.stored_id, q, o) for learner in learners for q, o in learner.given.items()
    )
    complete = [learner for learner in learners if len(learner.given) == len(QUESTION_PAGES)]
    checks = [
        Check(
            "every learner kept one learner id of its own",
            None not in ids and len(set(ids)) == len(ids),
            f"{len(set(ids))} ids for {len(ids)} learners",
        ),
        Check(
            "every learner answered every question",
            len(complete) == len(learners),
            f"{len(complete)} of {len(learners)} finished",
        ),
        Check(
            "every answer given is in the store exactly once, and nothing else is",
            stored == given and max(stored.values(), default=1) == 1,
            f"{sum(given.values())} given, {sum(stored.values())} stored, "
            f"{len(stored - given)} extra, {len(given - stored)} missing",
        ),
        Check(
            "every learner is in its room once, under the name it typed",
            members == Counter((one.room, one.browser.stored_id, one.marker) for one in learners),
            f"{sum(members.values())} memberships",
        ),
    ]
    room_of = {learner_id: code for code, learner_id, _ in members}
    for code, instructor in zip(codes, outcome.instructors, strict=True):
        store_counts = Counter((q, o) for (learner_id, q, o) in stored if room_of.get(learner_id) == code)
        core_counts = Counter(
            {
                (d.question_id, o.option_id): o.count
                for d in distributions(bank, rooms.class_work(code))
                for o in d.options
                if o.count
            }
        )
        screen = {
            q.id: (
                sum(n for (qid, _), n in store_counts.items() if qid == q.id),
                sum(n for (qid, o), n in store_counts.items() if qid == q.id and q.is_correct(o)),
            )
            for q in bank.questions
        }
        shown = {q.id: instructor.counts.get(q.label) for q in bank.questions}
        checks.append(
            Check(
                f"room {code}: the instructor aggregates equal the store's counts",
                core_counts == store_counts,
                f"{sum(store_counts.values())} answers",
            )
        )
        checks.append(
            Check(
                f"room {code}: the instructor's last view shows the store's counts",
                shown == screen,
                f"{sum(n for n, _ in filter(None, shown.values()))} answers shown",
            )
        )
    finished = [
        v
        for v in outcome.victims
        if v.replicas_seen[-1] != outcome.victim and len(v.given) == len(QUESTION_PAGES)
    ]
    checks.append(
        Check(
            "the stopped replica's learners continued on another replica with nothing lost",
            bool(outcome.victims) and len(finished) == len(outcome.victims),
            f"{len(finished)} of {len(outcome.victims)} on {outcome.victim} finished elsewhere",
        )
    )
    isolation = IsolationTally()
    for learner in learners:
        isolation.merge(learner.isolation)
        isolation.merge(learner.answers_shown)
        isolation.merge(learner.room_kept)
    checks.append(
        Check(
            "no session saw another's data (markers, locked answers, room)",
            isolation.mismatches == 0,
            f"{isolation.checks} checks, {isolation.mismatches} mismatches {isolation.examples}",
        )
    )
    return checks


def run_workshop(config: WorkshopConfig, database_url: str, log_dir: Path) -> Outcome:
    """Start the replicas and the proxy, run the workshop, stop one replica midway, check the store."""
    key = secrets.token_urlsafe(32)  # as strong as ui.instructor asks
    store = LearnerStore.open(database_url)
    rooms = RoomStore(store)
    codes = [
        rooms.create_room(capacity=config.learners, lifetime=timedelta(hours=2)).code
        for _ in range(config.rooms)
    ]
    env = {"LAB_DATABASE_URL": database_url, "LAB_INSTRUCTOR_KEY": key}
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                StreamlitServer(
                    script=REPO_ROOT / "serve.py",
                    post_script_gc=False,
                    log_path=log_dir / f"app{i}.log",
                    env=env,
                )
            )
            for i in range(1, config.replicas + 1)
        ]
        asyncio.run(_first_runs([server.port for server in servers]))
        port = stack.enter_context(workshop_proxy([server.port for server in servers], log_dir / "proxy.log"))
        victim = servers[0]

        def kill() -> None:
            assert victim.process is not None
            victim.process.kill()
            victim.process.wait(timeout=15)

        samplers = [
            ResourceSampler(server.process.pid, interval_s=1.0) for server in servers if server.process
        ]
        for sampler in samplers:
            sampler.start()
        outcome = asyncio.run(_drive(config, port, codes, key, kill, "app1"))
        for sampler in samplers:
            sampler.stop()
        outcome.replicas = [_usage(sampler) for sampler in samplers]
    outcome.checks = verify(outcome, store, codes)
    store.engine.dispose()
    return outcome


def _usage(sampler: ResourceSampler) -> dict[str, float]:
    first, last = sampler.samples[0], sampler.samples[-1]
    seconds = max(last.t_s - first.t_s, 1e-9)
    return {
        "cpu_mean_pct": round(100 * (last.cpu_s - first.cpu_s) / seconds, 1),
        "peak_rss_mb": round(max(s.rss_bytes for s in sampler.samples) / 1e6, 1),
        "sampled_s": round(seconds, 1),
    }


async def _first_runs(ports: list[int]) -> None:
    """Open each replica's root once, as docs/hosting.md asks before sharing links (its first run is special
    in Streamlit)."""
    for port in ports:
        await open_root_once(port)


def _ms(summary: dict[str, Any]) -> str:
    if not summary["count"]:
        return "none"
    return f"p50 {summary['p50_ms']:,.0f} / p95 {summary['p95_ms']:,.0f} ms (n={summary['count']})"


def describe(summary: dict[str, Any]) -> str:
    """The printout of one run."""
    lines = [
        f"{summary['learners']} learners, {summary['instructors']} instructors, {summary['duration_s']} s; "
        f"{summary['replica_stopped']} killed after {summary['stopped_after_s']} s with "
        f"{summary['learners_on_stopped_replica']} learners on it; {summary['reconnects']} reconnects",
        f"  rerun {_ms(summary['rerun_ms'])}, after the stop {_ms(summary['rerun_after_stop_ms'])}",
        f"  page switch {_ms(summary['page_switch_ms'])}",
        f"  first load {_ms(summary['first_load_ms'])}; "
        f"instructor refresh {_ms(summary['instructor_refresh_ms'])}",
        f"  answers given {summary['answers_given']}; errors {summary['errors'] or 'none'}; "
        f"exception elements {summary['exception_elements'] or 'none'}",
        "  replicas (CPU % of one core, peak MB, seconds sampled): "
        + "; ".join(
            f"app{i} {r['cpu_mean_pct']:.0f}%, {r['peak_rss_mb']:.0f} MB, {r['sampled_s']:.0f} s"
            for i, r in enumerate(summary["replicas"], start=1)
        ),
    ]
    lines += [f"  [{'ok' if c['ok'] else 'FAILED'}] {c['name']}: {c['detail']}" for c in summary["checks"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run one workshop; prints the figures and checks, writes bench/results/workshop.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--rooms", type=int, default=4)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--think-min-s", type=float, default=3.0)
    parser.add_argument("--think-max-s", type=float, default=8.0)
    parser.add_argument("--ramp-s", type=float, default=30.0)
    parser.add_argument(
        "--database-url", default="", help="an empty PostgreSQL database (default: start one)"
    )
    args = parser.parse_args(argv)
    config = WorkshopConfig(
        learners=args.learners,
        rooms=args.rooms,
        replicas=args.replicas,
        think_s=(args.think_min_s, args.think_max_s),
        ramp_s=args.ramp_s,
    )
    out = REPO_ROOT / "bench" / "results"
    with contextlib.ExitStack() as stack:
        url = args.database_url or stack.enter_context(temporary_postgres())
        outcome = run_workshop(config, url, out / "workshop")
    summary = outcome.summary()
    out.mkdir(parents=True, exist_ok=True)
    (out / "workshop.json").write_text(json.dumps(summary, indent=1))
    print(describe(summary), flush=True)
    return 0 if all(check.ok for check in outcome.checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
