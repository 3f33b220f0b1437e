"""Model state per GPU of full training and LoRA, alone and sharded, worked by hand on a small Llama."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.datafiles import read_json
from core.memory.model_state import run_model_state
from core.memory.qlora import nf4_bytes
from core.memory.setup import StepSetup, TrainingMethod
from core.model_config import parse_config

LLAMA = {
    "model_type": "llama",
    "hidden_size": 48,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 80,
    "vocab_size": 101,
}
# A block: q and o 48·48, k and v 48·24, three MLP matrices 48·80, two RMSNorms; then the embedding,
# the output layer and the final norm.
BLOCK = 2 * 48 * 48 + 2 * 48 * 24 + 3 * 48 * 80 + 2 * 48
PARAMETERS = 3 * BLOCK + 2 * 101 * 48 + 48
# LoRA rank 8 on attention: q and o 8·(48 + 48), k and v 8·(48 + 24), in each of 3 blocks.
ADAPTERS_PER_BLOCK = 2 * 8 * 96 + 2 * 8 * 72
ADAPTERS = 3 * ADAPTERS_PER_BLOCK


def setup(precision: str = "bf16", training: TrainingMethod | None = None) -> StepSetup:
    return StepSetup(
        model=parse_config(LLAMA),
        batch=1,
        seq_len=16,
        precision=precision,
        training=training or TrainingMethod(),
    )


def llama_1b(precision: str) -> StepSetup:
    """Llama 3.2 1B, for orderings that hold at real widths (a 48-wide model's rank-8 adapters are a
    fifth of its weights, and in FP32 with AdamW they can outweigh full BF16 training)."""
    return StepSetup(
        model=parse_config(read_json("configs/llama-3.2-1b.json")), batch=1, seq_len=16, precision=precision
    )


def test_full_training_in_the_zero_papers_convention():
    state = run_model_state(setup("mixed16"), TrainingMethod())
    assert state.trainable_parameters == PARAMETERS
    assert state.base_weight_bytes == 0
    assert state.per_gpu.as_terms() == {
        "weights": 2 * PARAMETERS,
        "gradients": 2 * PARAMETERS,
        "master_weights": 4 * PARAMETERS,
        "optimizer_state": 8 * PARAMETERS,
    }


def test_lora_freezes_the_base_and_trains_fp32_adapters():
    state = run_model_state(setup("bf16"), TrainingMethod(method="lora", lora_rank=8))
    assert state.trainable_parameters == ADAPTERS
    assert state.base_weight_bytes == 2 * PARAMETERS
    assert state.per_gpu.as_terms() == {
        "weights": 2 * PARAMETERS + 4 * ADAPTERS,
        "gradients": 4 * ADAPTERS,
        "master_weights": 0,
        "optimizer_state": 8 * ADAPTERS,  # AdamW's two FP32 moments
    }


def test_ddp_adds_buckets_and_fsdp_gathers_two_blocks():
    ddp = run_model_state(setup("bf16"), TrainingMethod(method="lora", lora_rank=8, gpus=4, sharding="ddp"))
    assert ddp.gradient_buckets_bytes == 4 * ADAPTERS
    assert ddp.gathered_block_bytes == 0
    fsdp = run_model_state(setup("bf16"), TrainingMethod(method="lora", lora_rank=8, gpus=4, sharding="fsdp"))
    assert fsdp.gathered_block_bytes == 2 * (2 * BLOCK + 4 * ADAPTERS_PER_BLOCK)
    assert fsdp.per_gpu.weights == (2 * PARAMETERS + 4 * ADAPTERS) / 4
    assert fsdp.gradient_buckets_bytes == 0


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ({"method": "dora"}, "The method must be one of full, lora, qlora"),
        ({"method": "lora", "lora_rank": 0}, "LoRA rank must be a whole number"),
        ({"method": "lora", "lora_targets": "mlp"}, "LoRA targets must be one of"),
        ({"gpus": 8}, "8 GPUs need a sharding scheme"),
        ({"gpus": 8, "tensor_parallel": 8}, None),
        (
            {"gpus": 8, "tensor_parallel": 3, "sharding": "fsdp"},
            "8 GPUs do not split into tensor-parallel groups of 3",
        ),
        ({"gpus": 8, "tensor_parallel": 2}, "4 GPUs need a sharding scheme"),
        ({"gpus": 0}, "number of GPUs must be a whole number"),
        ({"method": "lora", "freeze_blocks": 2}, "Freezing blocks is a choice for full training"),
        ({"freeze_blocks": -1}, "frozen blocks must be a whole number"),
    ],
)
def test_refuses_what_it_cannot_count(method, message):
    if message is None:  # one tensor-parallel group of all 8 GPUs: one replica, nothing to shard
        assert TrainingMethod(**method).data_parallel == 1
        return
    with pytest.raises(ValueError, match=message):
        TrainingMethod(**method)


def test_a_step_refuses_more_frozen_blocks_than_the_model_has_and_heads_that_do_not_split():
    model = setup("bf16").model
    with pytest.raises(ValueError, match=f"has {model.layers} blocks; {model.layers + 1} cannot be frozen"):
        setup("bf16", training=TrainingMethod(freeze_blocks=model.layers + 1))
    with pytest.raises(ValueError, match="do not split over 3 tensor-parallel GPUs"):
        setup("bf16", training=TrainingMethod(gpus=3, tensor_parallel=3))


@given(
    precision=st.sampled_from(["fp32", "amp", "bf16", "mixed16", "mixed18", "mixed20"]),
    rank=st.integers(1, 64),
    targets=st.sampled_from(["attention", "all-linear"]),
)
def test_lora_holds_less_model_state_than_full_training(precision, rank, targets):
    run = llama_1b(precision)
    full = run_model_state(run, TrainingMethod()).per_gpu.total_bytes
    lora = run_model_state(run, TrainingMethod(method="lora", lora_rank=rank, lora_targets=targets))
    assert lora.per_gpu.total_bytes < full


def test_qlora_stores_linear_layers_in_nf4_and_the_rest_in_bf16():
    # Per block: q and o 48·48 values, k and v 48·24, three MLP matrices 48·80; 2 RMSNorms in BF16.
    linear = 2 * nf4_bytes(48 * 48) + 2 * nf4_bytes(48 * 24) + 3 * nf4_bytes(48 * 80)
    rest = 2 * (3 * 2 * 48 + 2 * 101 * 48 + 48)  # norms, embedding, output layer, final norm
    state = run_model_state(setup("bf16"), TrainingMethod(method="qlora", lora_rank=8))
    assert state.base_weight_bytes == 3 * linear + rest
    assert state.trainable_parameters == ADAPTERS
    assert state.per_gpu.weights == 3 * linear + rest + 4 * ADAPTERS


@given(
    precision=st.sampled_from(["amp", "bf16", "mixed16"]),
    rank=st.integers(1, 64),
    targets=st.sampled_from(["attention", "all-linear"]),
    sharding=st.sampled_from(["ddp", "zero1", "zero2", "zero3", "fsdp"]),
)
def test_qlora_holds_less_than_lora_which_holds_less_than_full(precision, rank, targets, sharding):
    def total(method: str) -> float:
        run = TrainingMethod(method=method, lora_rank=rank, lora_targets=targets, gpus=4, sharding=sharding)
        return run_model_state(llama_1b(precision), run).per_gpu.total_bytes

    assert total("qlora") < total("lora") < total("full")
