"""The four detectors on hand-made series: numbers worked by hand, plus hypothesis properties."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from core import lessons
from core.diagnose.detectors import (
    LIKELY,
    NO_SIGN,
    POSSIBLE,
    RunContext,
    correctness,
    numerical,
    plateau_step,
    resource,
    throughput,
)
from core.diagnose.diagnosis import diagnose
from tests.core.diagnose_helpers import make_run

TEN_CLASSES = RunContext(classes=10)


def says(key: str, **figures: object) -> str:
    """The diagnosis's sentence `key` with these figures: a test pins the figures, not the wording."""
    return lessons.sentence("diagnose", key, **figures)


def test_the_first_nan_step_is_reported_exactly():
    loss = [2.0 - 0.01 * i for i in range(37)] + [math.nan] * 20
    finding = numerical(make_run(loss=loss))
    assert finding.verdict == LIKELY
    assert finding.marks.nan_step == 37
    assert says("first_nan", column="loss", step=37) in finding.evidence
    assert says("last_finite", column="loss", value=1.64) in finding.evidence  # 2.0 - 0.01 * 36


def test_an_infinite_loss_is_named_infinite():
    loss = [1.0] * 5 + [math.inf, math.nan]
    finding = numerical(make_run(loss=loss))
    assert finding.evidence[0] == says("first_infinite", column="loss", step=5)


def test_a_gradient_blow_up_before_the_nan_is_evidence():
    # Gradient norm 1.0 for 30 steps, 50 at step 30, nan at step 31: 50 / 1 = 50 times.
    grad = [1.0] * 30 + [50.0, math.nan]
    loss = [2.0] * 31 + [math.nan]
    finding = numerical(make_run(loss=loss, grad_norm=grad))
    assert finding.marks.nan_step == 31
    assert says("grad_blowup_before_nan", peak=50, step=30, ratio=50, usual=1) in finding.evidence


def test_a_loss_spike_without_nan_is_possible_and_marked():
    loss = [1.0] * 40 + [3.0] + [1.0] * 20  # triple the recent level at step 40
    finding = numerical(make_run(loss=loss))
    assert finding.verdict == POSSIBLE
    assert finding.marks.spike_steps == (40,)


def test_without_a_gradient_norm_the_numerical_detector_says_what_is_missing():
    finding = numerical(make_run(loss=[1.0] * 30))
    assert finding.verdict == NO_SIGN
    assert finding.missing and "gradient norm" in finding.missing[0]


def test_plateau_step_of_a_drop_worked_by_hand():
    # 50 steps at 3.0, then 150 at ln 10. Smoothing window 200 // 10 = 20 values: the trailing median
    # first equals ln 10 when 11 of its 20 values come after the drop, at step 49 + 11 = 60.
    loss = [3.0] * 50 + [math.log(10)] * 150
    assert plateau_step(list(range(200)), loss) == 60
    finding = correctness(make_run(loss=loss), TEN_CLASSES)
    assert finding.verdict == LIKELY
    assert finding.marks.plateau_step == 60
    assert finding.marks.chance_loss == math.log(10)
    ln_10 = says("chance_classes", classes=10)
    assert says("ends_at_chance", chance_source=ln_10, chance_loss=2.303) in finding.evidence


def test_a_flat_loss_without_a_chance_level_is_only_possible_and_asks_for_it():
    finding = correctness(make_run(loss=[1.7] * 100), RunContext())
    assert finding.verdict == POSSIBLE
    assert finding.missing == (says("missing_chance_level"),)


def test_a_flat_loss_far_from_chance_is_possible():
    finding = correctness(make_run(loss=[0.9] * 100), RunContext(vocab=50_257))
    assert finding.verdict == POSSIBLE
    # ln 50,257 = 10.825; the loss ends at 0.9, (10.825 - 0.9) / 10.825 = 92% below it.
    ln_vocab = says("chance_vocab", vocab=50_257)
    assert finding.evidence[2] == says(
        "ends_off_chance", chance_source=ln_vocab, chance_loss=10.825, offset_percent=91.7, side="below"
    )
    assert "the loss ends 92% below it." in finding.evidence[2] and "-" not in finding.evidence[2]


