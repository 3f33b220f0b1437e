"""The marked-question widget: nothing selected, one confirmed answer, then locked for good."""

from __future__ import annotations

import functools

import streamlit as st

from core import lessons
from core.questions import Question, load_bank
from ui import state
from ui.lock import lock_form
from ui.rooms import class_answers


def _feedback(question: Question, given: str) -> None:
    if question.is_correct(given):
        st.success(
            lessons.sentence("marked", "right", explanation=question.explanation),
            icon=":material/check_circle:",
        )
    else:
        st.warning(
            lessons.sentence(
                "marked",
                "not_quite",
                right_answer=question.option_text(question.correct),
                misconception=question.misconception(given),
                explanation=question.explanation,
            ),
            icon=":material/info:",
        )


def marked_question(question_id: str) -> None:
    """Render one marked question from the bank; after one confirmed answer it is locked."""
    question = load_bank().question(question_id)
    given = state.answers().get(question.id)
    if given is None:
        # The form's own border frames the open question: one element fewer on every click on the page.
        lock_form(
            f"marked.{question.id}.choice",
            question.prompt,
            {o.id: o.text for o in question.options},
            functools.partial(state.give_answer, question.id),
            button="Lock in my answer",
            reminder=lessons.sentence("marked", "pick_first"),
            note=lessons.sentence("marked", "locked_once"),
        )
        return
    with st.container(border=True):
        st.caption(lessons.sentence("marked", "locked_once"))
        option_ids = [o.id for o in question.options]
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
