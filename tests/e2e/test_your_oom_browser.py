"""Your OOM in a real browser: paste Run A's message as Chromium sends a text area, see the run named
from it, read the verdict, apply a change and see where the changed run fails."""

import re

import pytest
from playwright.sync_api import expect

from core import lessons
from core.memory.reference import run_a_measurements

pytestmark = pytest.mark.e2e

RUN_A_MESSAGE = next(
    r.message
    for r in run_a_measurements()
    if (r.batch, r.seq, r.attn, r.optim, r.cap_gib) == (1, 1536, "eager", "adam", 24.0)
)
# Where Run A died, in the phase model's words (a figure here, not prose).
WHERE = "loss.backward() of step 1"


def _before_figures(key: str) -> str:
    """The page's sentence `key` up to its first figure."""
    return lessons.sentences("your_oom")[key].text.split("{")[0]


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 41, in <module>\n'
    "    loss.backward()\n"
    "torch.OutOfMemoryError: " + RUN_A_MESSAGE
)


def paste(learner, text: str) -> None:
    """Type `text` into the message box and send it the way a learner does: leaving the box."""
    page = learner.page
    box = page.get_by_label("Your out-of-memory message, or the whole traceback")
    box.fill(text)
    box.press("Control+Enter")  # Streamlit sends a text area's value on Ctrl+Enter or on blur
    learner.settle()


def test_paste_name_read_the_verdict_and_apply_a_change(learner):
    page = learner.open("your-oom")
    expect(page.get_by_role("heading", name="Your OOM")).to_be_visible()
    paste(learner, TRACEBACK)
    # named from the message: the 24 GiB cap and the H200's 139.80 GiB
    expect(page.get_by_label("Memory cap in GiB (0: none)")).to_have_value("24.00")
    expect(
        page.get_by_text(lessons.sentence("your_oom", "died_traceback", where=WHERE), exact=False)
    ).to_be_visible()
    expect(page.get_by_text(_before_figures("agrees"), exact=False)).to_be_visible()
    expect(page.get_by_text("= 294.47 MiB", exact=False)).to_be_visible()
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1
    # the chart is described for a screen reader, naming the first phase over the line
    described = page.locator('[aria-label*="Bar chart of the memory each phase needs"]')
    expect(described.first).to_have_attribute("aria-label", re.compile("first phase over the line is loss"))
    learner.choose("Change to apply", "Half the tokens: sequence 768")
    page.get_by_role("button", name="Apply", exact=True).click()
    learner.settle()
    expect(page.get_by_label("Sequence length")).to_have_value("768")
    expect(
        page.get_by_text(
            lessons.sentence("your_oom", "change_fails", where="optimizer.step() of step 1"), exact=False
        ).first
    ).to_be_visible()
    expect(
        page.locator('[data-testid="stAlert"]').filter(
            has_text=_before_figures("applied") + "Half the tokens"
        )
    ).to_have_count(1)
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 2
    assert learner.exceptions() == []
    assert learner.console_errors == []
    learner.screenshot_whole("your-oom-applied")


def test_a_paste_that_is_no_oom_gets_one_sentence_as_plain_text(learner):
    page = learner.open("your-oom")
    paste(learner, "RuntimeError: **bold** <img src=x onerror=alert(1)>")
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="not a PyTorch out-of-memory message")
    expect(alert).to_have_count(1)
    assert page.locator("strong").filter(has_text="bold").count() == 0
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 0
    assert learner.exceptions() == []


def test_the_verdict_fits_a_phone(learner):
    from tests.e2e.test_charts_in_the_browser import assert_shown_fits

    learner.page.set_viewport_size({"width": 390, "height": 844})
    learner.open("your-oom")
    paste(learner, RUN_A_MESSAGE)
    assert learner.page.locator('[data-testid="stTable"]').count() == 2  # the moment's terms, the changes
    assert_shown_fits(learner, "your-oom", expected_charts=1)
