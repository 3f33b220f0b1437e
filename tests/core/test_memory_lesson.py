"""The lesson's five-term budget: its default figures worked by hand, its sweep and its invariants."""

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory import TERMS, budget_verdict
from core.memory.lesson import lesson_parameter_count, lesson_sweep, lesson_terms
from core.memory.setup import LessonSetup

DEFAULTS = LessonSetup(hidden=2048, layers=16, dtype="fp32", optimizer="adam", batch=4, seq_len=1024)

setups = st.builds(
    LessonSetup,
    hidden=st.sampled_from(range(1024, 8193, 1024)),
    layers=st.sampled_from(range(4, 65, 4)),
    dtype=st.sampled_from(["fp32", "bf16"]),
    optimizer=st.sampled_from(["sgd", "sgd_momentum", "adam"]),
    batch=st.integers(1, 32),
    seq_len=st.sampled_from(range(512, 8193, 512)),
)


def test_the_lessons_default_budget_by_hand():
    # 12 × 2048² × 16 = 805,306,368 parameters.
    assert lesson_parameter_count(hidden=2048, layers=16) == 805_306_368
    terms = lesson_terms(DEFAULTS)
    assert terms.parameters_bytes == terms.gradients_bytes == 805_306_368 * 4  # 3.22 GB each
    assert terms.optimizer_state_bytes == 805_306_368 * 2 * 4  # Adam's two FP32 values: 6.44 GB
    assert terms.activations_bytes == 4 * 1024 * 2048 * 16 * 4 * 4 == 2_147_483_648  # 2.15 GB
    assert terms.workspace_bytes == 1e9
    assert terms.master_weights_bytes == terms.runtime_overhead_bytes == 0  # the lesson leaves these out
    # 3.221 + 3.221 + 6.442 + 2.147 + 1 = 16.03 GB on a 24 GB device: fits with 7.97 GB spare.
    verdict = budget_verdict(terms, device_gb=24)
    assert verdict.total_gb == pytest.approx(16.032385536)
    assert (verdict.fits, round(verdict.headroom_gb, 1), verdict.largest_term) == (
        True,
        8.0,
        "optimizer_state",
    )
    assert [round(s.gb, 2) for s in terms.shares()] == [3.22, 3.22, 6.44, 2.15, 1.0]


def test_a_two_byte_dtype_halves_weights_and_activations_but_not_the_optimizer_state():
    full, half = lesson_terms(DEFAULTS), lesson_terms(replace(DEFAULTS, dtype="bf16"))
    assert half.parameters_bytes == full.parameters_bytes / 2
    assert half.activations_bytes == full.activations_bytes / 2
    assert half.optimizer_state_bytes == full.optimizer_state_bytes


def test_doubling_the_sequence_twice_breaks_the_default_budget():
    # Fixed terms 3.221 + 3.221 + 6.442 + 1 = 13.885 GB; activations 2.147 GB per 1,024 tokens,
    # so S ≤ (24 − 13.885) / 2.147 × 1024 ≈ 4,823: 4,608 is the last multiple of 512 that fits.
    sweep = lesson_sweep(DEFAULTS, axis="seq_len", values=range(512, 8193, 512), device_gb=24)
    assert (sweep.largest_fitting, sweep.first_failing) == (4608, 5120)
    assert sweep.total_gb[1] == pytest.approx(lesson_terms(DEFAULTS).total_gb)
    by_batch = lesson_sweep(DEFAULTS, axis="batch", values=range(1, 33), device_gb=24)
    assert (by_batch.largest_fitting, by_batch.first_failing) == (18, 19)  # 13.885 + 0.537·B ≤ 24


@given(setup=setups)
def test_every_term_is_non_negative(setup):
    terms = lesson_terms(setup)
    assert all(terms.term_bytes(t) >= 0 for t in TERMS)


@given(setup=setups, factor=st.integers(2, 4))
def test_activations_scale_linearly_with_batch_and_sequence(setup, factor):
    base = lesson_terms(setup).activations_bytes
    assert lesson_terms(replace(setup, batch=setup.batch * factor)).activations_bytes == factor * base
    assert lesson_terms(replace(setup, seq_len=setup.seq_len * factor)).activations_bytes == factor * base


@given(setup=setups, batch=st.integers(1, 32), seq_len=st.sampled_from(range(512, 8193, 512)))
def test_only_activations_change_with_batch_or_sequence(setup, batch, seq_len):
    before, after = lesson_terms(setup), lesson_terms(replace(setup, batch=batch, seq_len=seq_len))
    assert all(before.term_bytes(t) == after.term_bytes(t) for t in TERMS if t != "activations")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden": 0}, "Hidden must be a whole number"),
        ({"batch": 1.5}, "Batch must be a whole number"),
        ({"dtype": "fp8"}, "Unknown dtype 'fp8'"),
        ({"optimizer": "lion"}, "Unknown optimizer 'lion'"),
    ],
)
def test_bad_settings_are_refused_readably(change, message):
    with pytest.raises(ValueError, match=message):
        replace(DEFAULTS, **change)
