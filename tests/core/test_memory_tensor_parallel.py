"""Tensor parallelism with sequence parallelism per GPU: Korthikanti et al. 2022's per-layer figures, weights
and LoRA adapters worked by hand on small models, model state composed with ZeRO, and invariants over t."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory.count import ActivationCount
from core.memory.detailed import layer_activation_bytes
from core.memory.fused_stack import fused_count
from core.memory.hf_stack import hf_count
from core.memory.model_state import ADAPTER_BYTES, RunModelState, run_model_state
from core.memory.qlora import stored_bytes
from core.memory.setup import StepSetup, TrainingMethod, TrainingSetup
from core.memory.sharding import StateBytesPerParameter, block_bytes, gathered_block_bytes
from core.memory.tensor_parallel import replicated_kv_bytes, tensor_parallel_count
from core.memory.tensor_split import (
    check_tensor_parallel,
    per_gpu_bytes_of,
    shard,
    sharded_tensors,
    split_of,
    tensor_parallel_lora_parameters,
    tensor_parallel_parameters,
    tensor_parallel_weight_bytes,
)
from core.model_config import parse_config
from core.model_spec import ModelSpec
from core.model_tensors import model_tensors
from core.models import parameter_count
from tests.core.test_memory_detailed import GPT3  # GPT-3 175B as the paper tabulates it
from tests.core.test_memory_model_state import LLAMA, PARAMETERS  # the small Llama worked by hand there

SPEC = parse_config(LLAMA)  # h 48, 4 heads of 12, 2 KV heads, MLP 80, vocab 101, 3 blocks, untied
MIXED16 = StateBytesPerParameter(weights=2, gradients=2, master_weights=4, optimizer_state=8)


def step(model: ModelSpec, t: int, **change) -> StepSetup:
    return StepSetup(
        **{
            "model": model,
            "batch": 1,
            "seq_len": 16,
            "training": TrainingMethod(gpus=t, tensor_parallel=t),
            **change,
        }
    )


# Korthikanti et al. 2022, Table 3: heads, hidden size of the four GPT models, all run with t = 8.
PAPER_MODELS = {"22B": (64, 6144), "175B": (96, 12288), "530B": (128, 20480), "1T": (160, 25600)}


@pytest.mark.parametrize(
    ("model", "per_gpu_bytes"),
    [
        # s·b·h·(34/t + 5·a·s/(h·t)), s = 2048, b = 1, t = 8:
        ("22B", 221_249_536),  # 12,582,912 · (4.25 + 655,360/49,152 = 13.33...)
        ("175B", 358_612_992),  # 25,165,824 · (4.25 + 10)
        ("530B", 513_802_240),  # 41,943,040 · (4.25 + 8)
        ("1T", 642_252_800),  # 52,428,800 · (4.25 + 8)
    ],
)
def test_the_papers_gpt_block_per_gpu_with_sequence_parallelism(model, per_gpu_bytes):
    heads, hidden = PAPER_MODELS[model]
    gpt = replace(GPT3, name=model, hidden=hidden, heads=heads, kv_heads=heads, intermediate=4 * hidden)
    setup = step(gpt, 8, seq_len=2048, attention="eager", stack="fused")
    per_gpu = tensor_parallel_count(fused_count(setup), setup)
    s, b, h, a, t = 2048, 1, hidden, heads, 8
    assert per_gpu.block_bytes == per_gpu_bytes == pytest.approx(s * b * h * (34 / t + 5 * a * s / (h * t)))
    # The same as detailed.py's Korthikanti count of the whole block, over t.
    whole = TrainingSetup(model=gpt, precision="mixed16", optimizer="adam", micro_batch=1, seq_len=2048)
    assert per_gpu.block_bytes == pytest.approx(
        layer_activation_bytes(whole, micro_batch=1, seq_len=2048) / t
    )


def test_without_the_score_matrix_the_block_keeps_34_sbh_over_t():
    # The paper's selective recomputation (section 5) keeps what a fused attention kernel keeps: 34·s·b·h/t.
    setup = step(GPT3, 8, seq_len=2048, attention="sdpa", stack="fused")
    assert tensor_parallel_count(fused_count(setup), setup).block_bytes == 34 * 2048 * 12288 / 8


def test_the_gpt_output_side_and_the_all_gather_buffer_per_gpu():
    setup = step(GPT3, 8, seq_len=2048, attention="sdpa", stack="fused")
    per_gpu = tensor_parallel_count(fused_count(setup), setup)
    tokens, h, v = 2048, 12288, 51200
    # The FP32 logits, 1/8 of the vocabulary (51,200 splits evenly); the final norm's and the output layer's
    # 2-byte inputs and the embedding's 1-byte dropout mask, 1/8 of the sequence.
    assert per_gpu.outside == {"loss": tokens * 4 * v / 8, "other": tokens * (2 * 2 * h + h) / 8}
    assert per_gpu.loss_backward_transient_bytes == tokens * 4 * v / 8 + tokens * 2 * h
    # The column-parallel layers' all-gather buffer: one whole 2-byte block input, 50,331,648 bytes.
    assert per_gpu.block_input_bytes == tokens * 2 * h / 8
    assert per_gpu.forward_block_transient_bytes == per_gpu.backward_block_transient_bytes == 50_331_648
    assert per_gpu.loss_forward_transient_bytes == 50_331_648


def test_small_llama_weights_by_hand():
    # t = 2: q 24·48, k and v 12·48, o 48·24, gate and up 40·48, down 48·40, two whole norms: 9,312 a block;
    # embedding and output layer 51 of the 101 rows each (2,448), the final norm whole (48).
    assert tensor_parallel_parameters(SPEC, 2) == 3 * 9312 + 2 * 51 * 48 + 48 == 32_880
    # Two GPUs hold 432 more than the model: the norms twice ((2 - 1) · 336) and one padded row in each of
    # the two vocabulary tables (96).
    assert 2 * 32_880 == PARAMETERS + 336 + 96
    # t = 4 > 2 KV heads: each GPU keeps one KV head (k and v 12·48, as wide as its 1 query head);
    # q 12·48, o 48·12, gate, up, down 20·48, norms 96: 5,280 a block; 26 vocabulary rows per table.
    assert [tensor.shape for tensor in sharded_tensors(SPEC, 4)][1:5] == [
        (12, 48),
        (12, 48),
        (12, 48),
        (48, 12),
    ]
    assert tensor_parallel_parameters(SPEC, 4) == 3 * 5280 + 2 * 26 * 48 + 48 == 18_384


def test_weights_per_gpu_in_any_storage():
    # BF16 is 2 bytes a value; QLoRA stores each GPU's shard of a linear layer as its own NF4 tensor.
    assert tensor_parallel_weight_bytes(SPEC, 2, lambda tensor: 2 * tensor.numel) == 2 * 32_880
    assert tensor_parallel_weight_bytes(SPEC, 2, stored_bytes) == sum(
        stored_bytes(shard(tensor, SPEC, 2)) for tensor in model_tensors(SPEC)
    )


GPT2 = parse_config(
    {"model_type": "gpt2", "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64, "vocab_size": 96}
)


def test_gpt2_conv1d_layers_split_on_their_own_axes():
    shards = {tensor.name: tensor.shape for tensor in sharded_tensors(GPT2, 4)}
    # Conv1D stores in × out: c_attn (32 → 96) keeps 24 output columns and its bias 24, c_proj (32 → 32) 8
    # input rows and its whole bias; the MLP's c_fc (32 → 128) 32 columns, its c_proj (128 → 32) 32 rows.
    assert shards["transformer.h.0.attn.c_attn.weight"] == (32, 24)
    assert shards["transformer.h.0.attn.c_attn.bias"] == (24,)
    assert shards["transformer.h.0.attn.c_proj.weight"] == (8, 32)
    assert shards["transformer.h.0.attn.c_proj.bias"] == (32,)
    assert shards["transformer.h.0.mlp.c_fc.weight"] == (32, 32)
    assert shards["transformer.h.0.mlp.c_proj.weight"] == (32, 32)
    # Token embedding vocab-parallel (24 of 96 rows), learned positions and LayerNorms whole.
    assert shards["transformer.wte.weight"] == (24, 32)
    assert shards["transformer.wpe.weight"] == (64, 32)
    assert shards["transformer.h.0.ln_1.bias"] == (32,)


def test_autocast_copies_each_gpus_own_shard_of_a_blocks_matrices():
    # GPT-2 block, t = 4: c_attn 32·96, attention c_proj 32·32, c_fc 32·128, MLP c_proj 128·32 (no node
    # keeps a bias's BF16 copy), each split four ways: 12,288 / 4 = 3,072 BF16 values.
    setup = step(GPT2, 4, precision="amp")
    assert hf_count(setup).block["weight_copies"] == 2 * 12_288
    assert tensor_parallel_count(hf_count(setup), setup).block["weight_copies"] == pytest.approx(2 * 3072)


def test_experts_split_each_experts_width_and_the_router_stays_whole():
    mixtral = parse_config(
        {
            "model_type": "mixtral",
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "intermediate_size": 24,
            "vocab_size": 50,
            "num_local_experts": 3,
            "num_experts_per_tok": 2,
        }
    )
    shards = {tensor.name: tensor.shape for tensor in sharded_tensors(mixtral, 2)}
    assert shards["model.layers.0.mlp.experts.gate_up_proj"] == (3, 24, 32)  # 12 of each expert's gate and up
    assert shards["model.layers.0.mlp.experts.down_proj"] == (3, 32, 12)
    assert shards["model.layers.0.mlp.gate.weight"] == (3, 32)


def test_phi3_fused_qkv_keeps_its_query_share_and_one_kv_head():
    phi3 = parse_config(
        {
            "model_type": "phi3",
            "hidden_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 8,
            "num_key_value_heads": 2,
            "intermediate_size": 40,
            "vocab_size": 50,
        }
    )
    shards = {tensor.name: tensor.shape for tensor in sharded_tensors(phi3, 4)}
    # Heads of 8: q 64/4 = 16 rows, then one KV head's k and v (8 each); gate and up 10 each of 40.
    assert shards["model.layers.0.self_attn.qkv_proj.weight"] == (16 + 2 * 8, 64)
    assert shards["model.layers.0.mlp.gate_up_proj.weight"] == (20, 64)
    assert shards["model.layers.0.mlp.down_proj.weight"] == (64, 10)


def test_what_does_not_split_is_refused_in_a_sentence():
    with pytest.raises(ValueError, match="4 attention heads"):
        check_tensor_parallel(SPEC, 3)
    with pytest.raises(ValueError, match="mlp.gate_proj.weight is 90 wide"):  # 90 does not split over 4
        check_tensor_parallel(replace(SPEC, intermediate=90), 4)
    with pytest.raises(ValueError, match="whole number"):
        check_tensor_parallel(SPEC, 0)
    assert check_tensor_parallel(SPEC, 4) == 4


def test_lora_adapters_split_where_their_layer_splits():
    # peft's LoraParallelLinear, rank 8 on attention. t = 2: q (column) A 8·48 + B 8·24 = 576, k and v
    # A 8·48 + B 8·12 = 480, o (row) A 8·24 + B 8·48 = 576; three blocks.
    assert tensor_parallel_lora_parameters(SPEC, 8, "attention", 2) == 3 * (576 + 2 * 480 + 576) == 6336
    # t = 4: every B of q, k, v keeps 12 rows (one KV head for k and v), o's A 12 columns: 4 · 480 a block.
    assert tensor_parallel_lora_parameters(SPEC, 8, "attention", 4) == 3 * 4 * 480


def state_of(precision: str, **training) -> RunModelState:
    method = TrainingMethod(**training)
    return run_model_state(
        StepSetup(model=SPEC, batch=1, seq_len=16, precision=precision, training=method), method
    )


def test_model_state_is_the_shards_state_sharded_over_data_parallel():
    # 8 GPUs, t = 2: 4 data-parallel replicas. ZeRO-3 divides the shard's 16 bytes a parameter by 4;
    # ZeRO-1 only the master copy and Adam's moments.
    assert (
        state_of("mixed16", gpus=8, sharding="zero3", tensor_parallel=2).per_gpu.total_bytes
        == 16 * 32_880 / 4
    )
    zero1 = state_of("mixed16", gpus=8, sharding="zero1", tensor_parallel=2)
    assert zero1.per_gpu.as_terms() == {
        "weights": 2 * 32_880,
        "gradients": 2 * 32_880,
        "master_weights": 4 * 32_880 / 4,
        "optimizer_state": 8 * 32_880 / 4,
    }
    assert zero1.trainable_parameters == PARAMETERS  # the whole model's, not one GPU's


def test_fsdp_gathers_a_tensor_parallel_shards_block():
    # BF16: FSDP's running and prefetched block, each the t = 2 shard's 9,312 parameters.
    per_gpu = block_bytes(SPEC, per_gpu_bytes_of(SPEC, 2, lambda tensor: 2 * tensor.numel))
    assert gathered_block_bytes(per_gpu, "fsdp") == 2 * 2 * 9312
    assert state_of("bf16", gpus=8, sharding="fsdp", tensor_parallel=2).gathered_block_bytes == 2 * 2 * 9312


def test_fsdp_gathers_a_shards_base_block_and_its_adapters():
    # 8 GPUs, t = 2, LoRA rank 8 on attention: a block's BF16 base shard (9,312 parameters) and its FP32
    # adapters' shard (576 + 2·480 + 576 = 2,112), for the running and the prefetched block.
    lora = state_of("bf16", method="lora", gpus=8, sharding="fsdp", tensor_parallel=2, lora_rank=8)
    assert lora.gathered_block_bytes == 2 * (2 * 9312 + ADAPTER_BYTES * 2112)
    assert lora.per_gpu.gradients == ADAPTER_BYTES * 6336 / 4  # the GPU's adapters, sharded over 4 replicas


def test_fewer_kv_heads_than_gpus_keep_a_whole_kv_head_each():
    # Flash SDPA keeps K and V at their own width: 2 KV heads of 12 over t = 4 GPUs, so each keeps one head
    # (12 values a token) for K and for V where 1/4 would be 6: 2 · 16 tokens · 2 bytes · 6 more.
    setup = step(SPEC, 4, precision="bf16")
    assert replicated_kv_bytes(setup) == 2 * 16 * 2 * (12 - 6) == 384
    per_gpu = tensor_parallel_count(hf_count(setup), setup)
    assert per_gpu.block["attention"] == hf_count(setup).block["attention"] / 4 + 384
    # Eager attention copies the KV heads out to every query head first: then 1/t is exact.
    assert replicated_kv_bytes(step(SPEC, 4, precision="bf16", attention="eager")) == 0


def test_token_ids_and_labels_stay_whole_on_every_gpu():
    setup = step(SPEC, 2, precision="bf16")
    whole = hf_count(setup)
    per_gpu = tensor_parallel_count(whole, setup)
    ids = (16 + 17) * 8  # int64: 16 token ids, and at batch 1 the loss keeps its padded row of 17 labels
    assert per_gpu.outside["other"] == (whole.outside["other"] - ids) / 2 + ids
    assert per_gpu.outside["loss"] == 16 * 4 * 51  # FP32 log-softmax over 51 of the 101 vocabulary rows


@st.composite
def split_models(draw) -> tuple[ModelSpec, int]:
    """A small model of a family tensor parallelism splits differently, and a t it splits over."""
    t = draw(st.sampled_from([1, 2, 4]))
    kv_heads = draw(st.sampled_from([1, 2, 4, 8]))
    heads = kv_heads * draw(st.integers(1, 2)) * (t if t > kv_heads else 1)
    width = 2 * draw(st.integers(1, 4))
    family = draw(st.sampled_from(["llama", "qwen2", "phi3", "gpt_neox", "mixtral", "gpt2"]))
    config = {
        "model_type": family,
        "hidden_size": heads * width,
        "num_hidden_layers": draw(st.integers(1, 2)),
        "num_attention_heads": heads,
        "num_key_value_heads": heads if family == "gpt_neox" else kv_heads,
        "intermediate_size": t * draw(st.integers(1, 12)),
        "vocab_size": draw(st.integers(1, 60)),
        "tie_word_embeddings": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
    }
    if family == "gpt2":
        config = {
            "model_type": "gpt2",
            "n_embd": heads * width,
            "n_layer": config["num_hidden_layers"],
            "n_head": heads,
            "n_inner": config["intermediate_size"],
            "n_positions": 32,
            "vocab_size": config["vocab_size"],
        }
    if family == "mixtral":
        config.update(num_local_experts=draw(st.integers(1, 3)), num_experts_per_tok=1)
    return parse_config(config), t


@settings(max_examples=60, deadline=None)
@given(model=split_models())
def test_t_gpus_hold_the_model_and_the_replicated_part_t_times(model):
    spec, t = model
    shards = list(sharded_tensors(spec, t))
    if t == 1:
        assert shards == list(model_tensors(spec))
    replicated = sum(
        whole.numel
        for whole, part in zip(model_tensors(spec), shards, strict=True)
        if whole == part and split_of(whole) != "vocab"
    )
    padding = sum(
        t * part.numel - whole.numel
        for whole, part in zip(model_tensors(spec), shards, strict=True)
        if split_of(whole) == "vocab"
    )
    kv_copies = sum(
        t * part.numel - whole.numel
        for whole, part in zip(model_tensors(spec), shards, strict=True)
        if whole != part and split_of(whole) == "column" and spec.kv_heads < t
    )
    per_gpu = tensor_parallel_parameters(spec, t)
    assert t * per_gpu >= parameter_count(spec)
    # Everything split is split evenly: t GPUs hold the model, plus t - 1 more copies of what is replicated,
    # the vocabulary's rounding up and, with fewer KV heads than GPUs, the KV heads' copies.
    assert t * per_gpu == parameter_count(spec) + (t - 1) * replicated + padding + kv_copies
    if spec.kv_heads >= t:
        assert kv_copies == 0
    assert 0 <= padding < 2 * t * spec.hidden


@settings(max_examples=40, deadline=None)
@given(
    model=split_models(),
    stack=st.sampled_from(["hf", "fused"]),
    precision=st.sampled_from(["fp32", "amp", "bf16"]),
    attention=st.sampled_from(["sdpa", "eager"]),
)
def test_block_activations_fall_as_one_over_t(model, stack, precision, attention):
    spec, t = model
    setup = step(spec, t, stack=stack, precision=precision, attention=attention)
    whole = hf_count(setup) if stack == "hf" else fused_count(setup)
    per_gpu = tensor_parallel_count(whole, setup)
    if t == 1:
        assert per_gpu == whole
    kv = replicated_kv_bytes(setup)
    assert kv >= 0
    for kind, kept in whole.block.items():
        if kind != "weight_copies":
            assert per_gpu.block[kind] == pytest.approx(
                kept / t + (kv if kind in ("attention", "activations") else 0)
            )
    assert per_gpu.block_input_bytes == pytest.approx(whole.block_input_bytes / t)


def test_t_1_leaves_a_count_as_it_is():
    setup = step(SPEC, 1, precision="amp", attention="eager")
    count: ActivationCount = hf_count(setup)
    assert tensor_parallel_count(count, setup) == count
