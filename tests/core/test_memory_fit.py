"""The longest sequence a run fits: whole tokens, found by search over the two-step failure model
(`core.memory.first_oom`), and why one token more fails."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory.first_oom import first_oom
from core.memory.fit import MAX_SEQ_LEN, longest_fit, search_bound
from core.memory.phases import step_moments
from core.memory.setup import METHODS, StepSetup, TrainingMethod
from core.memory.timeline import step_timeline
from core.memory.verdict import ALLOCATOR_RESERVE_BYTES, Capacity, capped
from core.models import preset

LLAMA_3_8B = preset("Llama-3-8B")  # 8,030,261,248 parameters (keras-hub's llama3_8b_en preset)


def _run(model: str, *, batch: int = 1, training: TrainingMethod | None = None) -> StepSetup:
    return StepSetup(
        model=preset(model), batch=batch, seq_len=1, precision="bf16", training=training or TrainingMethod()
    )


def test_model_state_alone_over_the_line_fits_no_token():
    # BF16 weights are 2 × 8,030,261,248 = 16,060,522,496 bytes and their gradients as much again:
    # 32.1 GB before one activation, over a 24 GiB (25.8 GB) cap. Step 1's backward, filling the
    # gradients block by block, is where it dies, and the weights are the largest term then.
    fit = longest_fit(_run("Llama-3-8B"), capped(24))
    assert fit.seq_len == 0 and fit.peak is None
    assert fit.failure is not None and (fit.failure.step, fit.failure.phase) == (1, "backward")
    assert fit.failure_moment is not None
    assert fit.failure_moment.largest_term == "parameters"
    assert fit.failure_moment.largest_bytes == 2 * 8_030_261_248
    assert fit.limited_by == "memory"


def test_weights_over_the_line_fail_before_the_first_forward():
    # Llama-3.2-1B's BF16 weights, 2 × 1,235,814,400 = 2,471,628,800 bytes, with the allocator's reserve
    # do not load under a 2 GiB (2,147,483,648-byte) cap.
    fit = longest_fit(_run("Llama-3.2-1B"), capped(2))
    assert fit.seq_len == 0 and fit.failure is not None and fit.failure_moment is not None
    assert (fit.failure.step, fit.failure.phase, fit.failure.what) == (1, "forward", "start")
    assert fit.failure_moment.terms.parameters_bytes == fit.failure_moment.largest_bytes == 2_471_628_800


def test_a_card_exactly_as_large_as_a_run_at_1000_tokens_fits_1000_and_no_more():
    run = _run("Qwen2.5-0.5B")
    probe = capped(80)  # only to read the timeline: the overheads are the same on the card below
    at_1000 = step_timeline(replace(run, seq_len=1000), capacity=probe)
    need_bytes = max(p.live.total_bytes for p in at_1000.points)
    card = Capacity(label="exact", total_bytes=math.ceil(need_bytes), context_bytes=0)
    fit = longest_fit(run, card)
    assert fit.seq_len == 1000
    assert fit.peak is not None and fit.peak.terms.total_bytes == need_bytes
    # One token more: the run fails, and the moment it fails needs what the failure says it needs.
    assert fit.failure is not None and fit.failure_moment is not None
    assert fit.failure_moment.terms.total_bytes == fit.failure.needed_bytes > card.total_bytes
    assert fit.failure_moment.terms.runtime_overhead_bytes == ALLOCATOR_RESERVE_BYTES


def test_gpt2_stops_at_its_1024_learned_positions_not_at_memory():
    # GPT-2 small's model state is 124,439,808 × (2 + 2 + 12) bytes ≈ 2.0 GB; 1,024 tokens of one
    # sequence add far less than the 78 GB left on an 80 GiB cap.
    fit = longest_fit(_run("GPT-2 small"), capped(80))
    assert (fit.seq_len, fit.bound, fit.limited_by, fit.failure) == (1024, 1024, "positions", None)


def test_a_model_without_learned_positions_stops_at_the_stated_bound():
    assert search_bound(_run("Qwen2.5-0.5B")) == MAX_SEQ_LEN == 131_072
    fit = longest_fit(_run("Qwen2.5-0.5B"), capped(80), upper=512)
    assert (fit.seq_len, fit.limited_by, fit.failure) == (512, "bound", None)
    assert fit.setup.seq_len == 512


@pytest.mark.parametrize("upper", [0, -5, 1.5, True])
def test_a_bound_that_is_not_a_whole_number_of_tokens_is_refused(upper):
    with pytest.raises(ValueError, match="whole number of tokens"):
        longest_fit(_run("Qwen2.5-0.5B"), capped(80), upper=upper)


TRAININGS = st.one_of(
    st.builds(TrainingMethod, method=st.sampled_from(METHODS)),
    st.builds(TrainingMethod, method=st.sampled_from(METHODS), gpus=st.just(8), sharding=st.just("fsdp")),
)


@settings(max_examples=25, deadline=None)
@given(
    model=st.sampled_from(["GPT-2 small", "Pythia-160M", "Qwen2.5-0.5B", "Llama-3.2-1B"]),
    batch=st.integers(1, 4),
    cap_gib=st.integers(2, 40),
    training=TRAININGS,
)
def test_the_run_fits_at_the_limit_and_fails_one_token_longer(model, batch, cap_gib, training):
    run, capacity = _run(model, batch=batch, training=training), capped(cap_gib)
    fit = longest_fit(run, capacity)
    if fit.seq_len:
        assert first_oom(fit.setup, capacity) is None
        assert fit.setup.seq_len == fit.seq_len
    if fit.seq_len < fit.bound:
        assert fit.failure is not None
        assert first_oom(replace(run, seq_len=fit.seq_len + 1), capacity) == fit.failure


def test_a_search_keeps_only_its_answer_in_the_shared_step_caches():
    # Its probes are worked out afresh, so the steps the pages show (Run A's, warmed at start) stay put:
    # only the answer's two lengths (the peak at L and the failure at L + 1) are cached.
    setup = StepSetup(
        model=preset("Llama-3.2-1B"), batch=1, seq_len=1, training=TrainingMethod(method="lora")
    )
    longest_fit.cache_clear()
    step_timeline.cache_clear()
    step_moments.cache_clear()
    fit = longest_fit(setup, capped(11.0))
    assert fit.seq_len > 1
    assert step_timeline.cache_info().currsize == 2
    assert step_moments.cache_info().currsize == 4  # step 1 and step 2 of each
