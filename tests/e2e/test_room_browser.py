"""A workshop room in real browsers: one instructor and three learners in one room. Answers reach
the instructor's live view within a refresh, and a reveal shows a learner the room's answers only
once that learner has answered."""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

from core import lessons
from core.questions import load_bank
from tests.e2e.conftest import Learner, LearnerMaker

pytestmark = pytest.mark.e2e

R1 = load_bank().question("r1")


def shown(answers: int) -> str:
    """The caption under a revealed question: how many in the room have answered it."""
    return lessons.sentence("rooms", "room_answered", answered=answers)


REFRESH_MS = 15_000  # three of the view's 5-second refreshes, for a busy machine


@pytest.fixture
def people(new_learner: LearnerMaker, app_url: str) -> list[Learner]:
    """Four browser contexts: the instructor first, then three learners."""
    return [new_learner(app_url) for _ in range(4)]


def test_answers_reach_the_instructor_and_a_reveal_waits_for_each_learners_answer(people) -> None:
    instructor, first, second, third = people
    link = instructor.create_room()
    for learner, name in ((first, "Ada <i>"), (second, ""), (third, "")):
        learner.join_room(link, name)
    expect(instructor.page.get_by_test_id("stMain").get_by_test_id("stMetricValue")).to_have_text(
        "3", timeout=REFRESH_MS
    )

    for learner, option in ((first, R1.option_text("speed")), (second, R1.option_text(R1.correct))):
        learner.nav("Four runs")
        learner.answer(option)
    # No reload: the class view's fragment refreshes on its own.
    counts = lessons.sentence("instructor", "answered_right", label=R1.label, answered=2, right=1)
    expect(instructor.page.get_by_text(counts)).to_be_visible(timeout=REFRESH_MS)
    instructor.page.get_by_text("Display names (1)").click()
    expect(instructor.page.get_by_text("Ada <i>", exact=True)).to_be_visible()

    # Before the reveal, nobody sees the room's answers.
    first.page.reload()
    first.settle_loaded()  # the record comes back from the store after the browser says who it is
    assert first.page.get_by_text(shown(2)).count() == 0

    instructor.page.get_by_text(lessons.sentence("instructor", "reveal_toggle")).first.click()
    instructor.settle()
    first.page.reload()
    first.settle_loaded()  # the record comes back from the store after the browser says who it is
    expect(first.page.get_by_text(shown(2)).first).to_be_visible(timeout=30_000)

    third.nav("Four runs")
    assert third.page.get_by_text(shown(2)).count() == 0  # revealed, but this learner has not answered
    third.answer(R1.option_text("num"))
    expect(third.page.get_by_text(shown(3))).to_be_visible()

    # The export is written on the click, from the view's latest refresh: every learner's answer to r1.
    counts = lessons.sentence("instructor", "answered_right", label=R1.label, answered=3, right=1)
    expect(instructor.page.get_by_text(counts)).to_be_visible(timeout=REFRESH_MS)
    # The refresh that drew the count draws the button after it: until that run is over, a click can
    # still reach the button of the refresh before, and its file holds the two answers it read.
    instructor.settle()
    with instructor.page.expect_download() as saved:
        instructor.page.get_by_role("button", name=lessons.sentence("instructor", "download_room")).click()
    rows = list(csv.DictReader(io.StringIO(saved.value.path().read_text(encoding="utf-8"))))
    assert sorted(r["answer"] for r in rows if r["question"] == "r1") == sorted(["speed", R1.correct, "num"])
    assert {r["display_name"] for r in rows} == {"Ada <i>", ""}
    for person in people:
        assert person.exceptions() == []
