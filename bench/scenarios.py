"""What a simulated learner does: which pages, which widgets, in what order, how fast.

A learner opens the app's link, then walks the pages in a loop. On each page it makes one
choice (a select box, radio or checkbox), opens a tab of every stateful tab container (one
it does not show yet; learners and laps take turns over the tabs; an expander stays as the
page draws it, since few learners open the sidebar's boxes), moves every slider and number
input to its own marker value, types its text marker into text fields, answers one form (a
marked question: pick an option, press the submit button), and may press one plain button.
Widgets are discovered from the server's deltas, so the same learner works on any page.
Coming back to a page, it checks that what it set there comes back unchanged.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.isolation import IsolationTally, marker_position, marker_value, same_value, text_marker
from tests.harness.load_client import RunResult, Session, SessionError
from tests.harness.page_model import FINISHED_FRAGMENT_OK, PageModel, PageRef, WidgetInfo
from tests.harness.paths import HELLO_SCRIPT, REPO_ROOT


@dataclass(frozen=True)
class Target:
    """An app to load: its entry script and which pages (URL paths) learners visit."""

    name: str
    script: Path
    # None: every page the navigation lists.
    load_pages: tuple[str, ...] | None


TARGETS = {
    # serve.py: Home.py as deploy/start.sh serves it, with the per-process caches warmed at startup.
    "app": Target("app", REPO_ROOT / "serve.py", load_pages=None),
    # The Hello page alone, the framework's floor: plain reruns. The DataFrame and Mapping demos
    # download their data from the internet, and a benchmark here talks to nothing beyond this
    # machine; the Plotting and Animation demos compute for seconds per run.
    "hello": Target("hello", HELLO_SCRIPT, load_pages=("",)),
}

# Buttons and forms a learner in a benchmark must not press: they end the lab or wipe it.
DEFAULT_AVOID = (
    r"hand.?in|reset|restore|clear|delete|forget|start (over|again)|restart|upload|remove|log ?out"
)


@dataclass(frozen=True)
class Behaviour:
    """How learners pace themselves and what they may touch."""

    mode: str = "think"
    think_min_s: float = 3.0
    think_max_s: float = 8.0
    actions_per_visit: int = 6
    click_buttons: bool = True
    avoid_labels: str = DEFAULT_AVOID

    def __post_init__(self) -> None:
        if self.mode not in ("think", "burst"):
            raise ValueError(f"Mode must be 'think' or 'burst', not {self.mode!r}.")
        if not 0 <= self.think_min_s <= self.think_max_s:
            raise ValueError("Think time needs 0 <= min <= max.")


@dataclass(frozen=True)
class Action:
    """One learner action: set `values` (widget id -> value) and/or press `press`."""

    kind: str
    values: tuple[tuple[str, Any], ...] = ()
    press: str = ""
    # Widget id -> value this session should find again when it comes back to the page.
    expect: tuple[tuple[str, Any], ...] = ()
    # Radio label -> chosen option, for a locked answer that shows the same question.
    answers: tuple[tuple[str, str], ...] = ()


@dataclass
class VisitState:
    """What this learner already did on the current visit to a page."""

    session_index: int
    visit: int
    marker: str
    # How many times the learner has been round all its pages before this visit.
    lap: int = 0
    touched: set[str] = field(default_factory=set)
    chose: bool = False
    submitted: bool = False
    pressed: bool = False


def _option_for(info: WidgetInfo, visit: VisitState) -> str:
    return info.options[(visit.session_index + visit.visit) % len(info.options)]


def _marker_for(info: WidgetInfo, visit: VisitState) -> Any:
    """This session's marker value for an input widget, or None if it cannot hold one."""
    who = {"session_index": visit.session_index, "visit": visit.visit}
    if (
        info.kind == "slider"
        and info.step
        and len(info.default) == 1
        and info.low is not None
        and info.high is not None
    ):
        return [marker_value(**who, low=info.low, high=info.high, step=info.step, default=info.default[0])]
    if info.kind == "number_input" and info.step and info.low is not None and info.high is not None:
        return marker_value(**who, low=info.low, high=info.high, step=info.step, default=info.default)
    if info.kind == "select_slider" and info.options and len(info.default) == 1:
        default = info.options.index(info.default[0]) if info.default[0] in info.options else None
        return [info.options[marker_position(**who, positions=len(info.options), avoid=default)]]
    if info.kind in ("text_input", "text_area") and (
        not info.max_chars or info.max_chars >= len(visit.marker)
    ):
        return visit.marker
    return None


