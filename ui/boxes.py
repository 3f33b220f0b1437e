"""A sidebar box run as one fragment: its widgets rerun the box alone, not the page or the frame, unless
a callback's outcome changes more than the box (other work opened, a room joined)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

WHOLE_APP = "boxes.whole_app"


def rerun_whole_app() -> None:
    """From a box's callback: the app reruns as a whole once the box has rerun (st.rerun does nothing
    in a callback). A flash the callback left in session state is shown by that whole run."""
    st.session_state[WHOLE_APP] = True


def sidebar_box(draw: Callable[[], None]) -> None:
    """Draw a box in the sidebar, `draw`, as a fragment (one that draws in the sidebar must be called
    inside it)."""
    with st.sidebar:
        _box(draw)


@st.fragment
def _box(draw: Callable[[], None]) -> None:
    if st.session_state.pop(WHOLE_APP, False):
        st.rerun(scope="app")
    draw()
