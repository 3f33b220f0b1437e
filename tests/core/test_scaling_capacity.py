"""Part B and D memory: the memory core's terms under TP x PP x ZeRO, worked by hand."""

import itertools
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory import ZERO_STAGES, budget_verdict
from core.memory.setup import TrainingSetup
from core.models import preset
from core.scaling.capacity import (
    PLAN_FORMATS,
    capacity_contrast,
    parallel_terms,
    plan_rows,
    replica_state_gb,
    stage_activation_bytes,
)
from core.scaling.pipeline import pipeline_contrast
from core.scaling.scenarios import load_scaling

DATA = load_scaling()
LAB = DATA.fleets["lab_64"]
LLAMA_70B_PARAMETERS = 70_553_706_496
PER_TP_RANK = LLAMA_70B_PARAMETERS / 8  # 8,819,213,312 parameters on each GPU of a node


def _gb(n_bytes):
    return n_bytes / 1e9


def test_zero_terms_for_70b_on_64_gpus_worked_by_hand():
    # TP over the 8 GPUs of a node, DP over the 8 nodes. Mixed precision with Adam:
    # 2-byte weights and gradients, a 4-byte master copy and two 4-byte moments per parameter.
    contrast = capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=1, recompute="full", gpus=64)
    assert (contrast.tp, contrast.dp) == (8, 8)
    replicated, zero1 = contrast.baseline.terms, contrast.result.terms
    assert _gb(replicated.parameters_bytes) == pytest.approx(2 * PER_TP_RANK / 1e9)  # 17.64 GB
    assert _gb(replicated.master_weights_bytes) == pytest.approx(4 * PER_TP_RANK / 1e9)  # 35.28 GB
    assert _gb(replicated.optimizer_state_bytes) == pytest.approx(8 * PER_TP_RANK / 1e9)  # 70.55 GB
    # ZeRO-1 splits the master copy and the moments over the 8 DP replicas: 4.41 GB and 8.82 GB.
    assert _gb(zero1.master_weights_bytes) == pytest.approx(4 * PER_TP_RANK / 8 / 1e9)
    assert _gb(zero1.optimizer_state_bytes) == pytest.approx(8 * PER_TP_RANK / 8 / 1e9)
    assert (
        zero1.parameters_bytes == replicated.parameters_bytes
        and zero1.gradients_bytes == replicated.gradients_bytes
    )
    # Gradient bucket: 5% of the 17.64 GB of gradients = 0.88 GB.
    assert _gb(zero1.communication_buffers_bytes) == pytest.approx(0.05 * 2 * PER_TP_RANK / 1e9)
    assert not contrast.baseline.verdict.fits and contrast.result.verdict.fits
    assert contrast.outcome == "optimizer"


def test_zero_stages_two_and_three_shard_gradients_then_weights():
    zero2 = capacity_contrast(
        fleet=LAB, cases=DATA.cases, zero_stage=2, recompute="full", gpus=64
    ).result.terms
    zero3 = capacity_contrast(
        fleet=LAB, cases=DATA.cases, zero_stage=3, recompute="full", gpus=64
    ).result.terms
    assert _gb(zero2.gradients_bytes) == pytest.approx(2 * PER_TP_RANK / 8 / 1e9)  # 2.20 GB
    assert _gb(zero2.parameters_bytes) == pytest.approx(2 * PER_TP_RANK / 1e9)
    assert _gb(zero3.parameters_bytes) == pytest.approx(2 * PER_TP_RANK / 8 / 1e9)


def test_full_recomputation_keeps_each_block_input_split_by_tensor_parallel():
    setup = TrainingSetup(
        model=preset("Llama-3-70B"),
        precision="mixed16",
        optimizer="adam",
        micro_batch=1,
        seq_len=1024,
        recompute="full",
    )
    # 80 blocks x 1,024 tokens x 8,192 x 2 bytes, plus the output side once: 1,024 tokens x
    # (2 x 8,192 x 2 bytes of norm and output-layer inputs + 128,256 FP32 logits x 4 bytes); all / 8.
    expected = (80 * 1024 * 8192 * 2 + 1024 * (2 * 8192 * 2 + 128_256 * 4)) / 8
    assert stage_activation_bytes(setup, tp=8, pp=1) == pytest.approx(expected)


def test_pipeline_stage_activations_worked_by_hand():
    setup = TrainingSetup(
        model=preset("Llama-3-8B"),
        precision="mixed16",
        optimizer="adam",
        micro_batch=4,
        seq_len=2048,
        recompute="none",
    )
    # Per token per block, 2 bytes each: 3h + K and V copied out to all 32 heads (standard attention, 2h)
    # + h + 4 gated-MLP intermediates + 2h = 12,288 + 8,192 + 4,096 + 57,344 + 8,192 = 90,112 values,
    # plus 32 heads x 2,048 scores.
    per_token = 90_112 * 2 + 32 * 2048 * 2
    # 8,192 tokens per micro-batch, 32 / 8 = 4 blocks per stage; logits sit on the last stage.
    assert stage_activation_bytes(setup, tp=1, pp=8) == pytest.approx(4 * 8192 * per_token)  # 10.20 GB


def test_more_micro_batches_shrink_the_bubble_but_overflow_hbm():
    four = pipeline_contrast(fleet=LAB, cases=DATA.cases, micro_batches=4)
    eight = pipeline_contrast(fleet=LAB, cases=DATA.cases, micro_batches=8)
    assert eight.result.bubble_fraction < four.result.bubble_fraction < four.baseline.bubble_fraction
    assert eight.result.terms.activations_bytes == pytest.approx(
        4 * eight.baseline.terms.activations_bytes
    )  # 8 vs 2 retained
    assert four.result.verdict.fits and four.outcome == "faster-fits"
    assert not eight.result.verdict.fits and eight.outcome == "faster-oom"


