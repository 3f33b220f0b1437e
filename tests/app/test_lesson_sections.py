"""A lesson section rerun on its own (`ui.frame.lesson_section`) reruns the whole app when the frame around
it would otherwise show something stale. AppTest always runs the whole script, so these call the part of
the section that only a rerun of the section alone reaches; the browser tests cover the real rerun."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def _section_run_alone() -> None:
    import streamlit as st

    from ui import frame, identity, state

    state.ensure_state()
    runs = st.session_state["test.runs"] = st.session_state.get("test.runs", 0) + 1
    # What the frame shows, as the latest full run drew it.
    st.session_state[frame.SUMMARY_SHOWN] = frame._summary()
    st.session_state[identity.SAVED_SHOWN] = identity.saved_status()
    if runs == 1:
        # What happened since, in a callback just before this rerun of the section alone.
        since = st.session_state["test.since"]
        if since == "answer locked":
            state.give_answer("c1", "a")
        elif since == "indicator drawn for another status":
            st.session_state[identity.SAVED_SHOWN] = "unsaved"

    def draw() -> None:
        st.markdown(f"section drawn in run {runs}")

    frame._section_alone(draw)


def _run(since: str) -> AppTest:
    at = AppTest.from_function(_section_run_alone, default_timeout=30)
    at.session_state["test.since"] = since
    return at.run()


def test_a_section_whose_rerun_leaves_the_frame_as_it_was_runs_once():
    at = _run("nothing")
    assert not at.exception
    assert at.session_state["test.runs"] == 1
    assert [m.value for m in at.markdown] == ["section drawn in run 1"]


@pytest.mark.parametrize("since", ["answer locked", "indicator drawn for another status"])
def test_a_section_rerun_that_leaves_the_frame_behind_reruns_the_app(since):
    at = _run(since)
    assert not at.exception
    assert at.session_state["test.runs"] == 2
    assert [m.value for m in at.markdown] == ["section drawn in run 2"]