def _choice_for(info: WidgetInfo, model: PageModel, visit: VisitState) -> Any:
    if info.kind in ("radio", "selectbox") and info.options:
        return _option_for(info, visit)
    if info.kind == "checkbox":
        return not model.values.get(info.id, info.default)
    return None


def _open_for(info: WidgetInfo, model: PageModel, visit: VisitState) -> str | None:
    """The tab to open in a stateful tab container: one it does not show; None for anything else."""
    if info.kind != "tabs":
        return None
    shown = model.values.get(info.id)
    if shown is None:  # the browser has committed nothing yet: what the server shows
        shown = info.pushed_value
    closed = [label for label in info.options if label != shown]
    # By session and lap, not by visit: which page a learner is on already follows its session and
    # visit, so learners on a page at their n-th lap would all open the same tab.
    return closed[(visit.session_index + visit.lap) % len(closed)] if closed else None


def next_action(
    model: PageModel, visit: VisitState, avoid: re.Pattern[str], click_buttons: bool
) -> Action | None:
    """The learner's next action on the page as the model shows it, or None when done here."""
    usable = [w for w in model.widgets.values() if not w.disabled and not avoid.search(w.label)]
    loose = [w for w in usable if not w.form_id]
    if not visit.chose:
        visit.chose = True
        for info in loose:
            value = _choice_for(info, model, visit)
            if value is not None:
                visit.touched.add(info.id)
                return Action("choice", values=((info.id, value),))
    for info in loose:
        if info.id in visit.touched:
            continue
        value = _open_for(info, model, visit)
        if value is not None:
            visit.touched.add(info.id)
            return Action("open", values=((info.id, value),))
    for info in loose:
        if info.id in visit.touched:
            continue
        value = _marker_for(info, visit)
        if value is not None:
            visit.touched.add(info.id)
            return Action("marker", values=((info.id, value),), expect=((info.id, value),))
    if not visit.submitted:
        visit.submitted = True
        action = _answer_form(model, usable, visit)
        if action is not None:
            return action
    if click_buttons and not visit.pressed:
        visit.pressed = True
        for info in loose:
            if info.kind == "button":
                return Action("button", press=info.id)
    return None


def _answer_form(model: PageModel, usable: list[WidgetInfo], visit: VisitState) -> Action | None:
    """Fill in and submit one open form; sessions and visits take turns over the forms."""
    allowed = {w.id for w in usable}
    open_forms = []
    for members in model.forms().values():
        submit = next((w for w in members if w.is_submit and w.id in allowed), None)
        inputs = [w for w in members if not w.is_submit and w.id in allowed]
        if submit is not None and inputs:
            open_forms.append((submit, inputs))
    start = visit.session_index + visit.visit
    for turn in range(len(open_forms)):
        submit, inputs = open_forms[(start + turn) % len(open_forms)]
        values: list[tuple[str, Any]] = []
        answers: list[tuple[str, str]] = []
        for info in inputs:
            value = _choice_for(info, model, visit) if info.kind != "checkbox" else True
            value = _marker_for(info, visit) if value is None else value
            if value is None:
                continue
            values.append((info.id, value))
            if info.kind == "radio":
                answers.append((info.label, str(value)))  # a radio's value is its option's text
        if values:
            return Action("form", values=tuple(values), press=submit.id, answers=tuple(answers))
    return None


def check_answers(model: PageModel, answers: dict[str, str], tally: IsolationTally) -> None:
    """A locked (disabled) radio asking an answered question must show this session's answer."""
    for info in model.widgets.values():
        if info.kind != "radio" or not info.disabled or info.label not in answers:
            continue
        shown = info.pushed_value if info.pushed else info.default
        tally.record(
            shown == answers[info.label],
            f"question {info.label[:40]!r}: chose {answers[info.label]!r}, shown {shown!r}",
        )


