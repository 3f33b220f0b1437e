"""Model state per GPU under DDP, ZeRO and FSDP, against the ZeRO paper's own arithmetic.

Rajbhandari, Rasley, Ruwase and He, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
Models" (SC 2020), figure 1: a 7.5 B-parameter model, mixed-precision Adam (2 bytes of FP16 weights,
2 of gradients, K = 12 of FP32 master copy, momentum and variance), 64 GPUs: 120 GB per GPU for the
baseline, 31.4 GB with P_os, 16.6 GB with P_os+g and 1.9 GB with P_os+g+p.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.sharding import (
    SHARDINGS,
    ModelStatePerGpu,
    StateBytesPerParameter,
    block_bytes,
    gathered_block_bytes,
    gradient_bucket_bytes,
    model_state_per_gpu,
)
from core.model_config import parse_config
from core.models import parameter_count
from tests.core.test_memory_model_state import LLAMA  # the same small Llama, worked by hand there

PAPER = StateBytesPerParameter(weights=2, gradients=2, master_weights=4, optimizer_state=8)
PSI = 7_500_000_000


def state_gb(sharding: str, gpus: int = 64) -> float:
    state = model_state_per_gpu(
        trainable_parameters=PSI, per_parameter=PAPER, frozen_weight_bytes=0, gpus=gpus, sharding=sharding
    )
    return state.total_bytes / 1e9


@pytest.mark.parametrize(
    ("sharding", "paper_gb"),
    [
        ("ddp", 120.0),
        ("zero1", 31.4),
        ("zero2", 16.6),
        ("shard_grad_op", 16.6),
        ("zero3", 1.9),
        ("fsdp", 1.9),
    ],
)
def test_zero_paper_figure_1(sharding, paper_gb):
    assert round(state_gb(sharding), 1) == paper_gb


def test_zero_paper_figure_1_exactly():
    # 16 Ψ; 4 Ψ + 12 Ψ / 64; 2 Ψ + 14 Ψ / 64; 16 Ψ / 64, with Ψ = 7.5e9.
    assert state_gb("ddp") == 120.0
    assert state_gb("zero1") == 30 + 90 / 64 == 31.40625
    assert state_gb("zero2") == 15 + 105 / 64 == 16.640625
    assert state_gb("zero3") == 120 / 64 == 1.875


def test_terms_shard_as_each_stage_says():
    state = model_state_per_gpu(
        trainable_parameters=PSI, per_parameter=PAPER, frozen_weight_bytes=0, gpus=64, sharding="zero2"
    )
    assert state.as_terms() == {
        "weights": 15e9,
        "gradients": 15e9 / 64,
        "master_weights": 30e9 / 64,
        "optimizer_state": 60e9 / 64,
    }


def test_frozen_weights_shard_only_with_the_weights():
    # LoRA on an 8 B base in BF16 (16 GB frozen), 40 M adapter parameters in FP32 with Adam, 8 GPUs.
    adapters = StateBytesPerParameter(weights=4, gradients=4, master_weights=0, optimizer_state=8)

    def state(sharding: str) -> ModelStatePerGpu:
        return model_state_per_gpu(
            trainable_parameters=40_000_000,
            per_parameter=adapters,
            frozen_weight_bytes=16e9,
            gpus=8,
            sharding=sharding,
        )

    zero2, fsdp = state("zero2"), state("fsdp")
    assert zero2.weights == 16e9 + 160e6
    assert fsdp.weights == (16e9 + 160e6) / 8
    assert zero2.gradients == fsdp.gradients == 160e6 / 8
    assert zero2.optimizer_state == 320e6 / 8


def test_ddp_keeps_its_gradient_buckets_beside_the_gradients():
    assert gradient_bucket_bytes(PSI, 2, "ddp") == 15e9
    assert gradient_bucket_bytes(PSI, 2, "zero1") == 0


def test_fsdp_gathers_one_block_and_prefetches_the_next():
    # A block: q 48·48, k and v 48·24 each, o 48·48, three MLP matrices 48·80, two RMSNorms of 48.
    block = 2 * 48 * 48 + 2 * 48 * 24 + 3 * 48 * 80 + 2 * 48
    spec = parse_config(LLAMA)
    assert block_bytes(spec, lambda t: t.numel) == {0: block, 1: block, 2: block}
    assert parameter_count(spec) == 3 * block + 2 * 101 * 48 + 48  # embedding, output layer, final norm
    assert gathered_block_bytes({0: 2.0 * block, 1: 2.0 * block}, "fsdp") == 2 * block * 2
    assert gathered_block_bytes({0: 2.0 * block}, "zero2") == 0


def test_the_largest_block_of_an_moe_model_is_one_with_experts():
    spec = parse_config(
        {
            **LLAMA,
            "model_type": "qwen3_moe",
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "head_dim": 16,
            "moe_intermediate_size": 24,
            "mlp_only_layers": [0],
        }
    )
    dense, routed = 3 * 48 * 80, 4 * 3 * 48 * 24 + 4 * 48  # routed: experts' three matrices and the router
    attention = 2 * 48 * 64 + 2 * 48 * 32 + 2 * 16 + 2 * 48  # q, o; k, v; QK-norm; two norms
    assert block_bytes(spec, lambda t: t.numel) == {
        0: attention + dense,
        1: attention + routed,
        2: attention + routed,
    }


@pytest.mark.parametrize(
    ("sharding", "gpus", "message"),
    [
        ("zero4", 8, "Sharding must be one of"),
        ("none", 8, "8 GPUs need a sharding scheme"),
        ("ddp", 0, "number of GPUs must be a whole number"),
    ],
)
def test_refuses_what_it_cannot_count(sharding, gpus, message):
    with pytest.raises(ValueError, match=message):
        state_gb(sharding, gpus)


@given(gpus=st.integers(1, 4096), parameters=st.integers(1, 10**12))
def test_each_stage_holds_no_more_than_the_one_before(gpus, parameters):
    def total(sharding):
        return model_state_per_gpu(
            trainable_parameters=parameters,
            per_parameter=PAPER,
            frozen_weight_bytes=0,
            gpus=gpus,
            sharding=sharding,
        ).total_bytes

    stages = [total(s) for s in ("ddp", "zero1", "zero2", "zero3")]
    assert stages == sorted(stages, reverse=True)
    assert total("zero3") * gpus == pytest.approx(total("ddp"))
    assert set(SHARDINGS) >= {"ddp", "zero1", "zero2", "zero3", "fsdp"}
