"""The marked-question widget: nothing selected, one confirmed answer, then locked for good."""

from __future__ import annotations

import streamlit as st

from core.questions import Question, load_bank
from ui import state
from ui.rooms import class_answers


def _choice_key(question_id: str) -> str:
    return f"marked.{question_id}.choice"


def _flash_key(question_id: str) -> str:
    return f"marked.{question_id}.flash"


def _confirm(question_id: str) -> None:
    choice = st.session_state.get(_choice_key(question_id))
    if choice is None:
        st.session_state[_flash_key(question_id)] = "Pick one of the options first, then lock it in."
        return
    st.session_state.pop(_flash_key(question_id), None)
    state.give_answer(question_id, choice)


def _feedback(question: Question, given: str) -> None:
    if question.is_correct(given):
        st.success(f"**Right.** {question.explanation}", icon=":material/check_circle:")
    else:
        right = question.option_text(question.correct)
        st.warning(
            f"**Not quite.** The answer is: *{right}*.\n\nThe trap: {question.misconception(given)}\n\n"
            f"{question.explanation}",
            icon=":material/info:",
        )


def marked_question(question_id: str) -> None:
    """Render one marked question from the bank; after one confirmed answer it is locked."""
    question = load_bank().question(question_id)
    option_ids = [o.id for o in question.options]
    given = state.answers().get(question.id)
    with st.container(border=True):
        st.caption(":material/lock: Marked question: one answer, then it is locked.")
        if given is not None:
            st.radio(
                question.prompt,
                option_ids,
                index=option_ids.index(given),
                format_func=question.option_text,
                disabled=True,
                key=f"marked.{question.id}.locked",
            )
            _feedback(question, given)
            class_answers(question.id)
            return
        with st.form(key=f"marked.{question.id}.form", border=False):
            st.radio(
                question.prompt,
                option_ids,
                index=None,
                format_func=question.option_text,
                key=_choice_key(question.id),
                disabled=state.read_only(),
            )
            st.form_submit_button(
                "Lock in my answer",
                on_click=_confirm,
                args=(question.id,),
                disabled=state.read_only(),
            )
        if flash := st.session_state.get(_flash_key(question.id)):
            st.info(flash)
