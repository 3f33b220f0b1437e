"""What a workshop puts a public app through: shared setup links, bad links, many learners at once,
and learners typing markup or script into the lab."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from core import lessons
from core.memory import BudgetOptimizer
from core.settings_schema import section
from tests.e2e.conftest import LOCK_ANSWER

pytestmark = pytest.mark.e2e

MARKUP = "<b>bold</b> <script>window.__x=1</script> [link](http://example.com) **star**"
MARKUP_LINK = "http://example.com"


def note_boxes(page: Page) -> Locator:
    """The warnings a page shows about link values it did not use (they carry the link_off icon)."""
    icon = page.get_by_test_id("stAlertDynamicIcon").get_by_text("link_off", exact=True)
    return page.get_by_test_id("stAlert").filter(has=icon)


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def assert_clean(learner) -> None:
    assert learner.exceptions() == []
    assert learner.console_errors == []


def linear_setup(learner) -> None:
    learner.slide("Inputs (n)", presses=2)  # 4096 → 4608
    learner.slide("Batch (B)", presses=3, key="ArrowLeft")  # 32 → 29
    learner.choose("Number format", "fp16")
    learner.choose("GPU", "H100 SXM")


def memory_setup(learner) -> None:
    learner.slide("Layers")  # 16 → 20
    learner.slide("Sequence length (S)", presses=2)  # 1024 → 2048
    learner.pick("Optimizer", BudgetOptimizer.SGD_MOMENTUM.label)
    learner.pick("Device memory", "40 GiB (42.95 GB)")


# url path -> (menu title, settings section, how the sender sets it up, the widgets that moves, an answer to
# lock)
SHARED = {
    "linear-layer": (
        "Linear layer cost",
        "linear",
        linear_setup,
        ("Inputs (n)", "Batch (B)", "Number format", "GPU"),
        "The fast one ran on a better GPU",
    ),
    "memory-budget": (
        "Memory budget",
        "memory",
        memory_setup,
        ("Layers", "Sequence length (S)", "Optimizer", "Device memory"),
        "Backward works on a second copy of the weights, so training holds the model twice",
    ),
}


@pytest.mark.parametrize("path", SHARED)
def test_a_shared_setup_link_opens_the_same_settings_in_a_fresh_browser(learner, second_learner, path):
    title, schema_section, set_up, widgets, answer = SHARED[path]
    learner.open()
    learner.nav(title)
    defaults = learner.settings_shown()
    set_up(learner)
    learner.answer(answer)
    mine = learner.settings_shown()
    assert {label for label, value in mine.items() if value != defaults.get(label)} == set(widgets)
    link = learner.shared_link()
    assert link.startswith(f"{learner.base_url}/{path}?")
    # A link carries this page's settings and nothing else: no answers, no learner text.
    assert set(query(link)) == {f.name for f in section(schema_section).fields}
    learner.page.get_by_test_id("stCode").scroll_into_view_if_needed()
    learner.screenshot(f"shared-link-{path}-sender")

    second_learner.page.goto(link)
    second_learner.settle()
    assert second_learner.settings_shown() == mine
    expect(
        second_learner.page.get_by_test_id("stAlert").first
    ).to_be_visible()  # the page's own alerts are drawn...
    expect(note_boxes(second_learner.page)).to_have_count(0)  # ...and none is about the link
    assert second_learner.shared_link() == link
    expect(second_learner.page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(
        learner.page.get_by_role("button", name=LOCK_ANSWER).count() + 1
    )
    assert_clean(second_learner)
    second_learner.page.get_by_test_id("stCode").scroll_into_view_if_needed()
    second_learner.screenshot(f"shared-link-{path}-receiver")


LONG = "9" * 5000
# case -> (link, the notes it must produce in settings order, (a widget it names, what that widget shows
# instead)).
# Defaults come from data/settings/*.json; clamped values are the nearest ones the schema allows.
BAD_LINKS = {
    "not-numbers": (
        "linear-layer?n_in=abc&batch=nan",
        ["'n_in' must be a number", "'batch' must be a finite number"],
        ("Inputs (n)", "4096"),
    ),
    "out-of-range": (
        "linear-layer?batch=100000&n_in=300",
        ["'n_in' was adjusted to 256", "'batch' was adjusted to 256"],
        ("Batch (B)", "256"),
    ),
    "repeated-key": ("linear-layer?batch=8&batch=16", ["gives 'batch' 2 times"], ("Batch (B)", "32")),
    "very-long": (
        f"memory-budget?seq_len={LONG}",
        ["value for 'seq_len' is too long"],
        ("Sequence length (S)", "1024"),
    ),
    "unknown-gpu": (
        "linear-layer?gpu=Imaginary%20GPU",
        ["'gpu' is not one of this page's options"],
        ("GPU", "A100 80GB SXM"),
    ),
    "unknown-preset": (
        "memory-budget?estimate=detailed&model=GPT-unknown&device_gb=7",
        ["'device_gb' is not one of this page's options", "'model' is not one of this page's options"],
        ("Model", "custom"),
    ),
}


@pytest.mark.parametrize("case", BAD_LINKS)
def test_a_bad_link_shows_a_note_and_the_page_still_works(learner, case):
    link, expected_notes, (widget, shown) = BAD_LINKS[case]
    page = learner.open(link)
    expect(note_boxes(page)).to_have_count(len(expected_notes))
    expect(note_boxes(page)).to_contain_text(expected_notes)
    assert learner.settings_shown()[widget] == shown
    expect(page.locator('[data-testid="stMain"] h1')).to_be_visible()
    assert_clean(learner)
    note_boxes(page).first.scroll_into_view_if_needed()
    learner.screenshot(f"bad-link-{case}")


def test_a_links_own_text_never_reaches_its_note(learner):
    # Notes are Markdown, so a hostile link must not be able to write part of one.
    value = "[sign in here](http://example.com) **now**"
    page = learner.open(f"linear-layer?gpu={quote(value)}")
    expect(note_boxes(page)).to_contain_text(
        ["Ignored from the link: 'gpu' is not one of this page's options."]
    )
    expect(note_boxes(page)).not_to_contain_text("sign in here")
    expect(page.locator(f'a[href^="{MARKUP_LINK}"]')).to_have_count(0)
    expect(note_boxes(page).locator("strong")).to_have_count(0)
    assert_clean(learner)


def fill_run_a(learner, *, why: str, reflection: str) -> None:
    """Run A's two forms: Run B first, then the first experiment with its reasoning (a saved decision adds
    the pair's prediction form between them)."""
    expect(learner.main_forms()).to_have_count(2)
    learner.submit_form(1, reflection)
    learner.submit_form(0, why, option="Halve the tokens per step (batch × sequence) and run it again")


