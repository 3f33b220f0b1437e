"""One learner's walk through the whole lab in a real browser: every page in the menu, one marked
question per page, settings that move the numbers, the quiz, hand-in and the downloaded report."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Locator, Page, expect

from core import lessons
from core.report.markdown import REPORT_TITLE
from core.report.moments import utc_timestamp
from tests.e2e.conftest import LOCK_ANSWER, shown

pytestmark = pytest.mark.e2e

# The lab's pages in lesson order. The walk follows whatever the menu lists, so a page added later
# is walked (and checked for errors) too.
LESSON_PAGES = [
    "Home",
    "Four runs",
    "Your run",
    "Execution stack",
    "Linear layer cost",
    "Memory budget",
    "Run A experiment",
    "Quiz and report",
    "Scaling out",
]

# One marked question per page: the option this learner picks, and whether the bank marks it right.
MARKED = {
    "Four runs": ("Resource: the step asks for more memory than the device holds", True),
    "Execution stack": (
        (
            "A symptom that several layers of the stack could produce; "
            "the next measurement has to narrow it down"
        ),
        True,
    ),
    "Linear layer cost": ("The fast one ran on a better GPU", False),
    "Memory budget": (
        "Backward needs values computed in forward, so they are kept alive instead of freed once used",
        True,
    ),
}
QUIZ = [
    (
        "On its own, nothing: the allocator is only where it surfaced, and the cause can sit in any "
        "layer above",
        True,
    ),
    ("Saved activations", True),
    ("Adam growing its state as training goes on", False),
]
# Worked by hand from the picks above: checks r1, c1, c3 right and c2 wrong of the bank's 9 checks
# (Your run's y1 is left unanswered); quiz q1, q2 right and q3 wrong of 3; overall (3 + 2) of (9 + 3).
CHECKS, QUIZ_SCORE, OVERALL = "3/9", "2/3", "5/12"

# Every answer, prediction and written record is asked in a form: after hand-in each of them must be
# disabled, while the tools outside them (sliders, pickers, the log reader) keep working.
ANSWER_FORMS = '[data-testid="stForm"]'


def slug(title: str) -> str:
    return title.lower().replace(" ", "-")


def metric(page: Page, label: str) -> str:
    """The value a metric tile shows."""
    tile = page.locator('[data-testid="stMain"] [data-testid="stMetric"]').filter(has_text=label).first
    return tile.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _parts_complete(done: str) -> re.Pattern[str]:
    """The sidebar's progress summary with `done` (a regular expression) parts complete, of any total."""
    words = re.escape(lessons.sentences("frame")["parts_complete"].text)
    return re.compile("^" + words.replace(r"\{done\}", done).replace(r"\{total\}", r"\d+") + "$")


def _budget_caption_end(device: str) -> str:
    """The budget chart's caption from after its total to the device it names."""
    caption = lessons.sentences("memory")["budget_caption"].text
    return (caption.split("{total_gb:.1f}")[1].split("{device}")[0] + device).strip()


def lock_buttons(page: Page) -> Locator:
    return page.get_by_role("button", name=LOCK_ANSWER)


def assert_clean(learner) -> None:
    assert learner.exceptions() == []
    assert learner.console_errors == []


def assert_locked(page: Page, option: str, right: bool, open_forms: int) -> None:
    """The chosen option is checked and can no longer change; its feedback and the other forms stay."""
    chosen = page.get_by_role("radio", name=option, exact=True, checked=True)
    expect(chosen).to_have_count(1)
    expect(chosen).to_be_disabled()
    expect(page.get_by_text("Right." if right else "Not quite.", exact=True).first).to_be_visible()
    expect(lock_buttons(page)).to_have_count(open_forms)


def answer_and_come_back(learner, title: str, option: str, right: bool) -> None:
    """Lock in one answer, leave the page through the menu, return, and find the answer locked."""
    open_before = lock_buttons(learner.page).count()
    learner.answer(option)
    assert_locked(learner.page, option, right, open_before - 1)
    learner.nav("Home")
    learner.nav(title)
    assert_locked(learner.page, option, right, open_before - 1)


def change_linear(learner) -> None:
    page = learner.page
    learner.predict_all()  # the roofline waits for the three placements
    # One step right on the batch slider: 33 × 4096 × 4096 = 553,648,128 MACs (default 32 gives 536,870,912).
    assert metric(page, "MACs (forward)") == "536,870,912"
    learner.slide("Batch (B)")
    expect(learner.slider("Batch (B)")).to_have_value("33")
    assert metric(page, "MACs (forward)") == "553,648,128"
    roof = page.get_by_text(shown(lessons.section("linear", "roof").text.split("{")[0]), exact=False)
    fp32_roof = roof.inner_text()
    learner.choose("Number format", "bf16")
    expect(page.get_by_role("combobox", name="Number format")).to_have_value("bf16")
    assert roof.inner_text() != fp32_roof  # bf16 runs on the tensor cores: a higher flat roof


