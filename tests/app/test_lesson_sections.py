"""A lesson section rerun on its own (`ui.frame.lesson_section`) reruns the whole app when the frame around
it would otherwise show something stale. AppTest always runs the whole script, so these call the part of
the section that only a rerun of the section alone reaches; the browser test covers the real rerun."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _section_run_alone() -> None:
    import streamlit as st

    from ui import frame, state

    state.ensure_state()
    runs = st.session_state["test.runs"] = st.session_state.get("test.runs", 0) + 1
    if runs == 1 and st.session_state.get("test.lock_first"):
        # A callback locked an answer just before this rerun: the summary still shows the figures before.
        st.session_state[frame.SUMMARY_SHOWN] = frame._summary()
        state.give_answer("c1", "a")
    else:
        st.session_state[frame.SUMMARY_SHOWN] = frame._summary()

    def draw() -> None:
        st.markdown(f"section drawn in run {runs}")

    frame._section_alone(draw)


def _run(lock_first: bool) -> AppTest:
    at = AppTest.from_function(_section_run_alone, default_timeout=30)
    at.session_state["test.lock_first"] = lock_first
    return at.run()


def test_a_section_whose_rerun_leaves_the_frame_as_it_was_runs_once():
    at = _run(lock_first=False)
    assert not at.exception
    assert at.session_state["test.runs"] == 1
    assert [m.value for m in at.markdown] == ["section drawn in run 1"]


def test_a_section_rerun_after_an_answer_was_locked_reruns_the_app_so_the_summary_follows():
    at = _run(lock_first=True)
    assert not at.exception
    assert at.session_state["test.runs"] == 2
    assert [m.value for m in at.markdown] == ["section drawn in run 2"]
