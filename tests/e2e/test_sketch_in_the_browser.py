"""In a real browser at phone width: the Memory page's break-point guess starts with nothing chosen, and
the menu locks exactly the length picked, graded on the careful count."""

import pytest
from playwright.sync_api import expect

from core import lessons
from tests.e2e.conftest import LOCK_PREDICTION

pytestmark = pytest.mark.e2e


def test_the_break_point_menu_starts_empty_and_locks_the_length_picked(learner):
    page = learner.open("memory-budget")
    page.set_viewport_size({"width": 390, "height": 844})
    learner.settle()
    form = page.locator('[data-testid="stForm"]').filter(has_text="At what length does the budget")
    box = form.get_by_role("combobox")
    expect(box).to_be_visible()
    # No length chosen until the learner picks one: the box shows its placeholder and holds no value.
    expect(box).to_have_attribute("placeholder", "Choose one")
    expect(box).to_have_value("")
    form.get_by_role("button", name=LOCK_PREDICTION).click()
    learner.settle()
    expect(page.get_by_text(lessons.sentence("marked", "pick_prediction"))).to_be_visible()
    box.click()
    page.get_by_role("option", name="1,536 tokens", exact=True).click()
    learner.lock(form.first, LOCK_PREDICTION)
    # The lesson's step on its 24 GiB card first fails at 1,536 tokens by the careful count.
    expect(
        page.get_by_text("You predicted 1,536 tokens; it was 1,536 tokens (held)", exact=False)
    ).to_be_visible()
    assert learner.exceptions() == [] and learner.console_errors == []
