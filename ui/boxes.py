"""The sidebar's boxes run as one fragment: their widgets rerun the boxes alone, not the page or the frame,
unless a callback's outcome changes more than a box (other work opened, a room joined)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from server.run_slots import in_a_run_slot

WHOLE_APP = "boxes.whole_app"


def rerun_whole_app() -> None:
    """From a box's callback: the box, which reruns right after it, reruns the app as a whole, and that
    run shows the flash the callback left in session state. (A callback's own st.rerun() escalates to
    a whole-app rerun too in Streamlit 1.67, but AppTest, which runs the whole script for each click,
    cannot tell it happened; this extra run it counts.)"""
    st.session_state[WHOLE_APP] = True


def sidebar_boxes(*draws: Callable[[], None]) -> None:
    """Draw boxes in the sidebar, each `draw` in turn, as one fragment (one that draws in the sidebar must be
    called inside it). One fragment, not one a box: each call costs every full run, a page switch
    included, a copy of the run's cursors and a message, and the boxes are nearly always closed."""
    with st.sidebar:
        _boxes(draws)


@st.fragment
@in_a_run_slot
def _boxes(draws: tuple[Callable[[], None], ...]) -> None:
    if st.session_state.pop(WHOLE_APP, False):
        st.rerun(scope="app")
    for draw in draws:
        draw()
