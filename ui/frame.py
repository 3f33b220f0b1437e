"""The frame around every page: the compact progress summary in the sidebar, and a lesson page's body
run as one fragment, so a click on the page reruns the page (and the summary), not the whole frame.
Parts of a body that nothing else on the page reads can be fragments of their own (`lesson_section`)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core import lessons
from core.progress import checks_score, part_statuses, quiz_score
from core.questions import load_bank
from core.report.moments import readable_time
from ui import state
from ui.identity import retry_saving, saved_indicator, saved_indicator_behind
from ui.run_slots import in_a_run_slot

FAVICON_PATH = Path(__file__).resolve().parent.parent / "assets" / "favicon.png"
# The favicon for st.set_page_config, as a data: URL read once per process. Given the file's path,
# Streamlit reads the file and registers it as media on every full run; a URL it passes on as it is.
FAVICON_URL = "data:image/png;base64," + base64.b64encode(FAVICON_PATH.read_bytes()).decode("ascii")
# The sidebar box the summary is drawn in; the container of the latest full run, which is also the one
# Streamlit keeps for the body fragment's reruns.
PROGRESS_SLOT = "frame.progress_slot"
# The figures the summary in the sidebar shows now, so a section rerun alone can tell they moved.
SUMMARY_SHOWN = "frame.summary_shown"
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


def progress_slot() -> None:
    """Reserve the summary's place at the top of the sidebar; the page fills it once it knows the
    learner's latest answers."""
    st.session_state[PROGRESS_SLOT] = st.sidebar.container()


def progress_sidebar() -> None:
    """Checks score, quiz score and parts complete, the same figures Home shows, in the reserved box.
    A lesson page draws it from its fragment (`lesson_page`); a page that is not a lesson calls it."""
    summary = st.session_state[SUMMARY_SHOWN] = _summary()
    done, total = summary.parts_done, summary.parts_total
    # A page run without Home.py's frame (AppTest's first switch_page) has no slot reserved.
    with st.session_state.get(PROGRESS_SLOT) or st.sidebar.container():
        st.markdown("**Your progress**")
        st.progress(done / total, text=lessons.sentence("frame", "parts_complete", done=done, total=total))
        # One flex row, not st.columns: the same two side by side in three elements instead of five,
        # and this box is redrawn on every click in a lesson.
        with st.container(horizontal=True):
            st.metric("Checks", summary.checks)
            st.metric("Quiz", summary.quiz)
        if summary.handed_in_at is not None:
            when = readable_time(summary.handed_in_at)
            st.caption(lessons.sentence("frame", "handed_in_read_only", when=when))


def lesson_page(draw: Callable[[], None]) -> None:
    """Run a lesson page's body, `draw`, as one fragment: a widget on the page reruns the body and the
    progress summary, not the sidebar boxes, the menu or the learner check around them."""
    _lesson_body(draw)


@contextmanager
def _keeping_frame() -> Iterator[None]:
    kept = _frame_kept.set(True)
    try:
        yield
    finally:
        _frame_kept.reset(kept)


@st.fragment
@in_a_run_slot
def _lesson_body(draw: Callable[[], None]) -> None:
    with _keeping_frame():
        _body(draw)


def _body(draw: Callable[[], None]) -> None:
    retry_saving()
    # Both sidebar boxes are written before the page, which may stop early (st.stop): a fragment may
    # only write to a container outside it on its reruns if it wrote there in the last full run too.
    # Answers locked by a form's callback are stored before this runs, so the summary is current.
    progress_sidebar()
    saved_indicator()
    draw()
    # Defaults first shown by a fragment rerun (a section a locked prediction revealed) are stored too.
    if state.save_seeded():
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
    with _keeping_frame():
        _section_alone(draw)


def _section_alone(draw: Callable[[], None]) -> None:
    retry_saving()
    draw()
    behind = saved_indicator_behind() or _summary() != st.session_state.get(SUMMARY_SHOWN)
    if state.save_seeded() or behind:
        st.rerun()