def change_memory(learner) -> None:
    page = learner.page
    learner.predict_all()  # the budget waits for the two guesses
    # Parameters are 12 H² per block: 12 × 2048² × 16 = 805,306,368, then 12 × 3072² × 16 = 1,811,939,328.
    assert metric(page, "Parameters") == "805,306,368"
    learner.slide("Hidden size (H)")
    assert metric(page, "Parameters") == "1,811,939,328"
    learner.pick("Device memory", "80 GiB (85.90 GB)")
    expect(page.get_by_text(_budget_caption_end("80 GiB (85.90 GB) device"), exact=False)).to_be_visible()


def change_stack(learner) -> None:
    page = learner.page
    measure = page.locator('[data-testid="stAlert"]').filter(has_text="Measure first:")
    before = measure.inner_text()
    learner.pick("Symptom", "Loss becomes nan")
    assert measure.inner_text() != before


def decide_run_a(learner) -> None:
    page = learner.page
    why, reflection = (
        "Only the activations grow with the batch.",
        "Data loader time per step: long gaps point above the GPU.",
    )
    # The page's two forms in page order (their labels are prose that may be reworded); the reflection
    # first, since a saved decision adds the pair's prediction form between them.
    expect(learner.main_forms()).to_have_count(2)
    parts = page.locator('[data-testid="stSidebar"]').get_by_text(_parts_complete(r"\d+"))
    done = int(parts.inner_text().split()[0])
    learner.submit_form(1, reflection)
    expect(parts).to_have_text(_parts_complete(str(done)))
    learner.submit_form(0, why, option="Halve the tokens per step (batch × sequence) and run it again")
    expect(page.get_by_test_id("stText")).to_have_text([why, reflection])
    # The two records complete the part, and the summary drawn at the top of the page's run counts it.
    expect(parts).to_have_text(re.compile(rf"^{done + 1} of "))
    # The timeline opens on half the tokens: Run A's 1 × 1,536 (data/run_a.json) becomes 1 × 768.
    halved = page.get_by_text("Tokens 1 × 1,536 → 1 × 768.", exact=True)
    expect(halved).to_be_visible()
    learner.pick("Timeline to show", "Swap Adam for SGD to drop the optimizer state")
    expect(halved).to_have_count(0)
    expect(page.get_by_text(re.compile(r"^Optimizer .+ → .+\.$"))).to_be_visible()


def answer_quiz(learner) -> None:
    page = learner.page
    for done, (option, _) in enumerate(QUIZ, start=1):
        learner.answer(option)
        expect(page.get_by_role("radio", name=option, exact=True, checked=True)).to_be_disabled()
        expect(lock_buttons(page)).to_have_count(len(QUIZ) - done)
    expect(page.get_by_text("Right.", exact=True)).to_have_count(sum(right for _, right in QUIZ))
    expect(page.get_by_text("Not quite.", exact=True)).to_have_count(sum(not right for _, right in QUIZ))
    assert metric(page, "Marked checks") == CHECKS
    assert metric(page, "Quiz") == QUIZ_SCORE
    assert metric(page, "Overall") == OVERALL


SETTINGS = {
    "Execution stack": change_stack,
    "Linear layer cost": change_linear,
    "Memory budget": change_memory,
    "Run A experiment": decide_run_a,
}


def hand_in(learner) -> None:
    page = learner.page
    hand_in_button = page.get_by_role("button", name=lessons.sentence("quiz_report", "hand_in_button"))
    expect(hand_in_button).to_be_disabled()  # not before the confirmation is ticked
    page.get_by_text(lessons.sentence("quiz_report", "hand_in_confirm"), exact=True).click()
    learner.settle()
    hand_in_button.click()
    learner.settle()
    # The sentence after when it was handed in: everything is now locked.
    locked = lessons.sentences("quiz_report")["read_only_now"].text.removeprefix("{handed_in}").split(".")[0]
    expect(page.get_by_text(locked.strip(), exact=False)).to_be_visible()


def download(learner, button: str) -> str:
    """What a click on the download button labelled `button` saves (both files are written on the click)."""
    with learner.page.expect_download() as saved:
        learner.page.get_by_role("button", name=button).click()
    return saved.value.path().read_text(encoding="utf-8")


def download_report(learner) -> str:
    return download(learner, lessons.sentence("quiz_report", "download_report"))


INSTRUCTOR = "Instructor"  # in the menu, but not a lesson page: a learner's hand-in does not lock it