def test_only_the_cloud_model_is_too_big_to_replicate():
    for track in DATA.tracks.values():
        too_big = (
            replica_state_gb(parameters=track.model.parameters, cases=DATA.cases) > track.fleet.card.memory_gb
        )
        assert too_big == track.model_parallel


def test_plan_rows_say_fits_or_out_of_memory():
    contrast = capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=3, recompute="selective", gpus=64)
    rows: list[dict[str, Any]] = plan_rows((contrast.baseline, contrast.result))
    assert [row["Outcome"] for row in rows] == ["out of memory", "fits"]
    assert rows[0]["Total (GB)"] > rows[0]["HBM (GB)"] == pytest.approx(80 * 2**30 / 1e9)


def test_bad_splits_are_refused():
    setup = TrainingSetup(
        model=preset("Llama-3-8B"), precision="mixed16", optimizer="adam", micro_batch=1, seq_len=128
    )
    with pytest.raises(ValueError, match="evenly"):
        stage_activation_bytes(setup, tp=1, pp=3)
    with pytest.raises(ValueError, match="ZeRO stage 1, 2 or 3"):
        capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=0, recompute="full", gpus=64)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["GPT-2 small", "Llama-3-8B", "Llama-3-70B"]),
    st.sampled_from(["none", "selective", "full"]),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([1, 2, 4]),
    st.integers(1, 64),
    st.integers(1, 4),
)
def test_a_higher_zero_stage_never_needs_more_memory(model, recompute, tp, pp, dp, micro_batch):
    setup = TrainingSetup(
        model=preset(model),
        precision="mixed16",
        optimizer="adam",
        micro_batch=micro_batch,
        seq_len=512,
        recompute=recompute,
    )
    totals = [
        parallel_terms(setup, tp=tp, pp=pp, dp=dp, zero_stage=stage).total_bytes for stage in ZERO_STAGES
    ]
    assert all(later <= earlier + 1e-6 for earlier, later in itertools.pairwise(totals))


def test_no_plan_fits_is_ruled_out_while_the_plan_fits_and_carrying_forward_while_it_does_not():
    fleet, cases = load_scaling().tracks["cloud"].fleet, load_scaling().cases
    fitting = capacity_contrast(fleet=fleet, cases=cases, zero_stage=1, recompute="full", gpus=256)
    assert fitting.outcome != "oom" and fitting.refused_decisions == ("none",)
    assert fitting.result.verdict.total_gb == pytest.approx(41.7, abs=0.05)  # of 86 GB: it fits
    squeezed = replace(fitting.result, verdict=budget_verdict(fitting.result.terms, device_gb=40))
    overflowing = replace(fitting, result=squeezed, lightest_fit=None)
    assert overflowing.outcome == "oom" and overflowing.refused_decisions == ("shard",)


def test_zero_saves_less_on_fewer_nodes_so_two_nodes_run_out_where_four_fit():
    # 8.82 G parameters per TP rank: 17.64 GB weights, 17.64 gradients, 35.28 master copy, 70.55 moments.
    # ZeRO-1 shards the last two over the nodes. Two nodes (16 GPUs, TinyML's part A pool):
    # 17.64 + 17.64 + 105.83 / 2 + 0.24 activations + 0.88 bucket + 2 = 91.3 GB > 85.9 GB: out of memory.
    # Four nodes (32 GPUs, Cloud's): 105.83 / 4 = 26.46 -> 64.9 GB: fits, and the moments fell the most.
    two = capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=1, recompute="full", gpus=16)
    four = capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=1, recompute="full", gpus=32)
    replicated_gb, sharded_gb = _gb(PER_TP_RANK * (2 + 2)), _gb(PER_TP_RANK * (4 + 8))
    assert two.result.verdict.total_gb == pytest.approx(
        replicated_gb + sharded_gb / 2 + 0.24 + 0.88 + 2, abs=0.01
    )
    assert four.result.verdict.total_gb == pytest.approx(
        replicated_gb + sharded_gb / 4 + 0.24 + 0.88 + 2, abs=0.01
    )
    assert (two.dp, two.outcome) == (2, "oom")
    # ZeRO-1 does not fit two nodes, but "no plan fits" is refused too: ZeRO-3 shards weights and gradients
    # as well, (17.64 + 17.64 + 105.83) / 2 = 70.56 GB, + 0.24 activations + 0.44 bucket (5% of 8.82 GB of
    # gradients) + 2 = 73.2 GB of 85.9 GB.
    assert two.refused_decisions == ("shard", "none")
    assert two.lightest_fit is not None and two.lightest_fit.label == "ZeRO-3 with full recomputation"
    assert two.lightest_fit.verdict.total_gb == pytest.approx(
        (replicated_gb + sharded_gb) / 2 + 0.24 + 0.44 + 2, abs=0.01
    )
    assert (four.dp, four.outcome) == (4, "optimizer")
    with pytest.raises(ValueError, match="whole nodes"):
        capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=1, recompute="full", gpus=12)


def test_every_number_in_the_plan_table_has_a_format():
    contrast = capacity_contrast(fleet=LAB, cases=DATA.cases, zero_stage=1, recompute="full", gpus=64)
    for row in plan_rows((contrast.baseline, contrast.result)):
        numbers = {column for column, value in row.items() if isinstance(value, float | int)}
        assert numbers == set(PLAN_FORMATS)  # no column falls back to four decimals