def check_return(model: PageModel, expected: dict[str, Any], tally: IsolationTally) -> None:
    """Values set on the last visit must come back when the server pushes them again."""
    for widget_id, value in expected.items():
        info = model.widgets.get(widget_id)
        if info is None or not info.pushed:
            tally.unchecked += 1
            continue
        tally.record(
            same_value(value, info.pushed_value),
            f"{info.label[:40]!r}: set {value!r}, came back {info.pushed_value!r}",
        )


class Waves:
    """Burst mode: each step starts when every live learner is ready (or after `timeout_s`)."""

    def __init__(self, parties: int, timeout_s: float) -> None:
        self._parties = parties
        self._timeout_s = timeout_s
        self._arrived = 0
        self._released = asyncio.Event()

    async def wait(self) -> None:
        """Arrive at the line and wait for the wave to start."""
        released = self._released
        self._arrived += 1
        if self._arrived >= self._parties:
            self._release()
            return
        try:
            await asyncio.wait_for(released.wait(), self._timeout_s)
        except TimeoutError:
            if released is self._released:
                self._release()

    def leave(self) -> None:
        """A learner stops for good; the others no longer wait for it."""
        self._parties -= 1
        if self._parties > 0 and self._arrived >= self._parties:
            self._release()

    def _release(self) -> None:
        released, self._released, self._arrived = self._released, asyncio.Event(), 0
        released.set()


@dataclass
class LearnerStats:
    """Everything one or many learners measured."""

    initial_ms: list[float] = field(default_factory=list)
    rerun_ms: list[float] = field(default_factory=list)
    # rerun_ms split by the run that answered: one fragment, or the whole page (a fragment that calls
    # st.rerun() hands over to a whole run, which is what the learner waited for).
    rerun_fragment_ms: list[float] = field(default_factory=list)
    rerun_page_ms: list[float] = field(default_factory=list)
    navigate_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    exceptions: Counter[str] = field(default_factory=Counter)
    sessions: int = 0
    extra_script_runs: int = 0
    messages: int = 0
    bytes_in: int = 0
    unsupported_kinds: set[str] = field(default_factory=set)
    widget_echo: IsolationTally = field(default_factory=IsolationTally)
    answers: IsolationTally = field(default_factory=IsolationTally)
    text_markers: IsolationTally = field(default_factory=IsolationTally)
    # The tabs learners opened, by label.
    opened: Counter[str] = field(default_factory=Counter)

    def merge(self, other: LearnerStats) -> None:
        """Add another learner's figures into these."""
        self.initial_ms += other.initial_ms
        self.rerun_ms += other.rerun_ms
        self.rerun_fragment_ms += other.rerun_fragment_ms
        self.rerun_page_ms += other.rerun_page_ms
        self.navigate_ms += other.navigate_ms
        self.errors.update(other.errors)
        self.exceptions.update(other.exceptions)
        self.sessions += other.sessions
        self.extra_script_runs += other.extra_script_runs
        self.messages += other.messages
        self.bytes_in += other.bytes_in
        self.unsupported_kinds |= other.unsupported_kinds
        self.widget_echo.merge(other.widget_echo)
        self.answers.merge(other.answers)
        self.text_markers.merge(other.text_markers)
        self.opened.update(other.opened)