def test_a_leak_slope_worked_by_hand():
    # 1.0 GB + 10 MB a step for 100 steps; warm-up leaves out steps 0-9, so the fit runs from
    # 1.10 GB at step 10 to 1.99 GB at step 99 (+81%), and (4 - 1.99) / 0.01 = 201 steps remain.
    memory = [1.0 + 0.01 * i for i in range(100)]
    finding = resource(make_run(memory=memory), RunContext(device_gb=4))
    assert finding.verdict == LIKELY
    assert finding.page_title == "Run A experiment"
    rose = says(
        "memory_rose",
        start_gb=1.1,
        end_gb=1.99,
        rise=0.81,
        first_step=10,
        last_step=99,
        mb_per_step=10,
        r_squared=1,
    )
    assert rose in finding.evidence
    assert says("memory_reaches_limit", limit_gb=4, steps=201) in finding.evidence
    assert finding.marks.memory_trend is not None


def test_flat_memory_at_the_device_limit_is_a_budget_not_a_leak():
    finding = resource(make_run(memory=[23.5] * 50), RunContext(device_gb=24))
    assert finding.verdict == LIKELY
    assert finding.page_title == "Memory budget"
    # 24 GB as typed is 22.4 GiB: the device written once, the way the Memory page writes it.
    assert (
        says("memory_peak_share", peak_gb=23.5, share=0.98, device="22.4 GiB (24.00 GB)") in finding.evidence
    )
    assert finding.marks.device_limit_gb == 24


def test_flat_memory_without_a_device_size_asks_for_it():
    finding = resource(make_run(memory=[3.0] * 50), RunContext())
    assert finding.verdict == NO_SIGN
    assert finding.missing == (says("missing_device_memory"),)


def test_throughput_from_utilisation_data_wait_and_mfu():
    run = make_run(
        utilisation=[30.0] * 20, data_time=[0.05] * 20, step_time=[0.1] * 20, tokens_per_s=[1000.0] * 20
    )
    # MFU = 6 × 1e9 parameters × 1,000 tokens/s / 989e12 FLOP/s = 0.61%.
    finding = throughput(run, RunContext(params=1e9, peak_tflops=989))
    assert finding.verdict == LIKELY
    assert finding.evidence[0] == says("median_utilisation", utilisation_pct=30)
    # A 0.1 s step with 0.05 s of data wait: both written by duration_label in the step's unit.
    assert all(figure in finding.evidence[1] for figure in ("100 ms", "50.0 ms", "(50%)"))
    mfu = {"tokens_per_s": 1000, "flops_per_param_token": 6, "params": 1e9, "achieved_tflops": 6.0}
    assert finding.evidence[2] == says("mfu", **mfu, peak_tflops=989, mfu=0.0061)


def test_tokens_per_second_without_a_model_size_names_what_is_missing():
    finding = throughput(make_run(tokens_per_s=[1000.0] * 20), RunContext())
    assert finding.verdict == NO_SIGN
    assert says("missing_mfu_inputs") in finding.missing


def test_the_primary_kind_prefers_a_nan_over_a_slow_step():
    run = make_run(loss=[1.0] * 10 + [math.nan], utilisation=[20.0] * 11)
    assert diagnose(run, RunContext()).primary == "numerical"


def test_a_clean_run_is_healthy_and_says_what_it_could_not_check():
    run = make_run(loss=[2.3 * math.exp(-i / 30) + 0.1 for i in range(200)])
    result = diagnose(run, TEN_CLASSES)
    assert result.primary == "healthy"
    assert says("missing_memory") in result.summary


def test_both_a_class_count_and_a_vocabulary_are_refused():
    try:
        RunContext(classes=10, vocab=100)
    except ValueError as err:
        assert "not both" in str(err)
    else:
        raise AssertionError("a context with both chance levels was accepted")


@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(min_value=40, max_value=400),
    noise=st.lists(st.floats(min_value=-0.1, max_value=0.1), min_size=400, max_size=400),
)
def test_noise_does_not_flip_a_healthy_verdict(length, noise):
    loss = [(2.2 * math.exp(-i / (length / 5)) + 0.2) * (1 + noise[i]) for i in range(length)]
    result = diagnose(make_run(loss=loss), TEN_CLASSES)
    assert result.finding("numerical").verdict == NO_SIGN
    assert result.finding("correctness").verdict == NO_SIGN
    assert result.primary == "healthy"


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=200),
    where=st.integers(min_value=0),
    bad=st.sampled_from([math.nan, math.inf, -math.inf]),
)
def test_a_nan_anywhere_is_always_reported(values, where, bad):
    index = where % len(values)
    values[index] = bad
    finding = numerical(make_run(loss=values))
    assert finding.verdict == LIKELY
    assert finding.marks.nan_step == index
