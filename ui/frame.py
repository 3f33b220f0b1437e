"""The frame around every page: the compact progress summary in the sidebar, and a lesson page's body
run as one fragment, so a click on the page reruns the page (and the summary), not the whole frame."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core import lessons
from core.progress import checks_score, part_statuses, quiz_score
from core.questions import load_bank
from core.report.moments import readable_time
from ui import state
from ui.identity import retry_saving, saved_indicator, saved_status
from ui.run_slots import in_a_run_slot

# The sidebar box the summary is drawn in; the container of the latest full run, which is also the one
# Streamlit keeps for the body fragment's reruns.
PROGRESS_SLOT = "frame.progress_slot"


def progress_slot() -> None:
    """Reserve the summary's place at the top of the sidebar; the page fills it once it knows the
    learner's latest answers."""
    st.session_state[PROGRESS_SLOT] = st.sidebar.container()


def progress_sidebar() -> None:
    """Checks score, quiz score and parts complete, the same figures Home shows, in the reserved box.
    A lesson page draws it from its fragment (`lesson_page`); a page that is not a lesson calls it."""
    bank = load_bank()
    answers = state.answers()
    statuses = part_statuses(bank, answers, state.snapshot()[state.RECORDS])
    done = sum(s.complete for s in statuses)
    # A page run without Home.py's frame (AppTest's first switch_page) has no slot reserved.
    with st.session_state.get(PROGRESS_SLOT) or st.sidebar.container():
        st.markdown("**Your progress**")
        st.progress(
            done / len(statuses),
            text=lessons.sentence("frame", "parts_complete", done=done, total=len(statuses)),
        )
        # One flex row, not st.columns: the same two side by side in three elements instead of five,
        # and this box is redrawn on every click in a lesson.
        with st.container(horizontal=True):
            st.metric("Checks", checks_score(bank, answers).label)
            st.metric("Quiz", quiz_score(bank, answers).label)
        if state.read_only():
            when = readable_time(state.snapshot()[state.HANDED_IN_AT])
            st.caption(lessons.sentence("frame", "handed_in_read_only", when=when))


def lesson_page(draw: Callable[[], None]) -> None:
    """Run a lesson page's body, `draw`, as one fragment: a widget on the page reruns the body and the
    progress summary, not the sidebar boxes, the menu or the learner check around them."""
    _lesson_body(draw)


@st.fragment
@in_a_run_slot
def _lesson_body(draw: Callable[[], None]) -> None:
    retry_saving()
    # Both sidebar boxes are written before the page, which may stop early (st.stop): a fragment may
    # only write to a container outside it on its reruns if it wrote there in the last full run too.
    # Answers locked by a form's callback are stored before this runs, so the summary is current.
    progress_sidebar()
    shown = saved_indicator()
    draw()
    # Defaults first shown by a fragment rerun (a section a locked prediction revealed) are stored too.
    if state.save_seeded():
        st.rerun()
    # Again, replacing the first, if the page's own writes changed it: a click that could not be saved
    # says so at once.
    if saved_status() != shown:
        saved_indicator()
