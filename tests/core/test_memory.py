"""The shared memory core: model-state terms, ZeRO sharding, batches, verdicts and sweeps."""

from dataclasses import fields, replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import lessons
from core.memory import (
    TERM_LABELS,
    TERMS,
    ZERO_STAGES,
    MemoryTerms,
    Precision,
    accumulation_steps,
    budget_verdict,
    effective_batch,
    model_state_terms,
    optimizer_state_values,
    sweep_totals,
    to_gb,
    zero_sharded,
)
from core.memory.settings import DETAILED_PRECISIONS

GB = 1e9
term_bytes = st.floats(min_value=0, max_value=1e12, allow_nan=False)
any_terms = st.builds(MemoryTerms, *[term_bytes] * len(TERMS))


def test_seed_004_mixed_precision_adam_for_7b_parameters():
    # 7e9 parameters: 2-byte weights 14 GB, 2-byte gradients 14 GB, FP32 master copy 28 GB, Adam's two FP32
    # moments 56 GB.
    terms = model_state_terms(parameters=7e9, precision=DETAILED_PRECISIONS["mixed16"], optimizer="adam")
    assert [
        to_gb(terms.term_bytes(t)) for t in ("parameters", "gradients", "master_weights", "optimizer_state")
    ] == [14, 14, 28, 56]
    assert terms.total_gb == 112  # 16 bytes per parameter
    # Plain FP32 is also 16 bytes with Adam (4 + 4 + 8), with no master copy: not "2x bigger weights".
    fp32 = model_state_terms(parameters=7e9, precision=DETAILED_PRECISIONS["fp32"], optimizer="adam")
    assert (fp32.total_gb, fp32.master_weights_bytes) == (112, 0)


@pytest.mark.parametrize(
    ("name", "bytes_with_adam"), [("fp32", 16), ("mixed16", 16), ("mixed18", 18), ("mixed20", 20)]
)
def test_the_precision_conventions_in_use(name, bytes_with_adam):
    assert DETAILED_PRECISIONS[name].state_bytes_per_parameter("adam") == bytes_with_adam


@pytest.mark.parametrize(("optimizer", "values"), [("sgd", 0), ("sgd_momentum", 1), ("adam", 2)])
def test_optimizer_state_is_fp32_whatever_the_weights(optimizer, values):
    assert optimizer_state_values(optimizer) == values
    for precision in DETAILED_PRECISIONS.values():
        terms = model_state_terms(parameters=1e9, precision=precision, optimizer=optimizer)
        assert terms.optimizer_state_bytes == 4 * values * 1e9


def test_zero_paper_figure_1():
    # Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B parameters, K = 12 (mixed-precision Adam), 64 GPUs.
    state = model_state_terms(parameters=7.5e9, precision=DETAILED_PRECISIONS["mixed16"], optimizer="adam")
    per_gpu = [zero_sharded(state, zero_stage=stage, gpus=64).total_gb for stage in ZERO_STAGES]
    # (2 + 2 + 12)·7.5 = 120; 4·7.5 + 12·7.5/64 = 31.4; 2·7.5 + 14·7.5/64 = 16.6; 16·7.5/64 = 1.9
    assert per_gpu == pytest.approx([120, 31.40625, 16.640625, 1.875])


@pytest.mark.parametrize(
    ("name", "kept", "sharded"), [("mixed20", 4, 16), ("mixed18", 6, 12), ("fp32", 8, 8)]
)
def test_megatron_distributed_optimizer_table(name, kept, sharded):
    # Megatron Core's distributed optimizer (ZeRO-1), bytes per parameter with Adam over d GPUs:
    # fp16 params and grads 4 + 16/d; fp16 params, fp32 grads 6 + 12/d; fp32 8 + 8/d.
    state = model_state_terms(parameters=1, precision=DETAILED_PRECISIONS[name], optimizer="adam")
    for d in (1, 8, 64):
        assert zero_sharded(state, zero_stage=1, gpus=d).total_bytes == pytest.approx(kept + sharded / d)


