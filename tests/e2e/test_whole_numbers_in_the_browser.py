"""Whole-number boxes in a real browser: Chromium sends their values as `int_value`, and the page uses them.

Streamlit registers every number input as a `double_value`; the server's widget-type guard once dropped
the browser's `int_value` as the wrong kind, so the box showed the new number while the page kept
computing with the old one (server/widget_types.py).
"""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

BOTH_GIVEN = "Give the number of classes or the vocabulary size, not both."


def type_number(learner, label: str, value: int) -> None:
    """Type `value` into the number box labelled `label` and press Enter, as a learner does."""
    box = learner.page.get_by_label(label, exact=True)
    box.scroll_into_view_if_needed()
    box.fill(str(value))
    box.press("Enter")
    learner.settle()


def test_the_memory_page_uses_the_data_parallel_gpus_typed_in(learner):
    page = learner.open("memory-budget")
    learner.pick("Estimate", "Detailed estimate")
    type_number(learner, "Data-parallel GPUs", 4)
    # The page took the setting: it is in the page's URL and share link, and a fresh visit shows it.
    expect(page).to_have_url(re.compile(r"[?&]gpus=4(&|$)"))
    assert "gpus=4" in learner.shared_link()
    learner.open("memory-budget")
    expect(learner.page.get_by_label("Data-parallel GPUs", exact=True)).to_have_value("4")
    assert learner.exceptions() == []


def test_your_run_uses_the_whole_numbers_typed_in(learner):
    page = learner.open("your-run")
    expect(page.get_by_label("Number of classes", exact=True)).to_be_visible()
    # A vocabulary beside the example's class count: the run context refuses both, in a sentence.
    type_number(learner, "Vocabulary size (0: not a language model)", 50_000)
    expect(page.get_by_text(BOTH_GIVEN)).to_be_visible()
    # No class count: the vocabulary alone is fine, and the sentence goes.
    type_number(learner, "Number of classes", 0)
    expect(page.get_by_text(BOTH_GIVEN)).to_have_count(0)
    assert learner.exceptions() == []
