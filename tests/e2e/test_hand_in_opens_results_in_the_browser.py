"""A learner who hands in before predicting still gets the tools the predictions gated, in a real browser:
the roofline, the memory budget and each Scaling out part's chart, ungraded and with no form to fill."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core import lessons
from tests.e2e.test_learner_walk import QUIZ, hand_in

pytestmark = pytest.mark.e2e

DRAWN_CHART = '[data-testid="stVegaLiteChart"] svg.marks'  # Vega's drawing, there once a chart is drawn
# Each page, and how many charts it draws once its predictions no longer gate them.
PAGES = {"Linear layer cost": 1, "Memory budget": 4}


def test_a_learner_who_hands_in_first_sees_every_gated_result_ungraded(learner):
    page = learner.open()
    learner.nav("Quiz and report")
    for option, _ in QUIZ:
        learner.answer(option)
    hand_in(learner)
    for title, charts in PAGES.items():
        learner.nav(title)
        expect(page.locator(DRAWN_CHART)).to_have_count(charts)
        expect(page.get_by_text("Handed in without a prediction here", exact=False).first).to_be_visible()
        expect(page.get_by_role("button", name="Lock prediction")).to_have_count(0)
    learner.nav("Scaling out")
    expect(page.locator(DRAWN_CHART)).to_have_count(1)  # part A's, on the tab the page opens on
    expect(
        page.get_by_text(lessons.sentence("scaling", "not_predicted")[len(":material/lock_open: ") :])
    ).to_be_visible()
    expect(page.get_by_role("button", name="Lock prediction")).to_have_count(0)
    assert learner.exceptions() == [] and learner.console_errors == []
