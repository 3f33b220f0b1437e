"""Lesson pages run their body as one fragment: what a click there must still change outside the body
(the sidebar summary, the address bar, another page), in a browser, where a fragment reruns alone."""

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

RIGHT_R1 = "Resource: the step asks for more memory than the device holds"


def _sidebar_metric(page: Page, label: str) -> str:
    tile = page.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').filter(has_text=label).first
    return tile.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_an_answer_on_four_runs_counts_in_the_sidebar_summary_at_once(learner):
    page = learner.open("four-runs")
    assert _sidebar_metric(page, "Checks") == "0/9"
    learner.answer(RIGHT_R1)
    expect(page.get_by_text("Right.", exact=False).first).to_be_visible()
    assert _sidebar_metric(page, "Checks") == "1/9"
    # One summary: the fragment draws into the box the frame reserved, not beside it.
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("Your progress", exact=True)).to_have_count(1)
    assert learner.exceptions() == []


def test_a_locked_answer_sends_the_question_and_the_summary_and_leaves_the_page_be(learner):
    page = learner.open("four-runs")
    page_sent = max(count for _, count in learner.runs.started)  # the page drawn, to measure the lock against

    before = len(learner.runs.started)
    learner.answer(RIGHT_R1)
    after = learner.runs.started[before:]
    ran = {fragment for fragments, _ in after for fragment in fragments}
    sent = sum(count for _, count in after)
    assert after and all(fragments for fragments, _ in after), "locking the answer reran the whole app"
    assert len(ran) == 2, "locking the answer reran more than the question and summary"
    assert sent * 2 < page_sent, f"the lock sent {sent} elements, the page's run {page_sent}"

    expect(page.get_by_text("Right.", exact=False).first).to_be_visible()
    assert _sidebar_metric(page, "Checks") == "1/9"
    # What the lock left alone is still drawn, once: the title and the three questions still open.
    expect(page.get_by_role("heading", name="Four runs, four different problems")).to_have_count(1)
    expect(page.get_by_role("button", name="Lock in my answer")).to_have_count(3)
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("Your progress", exact=True)).to_have_count(
        1
    )
    assert learner.exceptions() == []
    assert learner.console_errors == []


def test_home_shows_the_summary_and_its_links_leave_for_the_lesson(learner):
    page = learner.open()
    assert _sidebar_metric(page, "Quiz") == "0/3"
    page.locator('[data-testid="stMain"]').get_by_role("link", name="Four runs").first.click()
    learner.settle()
    expect(page.get_by_role("heading", name="Four runs, four different problems")).to_be_visible()
    assert "four-runs" in page.url


def test_linear_layer_settings_reach_the_address_bar_before_and_after_the_reveal(learner):
    page = learner.open("linear-layer")
    learner.slide("Batch (B)")
    batch = learner.settings_shown()["Batch (B)"]
    assert f"batch={batch}" in page.url and f"batch={batch}" in learner.shared_link()
    learner.predict_all()
    expect(page.get_by_role("heading", name="What the roofline leaves out")).to_be_visible()
    learner.slide("Batch (B)")
    moved = learner.settings_shown()["Batch (B)"]
    assert moved != batch and f"batch={moved}" in page.url
    expect(page.get_by_role("heading", name="What the roofline leaves out")).to_be_visible()
    assert learner.exceptions() == []
    assert learner.console_errors == []


def test_the_dashboards_wait_until_every_run_is_sorted_and_open_with_the_last_lock(learner):
    page = learner.open("four-runs")
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    expect(page.get_by_role("tab")).to_have_count(0)
    expect(charts).to_have_count(0)
    learner.sort_four_runs()  # the last lock reruns the page's body, which draws the dashboards
    expect(page.get_by_role("tab", name="Run A")).to_be_visible()
    expect(charts).to_have_count(2)  # Run A's two panels
    assert learner.exceptions() == []
    assert learner.console_errors == []
