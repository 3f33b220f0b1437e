"""In a real browser: the careful count's stack picker and three answers, and Run A's timeline."""

import pytest
from playwright.sync_api import expect

from core import lessons
from core.gpus import gpu
from core.memory.settings import Optimizer, convention_label
from core.memory.view import page_settings, phase_view
from core.models import resolve_model
from core.run_a import brief_figures

pytestmark = pytest.mark.e2e


def _answers(page) -> str:
    table = page.locator('[data-testid="stTable"]').filter(has_text="The careful count (phase model)")
    expect(table).to_be_visible()
    return table.inner_text()


def test_memory_budget_stack_picker_and_three_answers(learner):
    page = learner.open("memory-budget")
    learner.predict_all()  # the budget and the phase count show once the page's guesses are locked
    expect(page.get_by_role("heading", name=lessons.sentence("memory", "phases_heading"))).to_be_visible()
    defaults = page_settings({})
    # The lesson's own model (custom, H 2,048, 16 blocks) on its own 24 GiB card.
    model = resolve_model(defaults["phase_model"], hidden=defaults["hidden"], layers=defaults["layers"])
    view = phase_view(defaults, model=model, card=gpu(defaults["phase_gpu"]))
    shown = _answers(page)
    for row in view.answers:
        assert row["Answer"] in shown and row["Peak (GB)"] in shown
    assert "24.39" in shown and "fits, 0.46 GB spare" in shown
    learner.pick("Implementation stack", "Fused kernels (Megatron / Transformer Engine style)")
    fused = _answers(page)
    assert fused != shown and "not measured" in fused
    # Why a row has no figure is said in the list under the table, where a phone has room for it.
    expect(page.get_by_text(lessons.sentence("memory", "why_not_measured"), exact=False)).to_be_visible()
    learner.pick("Implementation stack", "PyTorch + Hugging Face transformers")
    learner.choose("Model for the phase count", "GPT-2 small")
    learner.choose("Precision", convention_label("amp"))
    learner.choose("Optimizer", Optimizer.ADAMW.label)
    learner.choose("GPU", "H200")
    # GPT-2 small, 4 × 1024, autocast, SDPA, AdamW: the H200 measured 7.50 GB at the step's peak.
    measured = _answers(page)
    assert "H200 measurement (memory.csv)" in measured and "7.50" in measured
    assert learner.exceptions() == [] and learner.console_errors == []
    learner.screenshot("memory-three-answers")


def test_run_a_timeline_and_where_it_dies(learner):
    page = learner.open("run-a")
    brief = brief_figures()
    expect(page.get_by_text(f"{brief.weights_gb:.2f} GB of weights", exact=False).first).to_be_visible()
    timeline = page.locator('[data-testid="stVegaLiteChart"]').first
    expect(timeline).to_be_visible()
    expect(page.get_by_text("Run A's shape on a batch × sequence grid", exact=False).first).to_be_attached()
    answers = page.locator('[data-testid="stTable"]').filter(has_text="H200 measurement (run_a.csv)")
    expect(answers).to_contain_text("out of memory in step 1 backward")
    assert learner.exceptions() == [] and learner.console_errors == []
    learner.screenshot("run-a-timeline")
