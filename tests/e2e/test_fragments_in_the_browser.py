"""A click on a lesson page reruns the page's body only (ui.frame.lesson_page), or a section of it
(ui.frame.lesson_section), or a locked question and the summary alone; in a browser, where a fragment
reruns alone, what the click must still change outside it (the sidebar summary, the address bar,
another page) changes, and what it leaves is still drawn, once. Checked on what the browser itself
sends to the server."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from core import lessons
from core.memory.settings import Recompute
from core.progress import check_ids, quiz_ids
from core.questions import load_bank
from core.run_a.experiments import FIRST_EXPERIMENTS
from core.stack import load_stack
from tests.e2e.conftest import LOCK_ANSWER

pytestmark = pytest.mark.e2e


CHARTS = '[data-testid="stVegaLiteChart"]'


def _no_errors(learner) -> None:
    assert learner.exceptions() == []
    assert learner.console_errors == []


def _right_answer(question_id: str) -> str:
    question = load_bank().question(question_id)
    return question.option_text(question.correct)


def _checks_total() -> int:
    return len(check_ids(load_bank()))


def _sidebar_metric(page: Page, label: str) -> str:
    tile = page.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').filter(has_text=label).first
    return tile.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _summaries(page: Page) -> int:
    """How many progress summaries the sidebar shows: one, where the frame reserved its box."""
    return page.locator('[data-testid="stSidebar"]').get_by_text("Your progress", exact=True).count()


def test_a_click_in_a_lesson_reruns_its_body_and_the_summary_follows_a_locked_answer(learner):
    page = learner.open("execution-stack")
    assert _summaries(page) == 1 and _sidebar_metric(page, "Checks") == f"0/{_checks_total()}"

    nan = load_stack().symptom_label("nan")
    learner.pick("Symptom", nan)
    expect(page.get_by_role("radio", name=nan)).to_be_checked()
    assert learner.runs.fragments and learner.runs.fragments[-1] != "", (
        "the symptom radio reran the whole app"
    )

    learner.answer(_right_answer("c1"))
    assert learner.runs.fragments[-1] != "", "locking the answer reran the whole app"
    assert _summaries(page) == 1 and _sidebar_metric(page, "Checks") == f"1/{_checks_total()}"
    _no_errors(learner)


def test_a_locked_answer_sends_the_question_and_the_summary_and_leaves_the_page_be(learner):
    page = learner.open("four-runs")
    locks = page.get_by_role("button", name=LOCK_ANSWER)
    open_questions = locks.count()
    page_sent = max(count for _, count in learner.runs.started)  # the page drawn, to measure the lock against

    before = len(learner.runs.started)
    learner.answer(_right_answer("r1"))
    after = learner.runs.started[before:]
    ran = {fragment for fragments, _ in after for fragment in fragments}
    sent = sum(count for _, count in after)
    assert after and all(fragments for fragments, _ in after), "locking the answer reran the whole app"
    assert len(ran) == 2, "locking the answer reran more than the question and summary"
    assert sent * 2 < page_sent, f"the lock sent {sent} elements, the page's run {page_sent}"

    assert _sidebar_metric(page, "Checks") == f"1/{_checks_total()}"
    # What the lock left alone is still drawn, once: the page's title, the questions still open.
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    expect(locks).to_have_count(open_questions - 1)
    assert _summaries(page) == 1
    _no_errors(learner)


def test_the_dashboards_wait_until_every_run_is_sorted_and_open_with_the_last_lock(learner):
    page = learner.open("four-runs")
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    expect(page.get_by_role("tab")).to_have_count(0)
    expect(charts).to_have_count(0)
    learner.sort_four_runs()  # the last lock reruns the page's body, which draws the dashboards
    expect(page.get_by_role("tab", name="Run A")).to_be_visible()
    expect(charts).to_have_count(2)  # Run A's two panels
    _no_errors(learner)


def test_the_budget_controls_rerun_their_own_section_and_the_phase_controls_theirs(learner):
    page = learner.open("memory-budget")
    learner.answer(_right_answer("c3"))
    body = learner.runs.fragments[-1]
    assert body != ""

    learner.predict_all()  # the sketch reveals the budget and the phase count
    headings = page.get_by_role("heading")
    shown = headings.count()
    parameters = page.locator('[data-testid="stMetric"]').filter(has_text="Parameters")
    before = parameters.inner_text()
    learner.slide("Hidden size (H)")
    budget = learner.runs.fragments[-1]
    assert budget not in ("", body), "the hidden-size slider reran more than the budget's section"
    expect(parameters).not_to_have_text(before)

    full = Recompute.label_of("full")
    learner.pick("Recomputation", full)
    phases = learner.runs.fragments[-1]
    assert phases not in ("", body, budget), "a phase control reran more than the phase count"
    expect(page.get_by_role("radio", name=full)).to_be_checked()
    # What the sections left alone is still drawn, once: every heading of the lesson and the summary.
    expect(headings).to_have_count(shown)
    assert _summaries(page) == 1
    _no_errors(learner)


def test_run_a_s_experiment_picker_reruns_the_experiments_alone(learner):
    page = learner.open("run-a")
    why = "Halving the tokens tests the activations."
    learner.submit_form(0, why, FIRST_EXPERIMENTS["batch"])
    body = learner.runs.fragments[-1]
    assert body != ""
    reasoning = page.get_by_text(why, exact=True)
    shown = reasoning.count()  # the form's field and the saved decision below it
    assert shown >= 1
    learner.pick("Timeline to show", FIRST_EXPERIMENTS["optim"])
    assert learner.runs.fragments[-1] not in ("", body), (
        "the experiment picker reran more than the experiments"
    )
    picker = page.get_by_role("radiogroup", name=lessons.sentence("run_a", "timeline_pick"), exact=True)
    expect(picker.get_by_role("radio", name=FIRST_EXPERIMENTS["optim"])).to_be_checked()
    # The saved decision above the experiments is still drawn, and not twice.
    assert reasoning.count() == shown
    _no_errors(learner)


def test_home_shows_the_summary_and_its_links_leave_for_the_lesson(learner):
    page = learner.open()
    assert _sidebar_metric(page, "Quiz") == f"0/{len(quiz_ids(load_bank()))}"
    page.locator('[data-testid="stMain"]').get_by_role("link", name="Four runs").first.click()
    learner.settle()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    assert "four-runs" in page.url
    expect(page.get_by_role("button", name=LOCK_ANSWER).first).to_be_visible()  # Four runs' own questions


def test_linear_layer_settings_reach_the_address_bar_before_and_after_the_reveal(learner):
    page = learner.open("linear-layer")
    learner.slide("Batch (B)")
    batch = learner.settings_shown()["Batch (B)"]
    assert f"batch={batch}" in page.url and f"batch={batch}" in learner.shared_link()
    learner.predict_all()
    charts = page.locator(CHARTS)
    expect(charts.first).to_be_visible()  # the roofline the predictions held back
    revealed = charts.count()
    learner.slide("Batch (B)")
    moved = learner.settings_shown()["Batch (B)"]
    assert moved != batch and f"batch={moved}" in page.url
    expect(charts).to_have_count(revealed)
    _no_errors(learner)
