"""Will it fit? in a real browser: a learner pastes a config.json, picks QLoRA on a 24 GB card, and reads
the longest sequence that fits and why one token more does not."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import lessons
from core.datafiles import DATA_DIR
from core.gpus import gpu
from core.memory.budget import TERM_LABELS
from core.memory.fit import longest_fit
from core.memory.reference import cuda_context_bytes
from core.memory.settings import Method, Sharding
from core.memory.setup import StepSetup, TrainingMethod
from core.memory.verdict import whole_card
from core.model_config import load_config_text
from tests.e2e.test_accessibility import violations

pytestmark = pytest.mark.e2e

CONFIG = (DATA_DIR / "models" / "llama-3.2-1b.json").read_text()
CARD = gpu("RTX 4090")  # 24 GiB


def _expected():
    """The answer core gives for the page's defaults: micro-batch 1, BF16, SDPA, no recomputation, Adam,
    QLoRA of rank 16 on the attention projections, one RTX 4090."""
    run = StepSetup(
        model=load_config_text(CONFIG, name="your config.json"),
        batch=1,
        seq_len=1,
        precision="bf16",
        optimizer="adam",
        training=TrainingMethod(method="qlora"),
    )
    return longest_fit(run, whole_card(CARD.name, CARD.memory_bytes, context_bytes=cuda_context_bytes()))


def test_paste_a_config_pick_qlora_on_a_24_gb_card_and_read_the_longest_sequence_and_why(learner):
    fit = _expected()
    assert 0 < fit.seq_len < fit.bound and fit.failure_moment is not None  # an answer and a why to read
    page = learner.open("memory-budget")
    learner.pick("Estimate", "Detailed estimate")
    config_box = page.locator('[data-testid="stExpander"]').filter(
        has_text=lessons.sentence("memory", "config_box")
    )
    config_box.get_by_text(lessons.sentence("memory", "config_box"), exact=True).click()
    text = page.get_by_label(lessons.sentence("memory", "config_text"), exact=True)
    text.fill(CONFIG)
    text.press("Control+Enter")  # Streamlit sends a text area's value on Ctrl+Enter or on blur
    learner.settle()
    page.get_by_role("button", name=lessons.sentence("memory", "config_use"), exact=True).click()
    learner.settle()
    fit_box = page.locator('[data-testid="stExpander"]').filter(has_text="Will it fit?")
    learner.open_box(fit_box, "Will it fit?")
    learner.pick("Training method", Method.label_of("qlora"))
    learner.choose("GPU to fit on", "RTX 4090")
    expect(page).to_have_url(re.compile(r"[?&]method=qlora(&|$)"))  # a stored setting, in the share link
    # The answer, with its figure, and why one token more runs out.
    expect(fit_box.get_by_text(f"{fit.seq_len:,} tokens", exact=True)).to_be_visible()
    why = fit_box.get_by_text(re.compile(rf"{fit.seq_len + 1:,} tokens"))
    expect(why).to_be_visible()
    expect(why).to_contain_text(TERM_LABELS[fit.failure_moment.largest_term])
    # One chart of every method, described for a screen reader with the QLoRA bar's figure.
    described = fit_box.locator(f'[aria-label*="QLoRA on 1 GPU, {fit.seq_len:,} tokens"]')
    expect(described.first).to_be_visible()
    assert fit_box.locator('[data-testid="stVegaLiteChart"]').count() == 1
    assert violations(page) == []  # axe-core: no serious WCAG 2.1 A/AA finding with the box open
    assert learner.exceptions() == []
    assert learner.console_errors == []
    learner.screenshot_whole("will-it-fit-qlora")


def _type_number(learner, box, label: str, value: int) -> None:
    """Type `value` into the whole-number box labelled `label` and press Enter: Chromium sends it as an
    `int_value`, which the server's widget-type guard must take."""
    field = box.get_by_label(label, exact=True)
    field.scroll_into_view_if_needed()
    field.fill(str(value))
    field.press("Enter")
    learner.settle()


def test_a_rank_and_a_gpu_count_typed_in_the_browser_change_the_answer(learner):
    run = StepSetup(
        model=load_config_text(CONFIG, name="your config.json"),
        batch=1,
        seq_len=1,
        precision="bf16",
        optimizer="adam",
        training=TrainingMethod(method="qlora", lora_rank=64, gpus=8, sharding="fsdp"),
    )
    fit = longest_fit(run, whole_card(CARD.name, CARD.memory_bytes, context_bytes=cuda_context_bytes()))
    page = learner.open("memory-budget")
    learner.pick("Estimate", "Detailed estimate")
    learner.choose("Model", "Llama-3.2-1B")
    fit_box = page.locator('[data-testid="stExpander"]').filter(has_text="Will it fit?")
    learner.open_box(fit_box, "Will it fit?")
    learner.pick("Training method", Method.label_of("qlora"))
    learner.choose("GPU to fit on", "RTX 4090")
    _type_number(learner, fit_box, "LoRA rank", 64)
    learner.choose("Sharding over the GPUs", Sharding.label_of("fsdp"))
    _type_number(learner, fit_box, "GPUs", 8)
    expect(page).to_have_url(re.compile(r"[?&]lora_rank=64(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]run_gpus=8(&|$)"))
    expect(fit_box.get_by_text(re.compile(r"QLoRA on 8 GPUs, FSDP \(RTX 4090"))).to_be_visible()
    expect(fit_box.get_by_text(f"{fit.seq_len:,} tokens", exact=True)).to_be_visible()
    assert learner.exceptions() == []