def test_each_zero_stage_shards_one_more_kind_of_state():
    state = MemoryTerms(
        parameters_bytes=8,
        gradients_bytes=8,
        master_weights_bytes=8,
        optimizer_state_bytes=8,
        activations_bytes=8,
        communication_buffers_bytes=8,
        workspace_bytes=8,
        runtime_overhead_bytes=8,
    )
    halves = {
        stage: {t for t in TERMS if zero_sharded(state, zero_stage=stage, gpus=2).term_bytes(t) == 4}
        for stage in ZERO_STAGES
    }
    assert halves == {
        0: set(),
        1: {"master_weights", "optimizer_state"},
        2: {"master_weights", "optimizer_state", "gradients"},
        3: {"master_weights", "optimizer_state", "gradients", "parameters"},
    }


@given(terms=any_terms, stage=st.sampled_from(ZERO_STAGES), gpus=st.integers(1, 4096))
def test_zero_never_increases_per_gpu_memory(terms, stage, gpus):
    sharded = zero_sharded(terms, zero_stage=stage, gpus=gpus)
    assert all(sharded.term_bytes(t) <= terms.term_bytes(t) for t in TERMS)
    if stage < 3:
        assert zero_sharded(terms, zero_stage=stage + 1, gpus=gpus).total_bytes <= sharded.total_bytes * (
            1 + 1e-12
        )


@pytest.mark.parametrize(
    ("stage", "gpus", "message"), [(4, 8, "ZeRO stage"), (1, 0, "at least 1"), (1, 2.5, "whole number")]
)
def test_bad_zero_settings(stage, gpus, message):
    with pytest.raises(ValueError, match=message):
        zero_sharded(MemoryTerms(parameters_bytes=1), zero_stage=stage, gpus=gpus)


def test_batches_micro_effective_and_accumulation():
    assert effective_batch(micro_batch=4, accumulation_steps=8, gpus=16) == 512
    assert accumulation_steps(global_batch=512, micro_batch=4, gpus=16) == 8
    with pytest.raises(ValueError, match="cannot be split evenly into micro-batches of 3 on 4 GPUs"):
        accumulation_steps(global_batch=100, micro_batch=3, gpus=4)
    with pytest.raises(ValueError, match="A global batch of 4,098 cannot"):  # with its separator
        accumulation_steps(global_batch=4098, micro_batch=4, gpus=1)
    with pytest.raises(ValueError, match="micro-batch must be a whole number"):
        effective_batch(micro_batch=0, accumulation_steps=1, gpus=1)


def test_verdict_fits_with_headroom_and_names_the_lever():
    terms = MemoryTerms(
        parameters_bytes=2 * GB,
        gradients_bytes=2 * GB,
        optimizer_state_bytes=4 * GB,
        activations_bytes=1 * GB,
        workspace_bytes=1 * GB,
    )
    verdict = budget_verdict(terms, device_gb=16)
    assert (verdict.fits, verdict.total_gb, verdict.headroom_gb, verdict.over_gb) == (True, 10, 6, 0)
    assert (verdict.largest_term, verdict.largest_gb, verdict.largest_share_percent) == (
        "optimizer_state",
        4,
        40,
    )
    assert verdict.lever == lessons.sentence("levers", "optimizer_state")
    over = budget_verdict(replace(terms, activations_bytes=20 * GB), device_gb=16)
    assert (over.fits, over.headroom_gb, over.over_gb, over.largest_term) == (False, 0, 13, "activations")
    assert over.lever == lessons.sentence("levers", "activations")


def test_every_memory_term_has_a_lever_and_no_lever_names_an_unknown_term():
    assert set(lessons.sentences("levers")) == set(TERM_LABELS)


def test_verdict_on_a_tie_names_the_first_term_and_a_full_device_still_fits():
    verdict = budget_verdict(MemoryTerms(parameters_bytes=4 * GB, gradients_bytes=4 * GB), device_gb=8)
    assert (verdict.largest_term, verdict.fits, verdict.headroom_gb) == ("parameters", True, 0)


