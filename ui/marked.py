"""The marked-question widget: nothing selected, one confirmed answer, then locked for good.

Questions drawn together are a fragment of their own unless their page reads the answers elsewhere, so
a learner locking one, as a whole class does when the instructor asks, reruns those questions and the
progress summary alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import streamlit as st

from core import lessons
from core.questions import Question, load_bank
from server.run_slots import in_a_run_slot
from ui import state
from ui.frame import BODY_KEY, after_saving
from ui.lock import lock_form
from ui.rooms import class_answers


def _feedback(question: Question, given: str) -> None:
    if question.is_correct(given):
        st.success(
            lessons.sentence(
                "marked", "right", chosen=question.option_text(given), explanation=question.explanation
            ),
            icon=":material/check_circle:",
        )
    else:
        st.warning(
            lessons.sentence(
                "marked",
                "not_quite",
                chosen=question.option_text(given),
                right_answer=question.option_text(question.correct),
                misconception=question.misconception(given),
                explanation=question.explanation,
            ),
            icon=":material/info:",
        )


def marked_questions(*question_ids: str, page_reads_it: bool = False, page_reads_all: bool = False) -> None:
    """Render marked questions from the bank, one after another; after one confirmed answer each is locked.
    Locking one reruns these questions and the progress summary alone, or the page's body where
    `page_reads_it`, or where `page_reads_all` (the page shows more once all are answered) the lock
    that answers the last of them. Questions drawn together share a fragment, which every run of the
    page pays for."""
    if page_reads_it:
        _questions(question_ids, BODY_KEY)
    else:
        _alone(question_ids)(question_ids, _fragment_key(question_ids), page_reads_all)


def _fragment_key(question_ids: tuple[str, ...]) -> str:
    return "marked." + "+".join(question_ids)


@functools.cache
def _alone(question_ids: tuple[str, ...]) -> Callable[[tuple[str, ...], str, bool], None]:
    """The questions drawn as one keyed fragment; one wrapper per group for the process, no learner data."""
    return st.fragment(in_a_run_slot(_questions), key=_fragment_key(question_ids))


def _questions(question_ids: tuple[str, ...], shown_by: str, page_reads_all: bool = False) -> None:
    for question_id in question_ids:
        _question(question_id, shown_by, question_ids if page_reads_all else ())


def _lock(question_id: str, shown_by: str, page_reads_all: tuple[str, ...], choice: str) -> None:
    state.give_answer(question_id, choice)
    given = state.answers()
    if page_reads_all and all(other in given for other in page_reads_all):
        shown_by = BODY_KEY  # the last of them: the page draws what waited for all of them
    after_saving(shown_by)


def _question(question_id: str, shown_by: str, page_reads_all: tuple[str, ...]) -> None:
    """The question, open or locked; `shown_by` is the key of the fragment that draws it, and
    `page_reads_all` the questions whose last answer reruns the page's body instead (or none)."""
    question = load_bank().question(question_id)
    given = state.answers().get(question.id)
    if given is None:
        # The form's own border frames the open question: one element fewer on every click on the page.
        lock_form(
            f"marked.{question.id}.choice",
            question.prompt,
            {o.id: o.text for o in question.options},
            functools.partial(_lock, question.id, shown_by, page_reads_all),
            button=lessons.sentence("marked", "lock_answer"),
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
