"""The frame around every page: the compact progress summary in the sidebar."""

from __future__ import annotations

import streamlit as st

from core import lessons
from core.progress import checks_score, part_statuses, quiz_score
from core.questions import load_bank
from core.report.moments import readable_time
from ui import state


def progress_sidebar() -> None:
    """Checks score, quiz score and parts complete, the same figures Home shows."""
    bank = load_bank()
    answers = state.answers()
    statuses = part_statuses(bank, answers, state.snapshot()[state.RECORDS])
    done = sum(s.complete for s in statuses)
    with st.sidebar:
        st.markdown("**Your progress**")
        st.progress(
            done / len(statuses),
            text=lessons.sentence("frame", "parts_complete", done=done, total=len(statuses)),
        )
        left, right = st.columns(2)
        left.metric("Checks", checks_score(bank, answers).label)
        right.metric("Quiz", quiz_score(bank, answers).label)
        if state.read_only():
            when = readable_time(state.snapshot()[state.HANDED_IN_AT])
            st.caption(lessons.sentence("frame", "handed_in_read_only", when=when))