def test_two_learners_at_once_never_see_each_others_answers_or_text(learner, second_learner):
    ada, bo = learner, second_learner
    marker = {ada: "ada-7f3", bo: "bo-2c9"}
    wrong = "It is a hardware limit, because the device raised it"
    right = (
        "On its own, nothing: the allocator is only where it surfaced, and the cause can sit in any "
        "layer above"
    )
    # Both sessions stay open on the same server the whole time, as in a workshop room.
    for who in (ada, bo):
        who.open("run-a")
    for who in (ada, bo):
        fill_run_a(who, why=f"{marker[who]} reasoning", reflection=f"{marker[who]} run B")
    for who in (ada, bo):
        who.nav("Quiz and report")
    ada.answer(wrong)
    bo.answer(right)

    for who, other, feedback in ((ada, bo, "Not quite."), (bo, ada, "Right.")):
        page, mine, theirs = who.page, marker[who], marker[other]
        expect(page.get_by_test_id("stText").filter(has_text=mine)).to_have_text(
            [f"{mine} reasoning", f"{mine} run B"]
        )
        assert theirs not in who.main_text()
        expect(page.get_by_role("radio", name=wrong, exact=True, checked=True)).to_have_count(
            1 if who is ada else 0
        )
        expect(page.get_by_text(feedback, exact=True)).to_have_count(1)
        who.screenshot(f"two-learners-{mine}")
        who.nav("Run A experiment")
        expect(page.get_by_test_id("stText")).to_have_text([f"{mine} reasoning", f"{mine} run B"])
        assert theirs not in who.main_text()
        assert_clean(who)


def assert_inert(page: Page) -> None:
    """The markup did nothing: no script ran, no link, bold or HTML element came out of it."""
    assert page.evaluate("typeof window.__x") == "undefined"
    main = page.locator('[data-testid="stMain"]')
    expect(main.locator(f'a[href^="{MARKUP_LINK}"]')).to_have_count(0)
    expect(main.locator("b")).to_have_count(0)
    # Exactly "star": the page's own bold text may contain those letters ("**Start:**" on Run A).
    expect(main.locator("strong").filter(has_text=re.compile(r"^star$"))).to_have_count(0)
    expect(main.locator("script")).to_have_count(0)


def test_markup_typed_by_a_learner_shows_literally_everywhere(learner):
    page = learner.open()
    learner.nav("Run A experiment")
    fill_run_a(learner, why=MARKUP, reflection=f"{MARKUP} again")
    expect(page.get_by_test_id("stText")).to_have_text([MARKUP, f"{MARKUP} again"])
    assert_inert(page)
    learner.screenshot_whole("markup-run-a")

    learner.nav("Scaling out")
    page.get_by_role("tab", name="Synthesis").click()
    page.get_by_role("textbox", name="Quantified rationale").fill(f"{MARKUP} plan")
    page.get_by_role("button", name="Save synthesis").click()
    learner.settle()
    expect(page.get_by_role("textbox", name="Quantified rationale")).to_have_value(f"{MARKUP} plan")
    assert_inert(page)

    learner.nav("Quiz and report")
    expect(page.get_by_test_id("stText").filter(has_text=MARKUP)).to_have_text(
        [MARKUP, f"{MARKUP} again", f"{MARKUP} plan"]
    )
    assert_inert(page)
    learner.screenshot_whole("markup-quiz-and-report")
    with page.expect_download() as download:
        page.get_by_role("button", name=lessons.sentence("quiz_report", "download_report")).click()
    report = download.value.path().read_text(encoding="utf-8")
    # Each piece of learner text sits in a fenced block, where Markdown shows it exactly as typed.
    for text in (MARKUP, f"{MARKUP} again", f"{MARKUP} plan"):
        assert f"```text\n{text}\n```" in report
    assert report.count(MARKUP) == 3
    assert_clean(learner)
