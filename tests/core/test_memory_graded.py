"""The Memory page's sketch is graded on the careful count of the step its sliders show, on its card."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory.graded import careful_outcomes, graded_step, lesson_capacity, lesson_device_bytes
from core.memory.phases import step_phases
from core.memory.timeline import step_timeline
from core.memory.view import lesson_outcomes, page_settings, rule_and_count, said, sweep_values
from core.settings_schema import section

SEQ_LENS = sweep_values("seq_len")


def test_the_lessons_model_on_a_24_gib_card_is_graded_on_the_count_not_the_rule():
    # H 2,048, 16 blocks, B 4, S 1,024, FP32 Adam. The rule: optimizer state (6.44 GB) largest, breaks at
    # 6,144 tokens on 25.77 GB. The count at backward's start: activations 11.38 GB + the loss's FP32
    # logits 1.57 GB = 12.95 GB, beside Adam's 7.63 GB (two FP32 moments of 953,223,168 parameters).
    outcomes = careful_outcomes(page_settings({}), seq_lens=SEQ_LENS)
    assert outcomes.largest_term == "activations"
    assert outcomes.largest_gb == pytest.approx(12.95, abs=0.01)
    assert outcomes.optimizer_state_gb == pytest.approx(2 * 4 * 953_223_168 / 1e9)
    assert (outcomes.largest_fitting, outcomes.breaks) == (1024, "1536")
    assert lesson_outcomes({}) == ("activations", "1536")


def test_eager_attention_would_break_a_step_sooner_which_is_why_the_grade_names_its_attention():
    base = page_settings({})
    eager = replace(graded_step(base), attention="eager")
    assert step_timeline(eager, capacity=lesson_capacity("24")).failure is not None  # 1,024 already fails
    assert step_timeline(graded_step(base), capacity=lesson_capacity("24")).failure is None


def test_the_lessons_device_is_the_card_as_it_reports_itself():
    assert lesson_device_bytes("24") == 25_769_803_776
    assert lesson_capacity("80").label == "80 GiB (85.90 GB)"


def test_the_sentence_sets_the_rule_beside_the_count():
    text = said(rule_and_count({}))
    assert "optimizer state is the largest term and the budget breaks at 6,144 tokens" in text
    assert "saved activations (13.0 GB" in text and "breaks at 1,536 tokens" in text


@settings(max_examples=25, deadline=None)
@given(
    device=st.sampled_from(section("memory").field("device_gb").choices),
    batch=st.integers(1, 8),
    seq_index=st.integers(0, len(SEQ_LENS) - 1),
    optimizer=st.sampled_from(("sgd", "sgd_momentum", "adam")),
)
def test_the_break_is_the_first_length_that_fails_and_every_shorter_one_fits(
    device, batch, seq_index, optimizer
):
    stored = {"device_gb": device, "batch": batch, "seq_len": SEQ_LENS[seq_index], "optimizer": optimizer}
    chosen = page_settings(stored)
    outcomes = careful_outcomes(chosen, seq_lens=SEQ_LENS)
    capacity = lesson_capacity(device)

    def fails(length: int) -> bool:
        return step_timeline(graded_step(chosen, seq_len=length), capacity=capacity).failure is not None

    if outcomes.breaks == "never":
        assert not any(fails(length) for length in SEQ_LENS)
    else:
        first = int(outcomes.breaks)
        assert fails(first) and not any(fails(length) for length in SEQ_LENS if length < first)
    at_peak = step_phases(graded_step(chosen))
    assert outcomes.largest_gb <= at_peak.peak_bytes / 1e9
