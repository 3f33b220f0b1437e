"""The detailed estimate: Korthikanti's activation figures, mixed precision, ZeRO per GPU, invariants."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory import TERMS
from core.memory.detailed import (
    activation_bytes,
    detailed_sweep,
    kept_kv_width,
    layer_activation_bytes,
    output_activation_bytes,
    per_gpu_terms,
    replicated_terms,
)
from core.memory.settings import (
    ALL_DETAILED_PRECISIONS,
    DETAILED_PRECISIONS,
    AttentionKind,
    Recomputation,
    precision_label,
)
from core.memory.setup import TrainingSetup
from core.models import ModelSpec, model_names, preset, resolve_model

# GPT-3 175B as Korthikanti et al. 2022 tabulate it: h 12288, a 96, 96 layers, a 4h MLP with dropout.
GPT3 = ModelSpec(
    name="GPT-3 175B",
    hidden=12288,
    layers=96,
    heads=96,
    kv_heads=96,
    intermediate=4 * 12288,
    vocab=51200,
    positions=2048,
    tied_embeddings=True,
    gated_mlp=False,
    norm="layernorm",
    biases=True,
    dropout=True,
    published_params=None,
    source="Korthikanti et al. 2022, Table 3",
)


def gpt3(**change) -> TrainingSetup:
    return TrainingSetup(
        **{
            "model": GPT3,
            "precision": "mixed16",
            "optimizer": "adam",
            "micro_batch": 1,
            "seq_len": 2048,
            **change,
        }
    )


def per_layer(setup: TrainingSetup) -> float:
    return float(layer_activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len))


def test_korthikanti_gpt3_per_layer_figures():
    s, b, h, a = 2048, 1, 12288, 96
    # No recomputation: s·b·h·(34 + 5·a·s/h) = 25,165,824 × (34 + 80) bytes; already bytes, no dtype factor.
    assert per_layer(gpt3()) == s * b * h * (34 + 5 * a * s / h) == 2_868_903_936
    # Selective recomputation keeps 34·s·b·h; memory-efficient attention drops the same 5·a·s²·b term.
    assert per_layer(gpt3(recompute="selective")) == 34 * s * b * h == 855_638_016
    assert per_layer(gpt3(attention="memory_efficient")) == 34 * s * b * h
    # Full recomputation keeps only each block's 2-byte input: 2·s·b·h.
    assert per_layer(gpt3(recompute="full")) == 2 * s * b * h == 50_331_648


def test_llama_2_7b_block_by_hand():
    setup = TrainingSetup(
        model=preset("Llama-2-7B"), precision="mixed16", optimizer="adam", micro_batch=1, seq_len=4096
    )
    # Per token, 2-byte values: norm output, Q, K, V, context (5·4096), MLP input 4096 and four 11,008-wide
    # SwiGLU intermediates, two norm inputs: 8·4096 + 4·11,008 = 76,800 values = 153,600 bytes; no dropout
    # masks.
    # Scores: 32 heads × 4096 keys × 2 bytes of softmax output = 262,144 bytes per token.
    assert per_layer(setup) == 4096 * (153_600 + 262_144) == 1_702_887_424


def test_standard_attention_keeps_grouped_kv_heads_copied_out_to_every_head():
    base = TrainingSetup(
        model=preset("Llama-3-8B"), precision="mixed16", optimizer="adam", micro_batch=1, seq_len=2048
    )
    # h 4096, 32 heads, 8 KV heads (K and V 1,024 wide), SwiGLU 14,336. Per token, 2-byte values:
    # standard attention multiplies each head by its own K and V, so it keeps them 4,096 wide:
    # 3h + 2h + h + 4·14,336 + 2h = 90,112 values; scores 32 heads · 2,048 keys · 2 bytes.
    assert kept_kv_width(base) == 4096
    assert per_layer(base) == 2048 * (90_112 * 2 + 32 * 2048 * 2)
    # A fused kernel reads the 8 KV heads as they are, and selective recomputation keeps only the
    # projections: 3h + 2·1,024 + h + 4·14,336 + 2h = 83,968 values, no scores.
    for fused in (replace(base, attention="memory_efficient"), replace(base, recompute="selective")):
        assert kept_kv_width(fused) == 1024
        assert per_layer(fused) == 2048 * 83_968 * 2


def test_pure_bf16_keeps_every_copy_in_two_bytes():
    setup = TrainingSetup(
        model=preset("GPT-2 small"), precision="bf16", optimizer="adam", micro_batch=1, seq_len=1024
    )
    p = 124_439_808
    terms = replicated_terms(setup)
    # 2-byte weights and gradients, no master copy, Adam's two moments in 2 bytes each: 8 bytes per weight.
    assert (
        terms.parameters_bytes,
        terms.gradients_bytes,
        terms.master_weights_bytes,
        terms.optimizer_state_bytes,
    ) == (2 * p, 2 * p, 0, 4 * p)
    assert "(8 bytes per parameter with Adam)" in precision_label("bf16")
    # The loss reads 2-byte logits: 1,024 tokens · (2·768·2 + 50,257·2 + a 768-byte dropout mask).
    assert output_activation_bytes(setup, micro_batch=1, seq_len=1024) == 1024 * (3072 + 100_514 + 768)
    assert (
        "bf16" in ALL_DETAILED_PRECISIONS and "bf16" not in DETAILED_PRECISIONS
    )  # known to the estimate, not offered on the page yet


def test_the_output_side_by_hand():
    setup = TrainingSetup(
        model=preset("GPT-2 small"), precision="fp32", optimizer="adam", micro_batch=1, seq_len=1024
    )
    # Per token: final-norm and output-layer inputs 2·768·4 bytes, FP32 logits 50,257·4, embedding dropout
    # mask 768.
    assert (
        output_activation_bytes(setup, micro_batch=1, seq_len=1024)
        == 1024 * (6144 + 201_028 + 768)
        == 212_930_560
    )


def test_llama_2_70b_with_zero_3_on_64_gpus():
    setup = TrainingSetup(
        model=preset("Llama-2-70B"),
        precision="mixed16",
        optimizer="adam",
        micro_batch=1,
        seq_len=4096,
        recompute="full",
    )
    terms = per_gpu_terms(setup, zero_stage=3, gpus=64)
    p = 68_976_648_192
    # 2 + 2 + 4 + 8 bytes per parameter, every part split 64 ways.
    assert terms.parameters_bytes == terms.gradients_bytes == 2 * p / 64 == 2_155_520_256
    assert terms.master_weights_bytes == 4 * p / 64
    assert terms.optimizer_state_bytes == 8 * p / 64 == 8_622_081_024
    # Full recomputation: 80 block inputs of 4096·8192·2 bytes, plus the output side, on every GPU.
    blocks = 80 * 4096 * 8192 * 2
    assert terms.activations_bytes == blocks + 4096 * (2 * 8192 * 2 + 32000 * 4)
    replicated = replicated_terms(setup)
    assert replicated.total_gb > 80 * 13  # 16 bytes × 69B parameters alone: no single GPU holds it


@pytest.mark.parametrize(
    ("name", "label_bytes"), [("fp32", "16"), ("mixed16", "16"), ("mixed18", "18"), ("mixed20", "20")]
)
def test_precision_labels_state_their_bytes(name, label_bytes):
    assert f"({label_bytes} bytes per parameter with Adam)" in precision_label(name)


def test_runtime_overhead_and_workspace_are_their_own_terms():
    terms = replicated_terms(gpt3(runtime_overhead_gb=1.5))
    assert (terms.runtime_overhead_bytes, terms.workspace_bytes) == (1.5e9, 1e9)


setups = st.builds(
    TrainingSetup,
    model=st.one_of(
        st.sampled_from(model_names()[:-1]).map(preset),
        st.builds(
            lambda h, n: resolve_model("custom", hidden=h, layers=n),
            st.sampled_from([1024, 4096]),
            st.integers(1, 8),
        ),
    ),
    precision=st.sampled_from(list(DETAILED_PRECISIONS)),
    optimizer=st.sampled_from(["sgd", "sgd_momentum", "adam"]),
    micro_batch=st.integers(1, 32),
    seq_len=st.integers(1, 8192),
    recompute=st.sampled_from(Recomputation.ids()),
    attention=st.sampled_from(AttentionKind.ids()),
    runtime_overhead_gb=st.floats(0, 4),
)


@settings(max_examples=60)
@given(setup=setups, stage=st.integers(0, 3), gpus=st.integers(1, 1024))
def test_every_term_is_non_negative_and_zero_never_adds(setup, stage, gpus):
    replicated = replicated_terms(setup)
    sharded = per_gpu_terms(setup, zero_stage=stage, gpus=gpus)
    assert all(sharded.term_bytes(t) >= 0 for t in TERMS)
    assert sharded.total_bytes <= replicated.total_bytes


@settings(max_examples=60)
@given(setup=setups, factor=st.integers(2, 8))
def test_activations_scale_linearly_in_the_micro_batch(setup, factor):
    base = activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len)
    assert (
        activation_bytes(setup, micro_batch=factor * setup.micro_batch, seq_len=setup.seq_len)
        == factor * base
    )


@settings(max_examples=60)
@given(setup=setups)
def test_doubling_the_sequence_at_least_doubles_activations(setup):
    base = activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len)
    doubled = activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=2 * setup.seq_len)
    assert doubled >= 2 * base
    if setup.attention == "memory_efficient" or setup.recompute != "none":
        assert doubled == 2 * base  # no score matrix: exactly linear
    else:
        assert doubled > 2 * base  # the a·s² scores grow four times


@settings(max_examples=60)
@given(setup=setups, micro_batch=st.integers(1, 32), seq_len=st.integers(1, 8192))
def test_only_activations_change_with_micro_batch_or_sequence(setup, micro_batch, seq_len):
    before, after = (
        replicated_terms(setup),
        replicated_terms(replace(setup, micro_batch=micro_batch, seq_len=seq_len)),
    )
    assert all(before.term_bytes(t) == after.term_bytes(t) for t in TERMS if t != "activations")


def test_recomputation_only_ever_lowers_activations():
    kept = [per_layer(gpt3(recompute=r)) for r in Recomputation.ids()]
    assert kept == sorted(kept, reverse=True)


def test_the_sweep_is_the_budget_at_each_value():
    setup = TrainingSetup(
        model=preset("Llama-3-8B"), precision="mixed16", optimizer="adam", micro_batch=2, seq_len=1024
    )
    sweep = detailed_sweep(
        setup, axis="seq_len", values=[1024, 2048, 4096], device_gb=80, zero_stage=2, gpus=8
    )
    for value, total_gb in zip(sweep.values, sweep.total_gb, strict=True):
        assert total_gb == pytest.approx(
            per_gpu_terms(replace(setup, seq_len=value), zero_stage=2, gpus=8).total_gb
        )
    by_batch = detailed_sweep(setup, axis="batch", values=[1, 2, 3], device_gb=80)
    assert by_batch.total_gb[1] == pytest.approx(replicated_terms(setup).total_gb)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"precision": "fp8"}, "Unknown precision 'fp8'"),
        ({"optimizer": "lion"}, "Unknown optimizer"),
        ({"micro_batch": 0}, "micro-batch must be a whole number"),
        ({"seq_len": -5}, "sequence length"),
        ({"recompute": "some"}, "Unknown recomputation 'some'"),
        ({"attention": "linear"}, "Unknown attention kind 'linear'"),
        ({"runtime_overhead_gb": -1.0}, "runtime overhead must be 0 GB or more"),
    ],
)
def test_bad_setups_are_refused_readably(change, message):
    with pytest.raises(ValueError, match=message):
        gpt3(**change)