@pytest.mark.parametrize("device_gb", [0, -1, float("nan"), float("inf")])
def test_verdict_needs_a_real_device(device_gb):
    with pytest.raises(ValueError, match="Device memory must be a positive number"):
        budget_verdict(MemoryTerms(parameters_bytes=1), device_gb=device_gb)


@pytest.mark.parametrize("term", TERMS)
def test_every_term_is_checked(term):
    # The checks and the total walk TERMS, so every field must be one of them.
    assert [f"{t}_bytes" for t in TERMS] == [f.name for f in fields(MemoryTerms)]
    with pytest.raises(ValueError, match=f"The {term.replace('_', ' ')} term must be"):
        MemoryTerms(**{f"{term}_bytes": -1.0})


def test_the_total_counts_every_term_once():
    terms = MemoryTerms(**{f"{t}_bytes": float(i + 1) for i, t in enumerate(TERMS)})
    assert terms.total_bytes == sum(range(1, len(TERMS) + 1)) == 36.0
    assert terms.total_gb == 36e-9


def test_terms_refuse_negative_or_unknown_values():
    with pytest.raises(ValueError, match="activations term must be a finite, non-negative"):
        MemoryTerms(activations_bytes=-1)
    with pytest.raises(ValueError, match="optimizer state term"):
        MemoryTerms(optimizer_state_bytes=float("nan"))
    with pytest.raises(ValueError, match="Unknown memory term 'weights'"):
        MemoryTerms().term_bytes("weights")
    with pytest.raises(ValueError, match="at least one term above zero"):
        budget_verdict(MemoryTerms(), device_gb=8)
    with pytest.raises(ValueError, match="Unknown optimizer 'lion'"):
        optimizer_state_values("lion")
    with pytest.raises(ValueError, match="parameter count must be positive"):
        model_state_terms(parameters=0, precision=Precision(4, 4, 0, 4), optimizer="sgd")


@given(terms=any_terms)
def test_shares_cover_the_nonzero_terms_and_add_up(terms):
    shares = terms.shares()
    assert [s.term for s in shares] == [t for t in TERMS if terms.term_bytes(t) > 0]
    assert all(s.gb >= 0 and s.share_percent >= 0 for s in shares)
    if shares:
        assert sum(s.share_percent for s in shares) == pytest.approx(100)


def test_sweep_finds_the_crossing():
    # 10 GB fixed + 1 GB of activations per value: 11, 12, ..., 16 GB against a 13.5 GB device.
    fixed = MemoryTerms(parameters_bytes=10 * GB, activations_bytes=1 * GB)
    sweep = sweep_totals(
        fixed, axis="batch", values=[1, 2, 3, 4, 5, 6], activations_bytes=np.arange(1, 7) * GB, device_gb=13.5
    )
    assert sweep.total_gb == (11, 12, 13, 14, 15, 16)
    assert sweep.fits == (True, True, True, False, False, False)
    assert (sweep.largest_fitting, sweep.first_failing) == (3, 4)
    all_fit = sweep_totals(
        fixed, axis="batch", values=[1, 2], activations_bytes=np.array([1, 2]) * GB, device_gb=100
    )
    assert (all_fit.largest_fitting, all_fit.first_failing) == (2, None)
    none_fit = sweep_totals(
        fixed, axis="seq_len", values=[512], activations_bytes=np.array([5 * GB]), device_gb=1
    )
    assert (none_fit.largest_fitting, none_fit.first_failing) == (None, 512)
    with pytest.raises(ValueError, match="Unknown sweep axis 'layers'"):
        sweep_totals(fixed, axis="layers", values=[1], activations_bytes=np.array([1.0]), device_gb=1)
    with pytest.raises(ValueError, match="one activation size per value"):
        sweep_totals(fixed, axis="batch", values=[1, 2], activations_bytes=np.array([1.0]), device_gb=1)
