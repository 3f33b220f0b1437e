"""The phase model under every training method and sharding scheme: blocks worked by hand from what
autograd saves (core.memory.adapted), model state per GPU in the phases, and properties over real configs.
tests/core/test_adapted_torch.py checks the same counts against saved-tensor hooks on the CPU."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.datafiles import DATA_DIR, read_json
from core.memory.first_oom import first_oom, step_peaks
from core.memory.hf_stack import FP32_ROUTERS
from core.memory.model_state import adamw8bit_state_bytes, run_model_state
from core.memory.phases import PHASE_TERM_LABELS, step_inputs, step_moments, step_phases
from core.memory.setup import StepSetup, TrainingMethod
from core.memory.tensor_split import tensor_parallel_weight_bytes
from core.memory.timeline import chart_terms
from core.memory.verdict import capped
from core.model_config import parse_config

# Llama 3.2 1B: h 2,048, 32 query heads and 8 KV heads of 64, I (FFN) 8,192, 16 blocks.
H, KV, HEADS, FFN, R = 2048, 512, 32, 8192, 16
LLAMA = parse_config(read_json("configs/llama-3.2-1b.json"))
BLOCK = 2 * H * H + 2 * KV * H + 3 * H * FFN + 2 * H
# Per token, BF16 with flash attention: two RMSNorms (FP32 input 4h, 1/rms 4, BF16 normalised 2h), the
# q/k/v input 2h, Q 2h, K and V 2·kv each, output 2h and log-sum-exp 4 per head, SwiGLU's four 2·FFN
# tensors, the gate/up input 2h (the down projection's input is the fourth SwiGLU tensor).
FULL = 2 * (4 * H + 4 + 2 * H) + 2 * H + 2 * H + 2 * 2 * KV + 2 * H + 4 * HEADS + 8 * FFN + 2 * H
# Frozen base: no norm keeps its normalised tensor, no frozen projection its input (the flash kernel
# keeps the output projection's input as its own output).
FROZEN = FULL - 2 * 2 * H - 2 * H - 2 * H - 2 * FFN
UPCAST = 4 * H + 4  # an RMSNorm's FP32 input and 1/rms, kept only for its input's gradient


def llama(tokens: int = 512, **training) -> StepSetup:
    return StepSetup(model=LLAMA, batch=1, seq_len=tokens, training=TrainingMethod(**training))


def test_full_training_block_is_the_hf_count() -> None:
    count = step_inputs(llama())[0]
    assert count.saved_by_block == (512 * FULL,) * 16 and count.backward_blocks == 16


def test_lora_on_attention_worked_by_hand() -> None:
    # q, k, v and o each cast their 2,048-wide input to a new FP32 copy (4h) that lora_A keeps, and
    # lora_B keeps lora_A's rank-16 FP32 output.
    adapters = 4 * (4 * H + 4 * R)
    saved = step_inputs(llama(method="lora"))[0].saved_by_block
    assert saved[1] == saved[15] == 512 * (FROZEN + adapters)
    assert saved[0] == 512 * (FROZEN + adapters - UPCAST)  # the embedding's output needs no gradient
    assert FROZEN == 37 * H + 136  # the previous probe's 37.1 bytes per token per hidden unit


def test_lora_on_all_linear_adds_the_mlp_adapters() -> None:
    # gate and up cast the 2,048-wide norm output each, down its 8,192-wide input.
    adapters = 4 * (4 * H + 4 * R) + 2 * (4 * H + 4 * R) + 4 * FFN + 4 * R
    saved = step_inputs(llama(method="lora", lora_targets="all-linear"))[0].saved_by_block
    assert saved[1] == 512 * (FROZEN + adapters)


def test_lora_adding_its_branch_is_the_forward_transient() -> None:
    # gate_proj's BF16 output (2 bytes), lora_B's scaled FP32 output and the FP32 sum (4 + 4), 8,192 wide,
    # beside Hugging Face's own: SwiGLU's two 2·I tensors.
    lora = step_inputs(llama(method="lora", lora_targets="all-linear"))[0].count
    full = step_inputs(llama())[0].count
    assert full.forward_block_transient_bytes == 512 * 2 * 2 * FFN
    assert lora.forward_block_transient_bytes == 512 * (2 + 8) * FFN


def test_qlora_saves_as_lora_and_dequantizes_the_widest_layer() -> None:
    lora, qlora = step_inputs(llama(method="lora"))[0], step_inputs(llama(method="qlora"))[0]
    assert qlora.saved_by_block == lora.saved_by_block
    assert qlora.dequantized_weight_bytes == 2 * FFN * H  # gate_proj in BF16
    blocks = [m for m in step_moments(llama(method="qlora")) if m.block is not None]
    assert all(m.terms["dequantized_weight"] == 2 * FFN * H for m in blocks)


def test_frozen_blocks_keep_nothing_and_backward_stops_above_them() -> None:
    setup = llama(freeze_blocks=4)
    count = step_inputs(setup)[0]
    assert count.saved_by_block[:4] == (0.0,) * 4
    assert count.saved_by_block[4] == 512 * (FULL - UPCAST)  # its input needs no gradient
    assert count.saved_by_block[5] == 512 * FULL
    reached = [m.block for m in step_moments(setup) if m.phase == "backward" and m.block is not None]
    assert reached == list(range(16, 4, -1))


# Per token under autocast (FP32 weights, BF16 matmuls), full training: the norms' FP32 normalised tensors
# (the residual stream is FP32), flash attention as in BF16, SwiGLU's four BF16 tensors and each linear
# call's own BF16 cast of its input (q, k, v, gate, up: 5 × 2h); per block, BF16 copies of its weights.
FULL_AMP = 2 * (4 * H + 4 + 4 * H) + 2 * H + 2 * 2 * KV + 2 * H + 4 * HEADS + 8 * FFN + 5 * 2 * H
WEIGHT_COPIES = 2 * (BLOCK - 2 * H)


def amp(**training) -> StepSetup:
    return replace(llama(**training), precision="amp")


def test_autocast_full_training_block_is_the_hf_count() -> None:
    assert step_inputs(amp())[0].saved_by_block == (512 * FULL_AMP + WEIGHT_COPIES,) * 16


def test_lora_under_autocast_worked_by_hand() -> None:
    # The frozen base: no norm keeps its FP32 normalised tensor, no frozen layer its input's cast (the
    # down projection's input is the fourth SwiGLU tensor; the flash kernel keeps o_proj's input). The
    # weights' BF16 copies stay: every frozen layer's input needs a gradient.
    frozen = FULL_AMP - 2 * 4 * H - 5 * 2 * H - 2 * FFN
    # Each adapter: lora_A's own BF16 cast of its h-wide input and its rank-16 BF16 output; the BF16
    # copies of both adapter weights (q and o: h → h, k and v: h → kv).
    adapters = 4 * (2 * H + 2 * R)
    adapter_copies = 2 * R * ((H + H) + 2 * (H + KV) + (H + H))
    saved = step_inputs(amp(method="lora"))[0].saved_by_block
    assert saved[1] == saved[15] == 512 * (frozen + adapters) + WEIGHT_COPIES + adapter_copies
    # The first block's input and first norm need no gradient: the norm keeps nothing, and q, k and v
    # keep neither their weights' copies nor their lora_A weights' copies.
    assert saved[0] == saved[1] - 512 * UPCAST - 2 * (H * H + 2 * KV * H) - 2 * R * 3 * H


def test_autocast_transients_of_lora_and_frozen_blocks() -> None:
    # All-linear LoRA: gate_proj holds its BF16 base output, lora_B's scaled output and their sum (3 × 2
    # bytes, 8,192 wide); down_proj's peft FP32 copy of its input and three h-wide BF16 tensors are less.
    lora = step_inputs(amp(method="lora", lora_targets="all-linear"))[0].count
    assert lora.forward_block_transient_bytes == 512 * 3 * 2 * FFN > 512 * (4 * FFN + 3 * 2 * H)
    # A frozen block's gate_proj: its weight's BF16 copy, made for the matmul and kept by nothing, is
    # larger than SwiGLU's two BF16 tensors at 512 tokens.
    frozen = step_inputs(amp(freeze_blocks=4))[0].count
    assert frozen.forward_block_transient_bytes == 2 * FFN * H > 512 * 2 * 2 * FFN


def test_fsdp_over_8_gpus_per_gpu_terms() -> None:
    setup = replace(llama(gpus=8, sharding="fsdp"), precision="mixed16")
    moments = step_moments(setup)
    in_blocks = [m for m in moments if m.block is not None]
    assert all(m.terms["gathered_block"] == 2 * 2 * BLOCK for m in in_blocks)
    step = step_phases(setup).optimizer_step.terms
    parameters = 1_235_814_400
    assert step["weights"] == 2 * parameters / 8 and step["gradients"] == 2 * parameters / 8
    assert step["master_weights"] == 4 * parameters / 8 and step["optimizer_state"] == 8 * parameters / 8
    # In backward at block 16 only the output layer's gradient exists, sharded like the rest; the block's
    # own full gradients are copied into the reduce-scatter input before they are freed.
    first = next(m for m in moments if m.phase == "backward" and m.block == 16)
    assert first.terms["gradients"] == 2 * 128_256 * H / 8
    assert first.terms["gradient_reduce_scatter"] == 2 * 2 * BLOCK
    # The root (the tied embedding and the final norm) stays gathered from forward to backward's end.
    root = [m.terms.get("gathered_root") for m in moments if m.phase in ("forward", "backward")]
    assert root[:-1] == [2 * (128_256 * H + H)] * (len(root) - 1) and root[-1] is None


def test_zero3_gathers_as_fsdp_and_zero2_does_not() -> None:
    zero3 = step_moments(llama(gpus=4, sharding="zero3"))
    zero2 = step_moments(llama(gpus=4, sharding="zero2"))
    assert next(m for m in zero3 if m.block == 1).terms["gathered_block"] == 2 * 2 * BLOCK
    assert "gathered_block" not in next(m for m in zero2 if m.block == 1).terms


def test_ddp_buckets_live_at_every_moment() -> None:
    moments = step_moments(llama(gpus=2, sharding="ddp"))
    assert {m.terms["gradient_buckets"] for m in moments} == {2 * 1_235_814_400}


def test_every_phase_term_has_a_place_on_the_chart() -> None:
    for term in PHASE_TERM_LABELS:
        assert chart_terms({term: 1e9}, overhead_bytes=0).total_gb == 1.0, term


@pytest.mark.parametrize(
    "training",
    [
        {"gpus": 2, "sharding": "ddp"},
        {"gpus": 8, "sharding": "fsdp"},
        {"method": "qlora", "gpus": 4, "sharding": "zero3"},
    ],
)
def test_the_timeline_draws_every_sharded_run(training) -> None:
    peaks = step_peaks(llama(**training), capped(80))
    assert peaks[(2, "optimizer_step")] > 0 and len(peaks) == 6


@settings(max_examples=20, deadline=None)
@given(frozen=st.integers(0, 15), more=st.integers(1, 16), first_step=st.booleans())
def test_freezing_more_blocks_never_needs_more(frozen, more, first_step) -> None:
    fewer = replace(llama(freeze_blocks=frozen), first_step=first_step)
    deeper = replace(llama(freeze_blocks=min(16, frozen + more)), first_step=first_step)
    assert step_phases(deeper).peak_bytes < step_phases(fewer).peak_bytes


def test_tensor_parallel_full_training_keeps_each_gpus_shard_and_its_share_of_the_activations() -> None:
    # One tensor-parallel group of 8 GPUs over Llama's 8 KV heads: one replica, nothing to shard.
    whole, split = step_inputs(llama()), step_inputs(llama(gpus=8, tensor_parallel=8))
    assert split[1].per_gpu.weights == tensor_parallel_weight_bytes(LLAMA, 8, lambda t: 2 * t.numel)
    # Sequence parallelism: every block keeps 1/8 of what it kept on one GPU (8 KV heads split evenly).
    assert split[0].saved_by_block == tuple(b / 8 for b in whole[0].saved_by_block)
    assert split[1].trainable_parameters == whole[1].trainable_parameters  # the model's, not the shard's
    assert step_phases(llama(gpus=8, tensor_parallel=8)).peak_bytes < step_phases(llama()).peak_bytes / 4


def test_tensor_parallel_fine_tuning_is_refused_in_a_sentence() -> None:
    with pytest.raises(ValueError, match="Tensor parallelism is counted for full training"):
        step_phases(llama(method="lora", gpus=2, tensor_parallel=2))


@pytest.mark.parametrize(
    ("values", "state_bytes"),
    [(4095, 2 * 4 * 4095), (4096, 2 * (4096 + 4 * 16)), (70_000, 2 * (70_000 + 4 * 274))],
)
def test_adamw8bit_state_by_hand(values, state_bytes) -> None:
    # Under 4,096 values two FP32 moments; from there two 1-byte moments and an FP32 absmax each per 256.
    assert adamw8bit_state_bytes(values) == state_bytes


def test_adamw8bit_shrinks_lora_state_and_adds_the_maps_once() -> None:
    lora = run_model_state(llama(), TrainingMethod(method="lora"))
    eight = run_model_state(replace(llama(), optimizer="adamw8bit"), TrainingMethod(method="lora"))
    # Every adapter matrix (16 × 2,048 or 16 × 512) is a multiple of 256 values.
    n = lora.trainable_parameters
    assert eight.per_gpu.optimizer_state == 2 * (n + 4 * n // 256) + 2 * 4 * 256
    assert lora.per_gpu.optimizer_state == 8 * n


@pytest.mark.parametrize("training", [{}, {"freeze_blocks": 8}, {"method": "lora"}, {"method": "qlora"}])
def test_first_oom_for_every_method(training) -> None:
    setup = llama(**training)
    peak_gib = step_phases(setup).peak_bytes / 2**30
    assert first_oom(setup, capped(peak_gib + 1)) is None
    failure = first_oom(setup, capped(peak_gib * 0.99))
    assert failure is not None and failure.step in (1, 2)


CONFIG_FILES = [
    f"{folder}/{p.name}"
    for folder in ("models", "configs")
    for p in sorted((DATA_DIR / folder).glob("*.json"))
]
DENSE = [spec for spec in (parse_config(read_json(name)) for name in CONFIG_FILES) if not spec.experts]
# transformers quantizes only layers that are exactly nn.Linear; Falcon's are FalconLinear, so its QLoRA
# base stays BF16 and QLoRA holds what LoRA holds.
QUANTIZED = [spec for spec in DENSE if spec.model_type != "falcon"]


def run_peak(spec, method: str, batch: int, seq: int) -> float:
    """The most a run of `spec` needs in its first two steps (step 1 has no optimizer state yet)."""
    return max(
        step_phases(
            StepSetup(
                model=spec, batch=batch, seq_len=seq, first_step=first, training=TrainingMethod(method=method)
            )
        ).peak_bytes
        for first in (True, False)
    )


@settings(max_examples=25, deadline=None)
@given(spec=st.sampled_from(QUANTIZED), seq=st.sampled_from([128, 512, 1024]), batch=st.integers(1, 2))
def test_peaks_order_qlora_lora_full(spec, seq, batch) -> None:
    seq = min(seq, spec.positions or seq)
    peaks = {method: run_peak(spec, method, batch, seq) for method in ("full", "lora", "qlora")}
    assert peaks["qlora"] < peaks["lora"] < peaks["full"]


# Mixtures of experts whose LoRA and QLoRA runs are counted: routed experts only, no shared expert.
ROUTED_ONLY = [
    spec
    for spec in (parse_config(read_json(name)) for name in CONFIG_FILES)
    if spec.experts and not spec.shared_expert_intermediate and spec.model_type not in FP32_ROUTERS
]


@pytest.mark.parametrize("spec", ROUTED_ONLY, ids=lambda spec: spec.model_type)
def test_on_routed_experts_peaks_order_qlora_lora_full(spec) -> None:
    # The experts stay BF16 under QLoRA (they are no nn.Linear), so QLoRA saves on the attention only.
    peaks = {method: run_peak(spec, method, 1, 512) for method in ("full", "lora", "qlora")}
    assert peaks["qlora"] < peaks["lora"] < peaks["full"]


def test_when_activations_dominate_lora_can_need_more_than_full_training() -> None:
    # StableLM 2 1.6B, 8 × 4,096 tokens: its LayerNorms keep their inputs frozen or not, and peft casts
    # the input of each of q, k, v and o to an FP32 copy of its own, so LoRA's saved activations outgrow
    # what freezing saves in model state.
    stablelm = parse_config(read_json("configs/stablelm-2-1_6b.json"))
    assert run_peak(stablelm, "lora", 8, 4096) > run_peak(stablelm, "full", 8, 4096)
    assert run_peak(stablelm, "lora", 1, 1024) < run_peak(stablelm, "full", 1, 1024)


def test_a_falcon_qlora_run_holds_what_its_lora_run_holds() -> None:
    falcon = next(spec for spec in DENSE if spec.model_type == "falcon")
    lora, qlora = (
        step_phases(
            StepSetup(model=falcon, batch=1, seq_len=512, training=TrainingMethod(method=m))
        ).peak_bytes
        for m in ("lora", "qlora")
    )
    assert qlora == lora


@settings(max_examples=20, deadline=None)
@given(
    spec=st.sampled_from([spec for spec in DENSE if spec.norm == "rmsnorm"]),
    seq=st.sampled_from([128, 512, 1024]),
    first_step=st.booleans(),
    frozen=st.integers(1, 2),
)
def test_under_autocast_lora_and_frozen_blocks_peak_below_full(spec, seq, first_step, frozen) -> None:
    # QLoRA under autocast is refused; LoRA and frozen blocks must keep less than full training.
    def peak(**training) -> float:
        setup = StepSetup(
            model=spec,
            batch=1,
            seq_len=min(seq, spec.positions or seq),
            precision="amp",
            first_step=first_step,
            training=TrainingMethod(**training),
        )
        return step_phases(setup).peak_bytes

    full = peak()
    assert peak(method="lora") < full and peak(freeze_blocks=frozen) < full


MIXTRAL = parse_config(read_json("models/mixtral-8x7b-v0.1.json"))
GPT2 = parse_config(read_json("configs/gpt2-small.json"))
DEEPSEEK = parse_config(read_json("models/deepseek-v2-lite.json"))


@pytest.mark.parametrize(
    ("model", "precision", "training", "message"),
    [
        (LLAMA, "amp", {"method": "qlora"}, "QLoRA under autocast is not counted"),
        (GPT2, "amp", {"method": "lora"}, "not for GPT-2's LayerNorm or a mixture of experts"),
        (MIXTRAL, "amp", {"freeze_blocks": 2}, "not for GPT-2's LayerNorm or a mixture of experts"),
        (DEEPSEEK, "bf16", {"method": "lora"}, "not yet with shared experts"),
    ],
)
def test_what_is_not_counted_is_refused_in_a_sentence(model, precision, training, message) -> None:
    setup = StepSetup(
        model=model, batch=1, seq_len=128, precision=precision, training=TrainingMethod(**training)
    )
    with pytest.raises(ValueError, match=message):
        step_phases(setup)
