"""A sidebar box run as one fragment: its widgets rerun the box alone, not the page or the frame, unless
a callback's outcome changes more than the box (other work opened, a room joined)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui.run_slots import in_a_run_slot

WHOLE_APP = "boxes.whole_app"


def rerun_whole_app() -> None:
    """From a box's callback: the box, which reruns right after it, reruns the app as a whole, and that
    run shows the flash the callback left in session state. (A callback's own st.rerun() escalates to
    a whole-app rerun too in Streamlit 1.67, but AppTest, which runs the whole script for each click,
    cannot tell it happened; this extra run it counts.)"""
    st.session_state[WHOLE_APP] = True


def sidebar_box(draw: Callable[[], None]) -> None:
    """Draw a box in the sidebar, `draw`, as a fragment (one that draws in the sidebar must be called
    inside it)."""
    with st.sidebar:
        _box(draw)


@st.fragment
@in_a_run_slot
def _box(draw: Callable[[], None]) -> None:
    if st.session_state.pop(WHOLE_APP, False):
        st.rerun(scope="app")
    draw()