@dataclass
class Learner:
    """One simulated learner; reconnects as a new session after `lifetime_s` or an error."""

    index: int
    port: int
    target: Target
    behaviour: Behaviour
    run_token: str
    waves: Waves | None = None
    lifetime_s: float = 0.0
    timeout_s: float = 30.0
    tls: bool = False
    stats: LearnerStats = field(default_factory=LearnerStats)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.index)
        self._avoid = re.compile(self.behaviour.avoid_labels, re.IGNORECASE)
        self.marker = text_marker(self.index, self.run_token)

    async def run(self, *, start_delay_s: float, deadline: float) -> LearnerStats:
        """Keep learning until `deadline` (a time.monotonic() value)."""
        try:
            await asyncio.sleep(start_delay_s)
            while time.monotonic() < deadline:
                life_end = (
                    deadline if not self.lifetime_s else min(deadline, time.monotonic() + self.lifetime_s)
                )
                if not await self._one_session(life_end):
                    await asyncio.sleep(1.0)
        finally:
            if self.waves is not None:
                self.waves.leave()
        return self.stats

    async def _pause(self) -> None:
        if self.waves is not None:
            await self.waves.wait()
        else:
            await asyncio.sleep(self._rng.uniform(self.behaviour.think_min_s, self.behaviour.think_max_s))

    async def _one_session(self, life_end: float) -> bool:
        """One browser session from first load to `life_end`; False if it ended in an error."""
        session = Session(port=self.port, marker=self.marker, timeout_s=self.timeout_s, tls=self.tls)
        self.stats.sessions += 1
        try:
            if self.waves is not None:
                await self.waves.wait()
            self._count(await session.connect(""), self.stats.initial_ms)
            pages = self._pages(session.model)
            expected: dict[str, dict[str, Any]] = {}
            answers: dict[str, dict[str, str]] = {}
            visit = 0
            while time.monotonic() < life_end:
                page = pages[(self.index + visit) % len(pages)]
                moved = page.script_hash != session.model.page_hash
                if moved:
                    await self._pause()
                    self._count(await session.rerun(page_hash=page.script_hash), self.stats.navigate_ms)
                    check_return(session.model, expected.pop(page.script_hash, {}), self.stats.widget_echo)
                acted = await self._visit(
                    session,
                    VisitState(self.index, visit, self.marker, lap=visit // len(pages)),
                    expected,
                    answers,
                    life_end,
                )
                if not (moved or acted):
                    # Nothing to touch and nowhere to go: rerun, as pressing "R" would.
                    await self._pause()
                    self._count_rerun(await session.rerun())
                visit += 1
            return True
        except SessionError as error:
            self.stats.errors[error.kind] += 1
            return False
        finally:
            await session.close()
            self.stats.messages += session.traffic.messages
            self.stats.bytes_in += session.traffic.bytes_in
            self.stats.unsupported_kinds |= session.model.unsupported_kinds
            self.stats.text_markers.merge(session.text_markers)

    async def _visit(
        self,
        session: Session,
        visit: VisitState,
        expected: dict[str, dict[str, Any]],
        answers: dict[str, dict[str, str]],
        life_end: float,
    ) -> bool:
        """Act on the current page; returns whether any action was taken."""
        model = session.model
        page_hash = model.page_hash
        page_answers = answers.setdefault(page_hash, {})
        page_expected = expected.setdefault(page_hash, {})
        acted = False
        for _ in range(self.behaviour.actions_per_visit):
            if time.monotonic() >= life_end:
                break
            action = next_action(model, visit, self._avoid, self.behaviour.click_buttons)
            if action is None:
                break
            acted = True
            if action.kind == "open":
                self.stats.opened.update(str(value) for _, value in action.values)
            await self._pause()
            for widget_id, value in action.values:
                model.set_value(widget_id, value)
            if action.press:
                model.click(action.press)
            self._count_rerun(await session.rerun())
            if model.page_hash != page_hash:
                break  # a button took the learner to another page
            page_expected.update(action.expect)
            page_answers.update(action.answers)
            check_answers(model, page_answers, self.stats.answers)
        return acted

    def _pages(self, model: PageModel) -> list[PageRef]:
        if self.target.load_pages is None:
            return list(model.pages)
        return [model.page(path) for path in self.target.load_pages]

    def _count_rerun(self, result: RunResult) -> None:
        self._count(result, self.stats.rerun_ms)
        fragment = result.status == FINISHED_FRAGMENT_OK
        (self.stats.rerun_fragment_ms if fragment else self.stats.rerun_page_ms).append(result.latency_ms)

    def _count(self, result: RunResult, series: list[float]) -> None:
        series.append(result.latency_ms)
        self.stats.extra_script_runs += max(0, result.script_runs - 1)
        for text in result.exceptions:
            self.stats.exceptions[text[:160]] += 1
