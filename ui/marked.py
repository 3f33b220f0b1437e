"""The marked-question widget: nothing selected, one confirmed answer, then locked for good.

A question is a fragment of its own unless its page reads the answer elsewhere, so a learner locking it,
as a whole class does when the instructor asks, reruns the question and the progress summary alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import streamlit as st

from core import lessons
from core.questions import Question, load_bank
from ui import state
from ui.frame import BODY_KEY, after_saving
from ui.lock import lock_form
from ui.rooms import class_answers
from ui.run_slots import in_a_run_slot


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


def marked_question(question_id: str, *, page_reads_it: bool = False) -> None:
    """Render one marked question from the bank; after one confirmed answer it is locked. Locking reruns
    the question and the progress summary alone, or the page's whole body where `page_reads_it`."""
    if page_reads_it:
        _question(question_id, BODY_KEY)
    else:
        _alone(question_id)(question_id, _fragment_key(question_id))


def _fragment_key(question_id: str) -> str:
    return f"marked.{question_id}"


@functools.cache
def _alone(question_id: str) -> Callable[[str, str], None]:
    """The question drawn as a keyed fragment; one wrapper per question for the process, no learner data."""
    return st.fragment(in_a_run_slot(_question), key=_fragment_key(question_id))


def _lock(question_id: str, shown_by: str, choice: str) -> None:
    state.give_answer(question_id, choice)
    after_saving(shown_by)


def _question(question_id: str, shown_by: str) -> None:
    """The question, open or locked; `shown_by` is the key of the fragment that draws it."""
    question = load_bank().question(question_id)
    given = state.answers().get(question.id)
    if given is None:
        # The form's own border frames the open question: one element fewer on every click on the page.
        lock_form(
            f"marked.{question.id}.choice",
            question.prompt,
            {o.id: o.text for o in question.options},
            functools.partial(_lock, question.id, shown_by),
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
