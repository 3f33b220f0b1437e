"""A click on a lesson page reruns the page's body only (ui.frame.lesson_page), and the sidebar summary
the body redraws stays single and current. Checked on what the browser itself sends to the server."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.memory.settings import Recompute
from core.progress import check_ids
from core.questions import load_bank
from core.run_a.experiments import FIRST_EXPERIMENTS

pytestmark = pytest.mark.e2e


def _no_errors(learner) -> None:
    assert learner.exceptions() == []
    assert learner.console_errors == []


def _summary(learner) -> tuple[int, str]:
    """How many progress summaries the sidebar shows, and the Checks figure of the first."""
    sidebar = learner.page.locator('[data-testid="stSidebar"]')
    checks = sidebar.locator('[data-testid="stMetric"]').filter(has_text="Checks")
    return sidebar.get_by_text("Your progress", exact=True).count(), checks.first.inner_text()


def test_a_click_in_a_lesson_reruns_its_body_and_the_summary_follows_a_locked_answer(learner):
    page = learner.open("execution-stack")
    total = len(check_ids(load_bank()))
    count, checks = _summary(learner)
    assert count == 1 and f"0/{total}" in checks

    learner.pick("Symptom", "Loss becomes nan")
    expect(page.get_by_role("radio", name="Loss becomes nan")).to_be_checked()
    assert learner.runs.fragments and learner.runs.fragments[-1] != "", (
        "the symptom radio reran the whole app"
    )

    question = load_bank().question("c1")
    learner.answer(question.option_text(question.correct))
    assert learner.runs.fragments[-1] != "", "locking the answer reran the whole app"
    count, checks = _summary(learner)
    assert count == 1 and f"1/{total}" in checks
    _no_errors(learner)


def test_the_budget_controls_rerun_their_own_section_and_the_phase_controls_theirs(learner):
    page = learner.open("memory-budget")
    question = load_bank().question("c3")
    learner.answer(question.option_text(question.correct))
    body = learner.runs.fragments[-1]
    assert body != ""

    learner.predict_all()  # the sketch reveals the budget and the phase count
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
    # What the sections left alone is still drawn, once: the lesson above them and the summary.
    assert page.get_by_role("heading", name="Training keeps what inference throws away").count() == 1
    count, _ = _summary(learner)
    assert count == 1
    _no_errors(learner)


def test_run_a_s_experiment_picker_reruns_the_experiments_alone(learner):
    page = learner.open("run-a")
    learner.submit_form(0, "Halving the tokens tests the activations.", FIRST_EXPERIMENTS["batch"])
    body = learner.runs.fragments[-1]
    assert body != ""
    reasoning = page.get_by_text("Halving the tokens tests the activations.", exact=True)
    shown = reasoning.count()  # the form's field and the saved decision below it
    assert shown >= 1
    learner.pick("Timeline to show", FIRST_EXPERIMENTS["optim"])
    assert learner.runs.fragments[-1] not in ("", body), (
        "the experiment picker reran more than the experiments"
    )
    picker = page.get_by_role("radiogroup", name="Timeline to show", exact=True)
    expect(picker.get_by_role("radio", name=FIRST_EXPERIMENTS["optim"])).to_be_checked()
    # The saved decision above the experiments is still drawn, and not twice.
    assert reasoning.count() == shown
    _no_errors(learner)
