"""The frame around every page: the compact progress summary in the sidebar, and a lesson page's body
run as one fragment, so a click on the page reruns the page, not the whole frame. Parts of a body that
nothing else on the page reads can be fragments of their own (`lesson_section`). A callback that stored
work the summary counts names what must show it (`after_saving`), and only that reruns.

A page with nothing more to show yet returns from its `draw`; no page calls `st.stop`. In Streamlit
1.67 `st.stop` turns whatever the session was asked to run next into "stop", so a rerun the browser
asked for while the run was going never runs: a click on a lesson's body (a fragment, so it waits for
the run), or the browser's report of whose work this is, which left the tab saying "Opening your saved
work…" until it was reloaded (tests/app/test_pages_never_stop.py)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core import lessons
from core.progress import checks_score, part_statuses, quiz_score
from core.questions import load_bank
from core.report.moments import readable_time
from server.run_slots import in_a_run_slot
from ui import state
from ui.identity import retry_saving, saved_indicator, saved_indicator_behind

FAVICON_PATH = Path(__file__).resolve().parent.parent / "assets" / "favicon.png"
# The favicon for st.set_page_config, as a data: URL read once per process. Given the file's path,
# Streamlit reads the file and registers it as media on every full run; a URL it passes on as it is.
FAVICON_URL = "data:image/png;base64," + base64.b64encode(FAVICON_PATH.read_bytes()).decode("ascii")
# Keys of the fragments a callback can name in st.rerun, so that only they run after its click.
PROGRESS_KEY = "frame.progress"
BODY_KEY = "lesson.body"
# The figures the summary in the sidebar shows now, so a run that did not draw it can tell they moved.
SUMMARY_SHOWN = "frame.summary_shown"
# Whether Home.py drew the frame around the page now running. Streamlit runs a process's very first
# script, and every run under AppTest after its first, as the page alone (README, Hosting).
_framed: ContextVar[bool] = ContextVar("lab_framed", default=False)
# Whether this script thread is in a run that keeps the frame current: a lesson's body, or a section
# rerun alone. A section inside one is drawn as part of it.
_frame_kept: ContextVar[bool] = ContextVar("lab_frame_kept", default=False)


@dataclass(frozen=True)
class _Summary:
    parts_done: int
    parts_total: int
    checks: str
    quiz: str
    handed_in_at: str | None  # when the lab was handed in (read-only from then on)


def _summary() -> _Summary:
    bank = load_bank()
    work = state.snapshot()
    answers = work[state.ANSWERS]
    statuses = part_statuses(bank, answers, work[state.RECORDS])
    return _Summary(
        parts_done=sum(s.complete for s in statuses),
        parts_total=len(statuses),
        checks=checks_score(bank, answers).label,
        quiz=quiz_score(bank, answers).label,
        handed_in_at=work[state.HANDED_IN_AT],
    )


def progress_summary() -> None:
    """Checks score, quiz score and parts complete, the same figures Home shows, at the top of the sidebar.
    Every full run draws it; after that it runs alone, when a click changed its figures (`after_saving`)."""
    with st.sidebar:
        st.html(_frame_css())
        _progress()


def _frame_css() -> str:
    """Two rules for what no theme option in Streamlit 1.67 reaches, each scoped to its elements
    (tests/e2e/test_accessibility.py checks both with axe-core and the keyboard):

    - A focus ring on the menu's links. Streamlit draws a sidebar menu link that has the keyboard's focus
      with `outline: none` and only the hover's faint grey behind it (a ring only in the top bar's
      dropdown): a keyboard user tabbing through the menu cannot see where they are (WCAG 2.4.7).
    - Disabled widgets' labels, and a locked marked question's options, in the text colour. Streamlit
      fades a disabled widget's text to the text colour at 40% (about 2.6:1 on white, under AA's 4.5:1).
      A locked answer is a disabled radio, the option the learner chose included, and after hand-in every
      setting is disabled: the learner still reads there what they answered and set. The controls
      themselves stay faded, so a locked widget still looks locked."""
    ring = st.get_option("theme.primaryColor") or "currentColor"
    text = st.get_option("theme.textColor") or "inherit"
    return (
        '<style>[data-testid="stSidebarNavLink"]:focus-visible '
        f"{{ outline: 2px solid {ring}; outline-offset: -2px; }}"
        '[data-testid="stWidgetLabel"] p, '
        '[class*="st-key-marked-"][class*="-locked"] [data-testid="stRadio"] * '
        f"{{ color: {text}; }}</style>"
    )


@st.fragment(key=PROGRESS_KEY)
@in_a_run_slot
def _progress() -> None:
    summary = st.session_state[SUMMARY_SHOWN] = _summary()
    done, total = summary.parts_done, summary.parts_total
    st.markdown("**Your progress**")
    st.progress(done / total, text=lessons.sentence("frame", "parts_complete", done=done, total=total))
    # One flex row, not st.columns: the same two side by side in three elements instead of five.
    with st.container(horizontal=True):
        st.metric(lessons.sentence("frame", "checks_right"), summary.checks)
        st.metric(lessons.sentence("frame", "quiz_right"), summary.quiz)
    if summary.handed_in_at is not None:
        when = readable_time(summary.handed_in_at)
        st.caption(lessons.sentence("frame", "handed_in_read_only", when=when))


def _summary_behind() -> bool:
    """Whether the summary in the sidebar shows other figures than the learner's work has now (never before
    one was drawn)."""
    shown = st.session_state.get(SUMMARY_SHOWN)
    return shown is not None and shown != _summary()


def after_saving(*fragment_keys: str) -> None:
    """For a callback that has just stored the learner's work. If that moved the progress summary, only
    the summary and the fragments keyed `fragment_keys` (what shows the work) run after the click; if the
    saved indicator is behind (the store missed it), the whole app. Otherwise the click's own rerun stands."""
    if saved_indicator_behind():
        st.rerun()
    if _summary_behind():
        # The summary first: Streamlit runs keyed fragments in the order named, and a body that ran
        # before it would find the summary behind and rerun the whole app.
        st.rerun([PROGRESS_KEY, *fragment_keys])


