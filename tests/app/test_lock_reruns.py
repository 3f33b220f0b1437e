"""Locking a marked question reruns what shows it, named by key from the lock's callback: on most pages
the questions drawn with it and the progress summary alone, on a page that reads the answer elsewhere
its whole body and the summary; Run A's forms likewise, once their two records complete the part. A
lock the store missed reruns the whole app, so the saved indicator can say so.

AppTest's tree holds what the latest run drew, so it shows exactly what the lock's run sent."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core import lessons
from core.questions import load_bank
from tests.app.conftest import headings, lock_answer, open_page
from tests.app.test_learner_record import _saved_note
from tests.app.test_run_a_page import PAGE, submit_decision, submit_reflection
from tests.harness.server import free_port

# A page, a question on it, and the questions drawn with it (one fragment).
ALONE = [
    ("pages/four_runs.py", "r1", ("r2", "r3", "r4")),
    ("pages/execution_stack.py", "c1", ()),
    ("pages/linear_layer.py", "c2", ()),
    ("pages/memory_budget.py", "c3", ()),
]
WHOLE_BODY = [("pages/your_run.py", "y1"), ("pages/quiz_report.py", "q1")]


def _sidebar(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.sidebar.metric}


def _main_radios(at: AppTest) -> list[str | None]:
    return [r.key for r in at.main.radio]


def _lock_right(at: AppTest, question_id: str) -> AppTest:
    return lock_answer(at, question_id, load_bank().question(question_id).correct)


@pytest.mark.parametrize(("page", "question_id", "drawn_with"), ALONE)
def test_a_lock_reruns_the_questions_and_the_summary_alone(page, question_id, drawn_with):
    at = open_page(page)
    title = headings(at, 1)[0]
    assert _sidebar(at)["Checks right"] == "0/9"
    assert len(_main_radios(at)) > 1  # the page draws more than the question

    _lock_right(at, question_id)
    assert not at.exception
    assert headings(at, 1) == []  # the body did not run
    assert _main_radios(at) == [f"marked.{question_id}.locked", *(f"marked.{q}.choice" for q in drawn_with)]
    assert at.radio(key=f"marked.{question_id}.locked").disabled
    assert len(at.success) == 1  # the verdict
    assert _sidebar(at)["Checks right"] == "1/9"  # the summary ran too

    at.run()  # the page as a later run draws it: the lock held, the rest of the page is still there
    assert headings(at, 1) == [title]
    assert at.radio(key=f"marked.{question_id}.locked").disabled
    assert _sidebar(at)["Checks right"] == "1/9"


@pytest.mark.parametrize(("page", "question_id"), WHOLE_BODY)
def test_a_lock_the_page_reads_reruns_the_body_and_the_summary(page, question_id):
    at = open_page(page)
    title = headings(at, 1)[0]
    before = _sidebar(at)

    _lock_right(at, question_id)
    assert not at.exception
    assert headings(at, 1) == [title]  # the body ran: what reads the answer is drawn again
    assert at.radio(key=f"marked.{question_id}.locked").disabled
    assert _sidebar(at) != before


def test_a_lock_the_store_missed_reruns_the_whole_app_and_says_not_saved(monkeypatch: pytest.MonkeyPatch):
    at = open_page("pages/four_runs.py")
    title = headings(at, 1)[0]
    monkeypatch.setenv("LAB_DATABASE_URL", f"postgresql://lab@127.0.0.1:{free_port()}/lab")
    _lock_right(at, "r1")
    assert not at.exception
    assert headings(at, 1) == [title]  # more than the question ran
    assert at.radio(key="marked.r1.locked").disabled  # the tab keeps the answer meanwhile
    assert "not_saved" in _saved_note(at)


def _parts(at: AppTest) -> list[str]:
    return [bar.proto.text for bar in at.sidebar.get("progress")]


def _complete(done: int) -> list[str]:
    """The progress summary with `done` of the lab's 7 parts complete."""
    return [lessons.sentence("frame", "parts_complete", done=done, total=7)]


def test_run_a_s_two_records_complete_its_part_in_the_summary_and_redraw_the_body():
    at = open_page(PAGE)
    assert _parts(at) == _complete(0)
    submit_decision(at, "batch", "Activations scale with the tokens.")
    assert _parts(at) == _complete(0)  # the part asks for the reflection as well
    submit_reflection(at, "Data-loader wait per step.")
    assert not at.exception
    assert _parts(at) == _complete(1)
    assert headings(at, 1) == ["Run A, properly"]  # the body drew the stored reflection