def assert_answers_locked(page: Page) -> None:
    """Every answer form on the page is disabled (downloads, tabs, expanders and tools stay usable)."""
    enabled = page.locator('[data-testid="stMain"]').evaluate(
        """(main, forms) => [...main.querySelectorAll(forms)].flatMap(form =>
            [...form.querySelectorAll('input:not([type=file]), textarea, button')]
                .filter(e => !e.disabled && e.getAttribute('aria-disabled') !== 'true')
                // A widget's help tooltip opens on any widget, disabled or not; it changes nothing.
                .filter(e => !(e.getAttribute('aria-label') || '').startsWith('Help for'))
                .map(e => 'a form: ' + (e.getAttribute('aria-label') || e.innerText || e.value)))""",
        ANSWER_FORMS,
    )
    assert enabled == []


def test_the_menu_lists_every_lesson_page_in_order(learner):
    learner.open()
    titles = learner.nav_titles()
    assert [t for t in titles if t in LESSON_PAGES] == LESSON_PAGES
    assert len(titles) == len(set(titles))


def test_a_learner_walks_the_whole_lab_answers_hands_in_and_downloads_the_report(learner):
    page = learner.open()
    titles = learner.nav_titles()
    for title in titles:
        learner.nav(title)
        expect(page.locator('[data-testid="stMain"] h1').first).to_be_visible()
        if title in MARKED:
            answer_and_come_back(learner, title, *MARKED[title])
        if title in SETTINGS:
            SETTINGS[title](learner)
        if title == "Quiz and report":
            answer_quiz(learner)
        assert_clean(learner)
        learner.screenshot_whole(f"walk-{slug(title)}")

    learner.nav("Linear layer cost")  # settings are kept on the way back
    expect(learner.slider("Batch (B)")).to_have_value("33")
    expect(page.get_by_role("combobox", name="Number format")).to_have_value("bf16")
    learner.nav("Home")
    assert [metric(page, "Checks"), metric(page, "Quiz"), metric(page, "Overall")] == [
        CHECKS,
        QUIZ_SCORE,
        OVERALL,
    ]

    learner.nav("Quiz and report")
    hand_in(learner)
    report = download_report(learner)
    assert report.startswith(f"# {REPORT_TITLE}\n")
    for line in (f"| Marked checks | {CHECKS} |", f"| Quiz | {QUIZ_SCORE} |", f"| Overall | {OVERALL} |"):
        assert line in report
    # The layer left on the Linear page: 4096 → 4096 at batch 33 is 2 × 553,648,128 FLOPs = 1.11 GFLOPs.
    assert all(figure in report for figure in ("4,096 → 4,096", "batch 33", "1.11 GFLOPs"))
    # The budget left on the Memory page: H = 3072 gives 1,811,939,328 parameters, on the 80 GiB
    # (85.90 GB) device.
    assert all(figure in report for figure in ("1.81B", "80 GiB (85.90 GB) device"))
    assert "```text\nOnly the activations grow with the batch.\n```" in report
    assert lessons.sentences("quiz_report")["handed_in"].text.split("{")[0] in report
    # The progress file is written on the click, not on the page's last run: a second later, its time is
    # the click's (timestamps are kept to the second).
    time.sleep(1.1)
    clicked_at = utc_timestamp(datetime.now(UTC))
    progress = json.loads(download(learner, lessons.sentence("quiz_report", "download_progress")))
    assert progress["exported_at"] >= clicked_at
    assert progress["state"]["handed_in_at"] is not None
    assert len(progress["state"]["answers"]) == len(MARKED) + len(QUIZ)

    for title in titles:
        if title == INSTRUCTOR:  # the instructor's sign-in is not the learner's work
            continue
        learner.nav(title)
        assert_answers_locked(page)
        assert_clean(learner)
    learner.nav("Linear layer cost")  # a calculator still answers, and the report keeps the layer handed in
    learner.slide("Batch (B)", presses=2)
    expect(learner.slider("Batch (B)")).to_have_value("35")
    learner.nav("Quiz and report")
    assert "batch 33" in download_report(learner)
    expect(
        page.get_by_role("button", name=lessons.sentence("quiz_report", "download_report"))
    ).to_be_enabled()
    learner.screenshot_whole("walk-quiz-and-report-read-only")


def test_a_learner_who_hands_in_first_can_still_open_every_page_with_its_answers_locked(learner):
    learner.open()
    learner.nav("Quiz and report")
    for option, _ in QUIZ:
        learner.answer(option)
    hand_in(learner)
    broken = {}
    for title in learner.nav_titles():
        learner.nav(title)
        if learner.exceptions():
            broken[title] = learner.exceptions()
        if title != INSTRUCTOR:
            assert_answers_locked(learner.page)
        learner.screenshot(f"handed-in-first-{slug(title)}")
    assert broken == {}, "pages that fail when first opened after hand-in"
    assert learner.console_errors == []