def framed() -> AbstractContextManager[None]:
    """Around the page's run in Home.py, which has drawn the frame: the summary is in the sidebar."""
    return _true_within(_framed)


def lesson_page(draw: Callable[[], None]) -> None:
    """Run a lesson page's body, `draw`, as one fragment: a widget on the page reruns the body, not the
    progress summary, the sidebar boxes, the menu or the learner check around it."""
    progress_if_unframed()
    _lesson_body(draw)


def progress_if_unframed() -> None:
    """The progress summary, drawn by the page itself when it runs without Home.py's frame around it."""
    if not _framed.get():
        progress_summary()


@contextmanager
def _true_within(flag: ContextVar[bool]) -> Iterator[None]:
    token = flag.set(True)
    try:
        yield
    finally:
        flag.reset(token)


@st.fragment(key=BODY_KEY)
@in_a_run_slot
def _lesson_body(draw: Callable[[], None]) -> None:
    with _true_within(_frame_kept):
        _body(draw)


def _body(draw: Callable[[], None]) -> None:
    retry_saving()
    # The saved indicator is written before the page, whatever the page does: a fragment may
    # only write to a container outside it on its reruns if it wrote there in the last full run too.
    saved_indicator()
    draw()
    # Defaults first shown by a fragment rerun (a section a locked prediction revealed) are stored too;
    # work the page stored while it ran, rather than in a callback, shows in the summary.
    if state.save_seeded() or _summary_behind():
        st.rerun()
    # Again, replacing the first, if the page's own writes changed it: a click that could not be saved
    # says so at once.
    if saved_indicator_behind():
        saved_indicator()


def lesson_section(draw: Callable[[], None]) -> None:
    """Draw part of a lesson's body, `draw`, as a fragment of its own, so a widget in it reruns that part
    alone. Only for a part whose widgets change nothing drawn outside it, and a `draw` that reads what it
    needs from the session itself (rerun alone, it gets nothing the body worked out). Should its rerun
    change what the frame shows (an answer or prediction locked, the saved indicator, defaults another
    tab had stored), the whole app reruns to show it."""
    _section(draw)


@st.fragment
@in_a_run_slot
def _section(draw: Callable[[], None]) -> None:
    if _frame_kept.get():  # drawn as part of a run that keeps the frame current itself
        draw()
        return
    with _true_within(_frame_kept):
        _section_alone(draw)


def _section_alone(draw: Callable[[], None]) -> None:
    retry_saving()
    draw()
    behind = saved_indicator_behind() or _summary_behind()
    if state.save_seeded() or behind:
        st.rerun()
