"""What Hugging Face's code keeps for backward, counted (core.memory.hf_stack) and measured with
saved-tensor hooks on the CPU, for the families whose blocks differ from Llama's: latent attention and
shared experts (DeepSeek), routed experts (OLMoE), one norm for a parallel block (Cohere, StableLM's
parallel residual), a LayerNorm without weight (OLMo).

Each published config runs two blocks at its real hidden width, in FP32 with eager attention, a 32-token
sequence and a small vocabulary (the vocabulary is outside the blocks); MoE configs keep 8 or 16 experts
(a token's activations do not depend on how many experts it was not routed to). The count must equal the
measurement up to the bytes named in each case, every one of them a tensor the count leaves out on purpose.
"""

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
transformers = pytest.importorskip(
    "transformers", reason="transformers is a test-only dependency (pip install -r requirements-torch.txt)."
)

from core.datafiles import read_json  # noqa: E402
from core.memory.hf_stack import hf_count  # noqa: E402
from core.memory.setup import StepSetup  # noqa: E402
from core.model_config import parse_config  # noqa: E402
from tests.harness.saved_tensors import saved_bytes  # noqa: E402

pytestmark = pytest.mark.torch
transformers.logging.set_verbosity_error()

SEQ = 32
VOCAB = 512
LAYERS = 2
FP32 = 4


def _none(config: dict[str, Any]) -> int:
    return 0


def _rotary_table(config: dict[str, Any]) -> int:
    """DeepSeek-V2 keeps its complex rotary table (qk_rope_head_dim / 2 complex64 per token) once a model."""
    return SEQ * FP32 * config["qk_rope_head_dim"]


def _expert_offsets(config: dict[str, Any]) -> int:
    """grouped_mm's int32 offsets, one per expert in each MoE block: not activations, a few bytes."""
    return FP32 * config.get("n_routed_experts", config.get("num_experts", 0))


def _v3_routing(config: dict[str, Any]) -> int:
    """DeepSeek-V3's grouped routing, per token of its MoE block: each group's top-2 indices (int64), the
    chosen groups' indices, the bool mask over experts, the top-k weights and their sum (FP32); its
    rotary tables (cos and sin, qk_rope_head_dim wide) once a model; grouped_mm's offsets."""
    groups, k, experts = config["n_group"], config["num_experts_per_tok"], config["n_routed_experts"]
    routing = 16 * groups + 8 * config["topk_group"] + experts + FP32 + FP32 * k
    return SEQ * routing + 2 * SEQ * FP32 * config["qk_rope_head_dim"] + _expert_offsets(config)


CASES: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any]], int]]] = {
    "models/olmo-1b-hf.json": ({}, _none),
    "configs/aya-23-8b.json": ({}, _none),
    "configs/stablelm-2-1_6b.json": ({}, _none),
    "configs/stablelm-2-1_6b.json+parallel": ({"use_parallel_residual": True}, _none),
    # One dense block, then one MoE block with two shared experts: the count gives their mean.
    "models/deepseek-v2-lite.json": (
        {"n_routed_experts": 8},
        lambda c: _rotary_table(c) + _expert_offsets(c),
    ),
    # A query latent (q_lora_rank 1536) and 128 heads at the real width; a narrower dense MLP and 8 of the
    # 256 experts (two per group, four groups of which two are chosen) keep the model at 3 GB.
    "configs/deepseek-v3.json": (
        {
            "n_routed_experts": 8,
            "n_group": 4,
            "topk_group": 2,
            "first_k_dense_replace": 1,
            "intermediate_size": 2048,
        },
        _v3_routing,
    ),
    "models/olmoe-1b-7b-0924.json": ({"num_experts": 16}, lambda c: LAYERS * _expert_offsets(c)),
    "models/olmo-2-1124-7b.json": ({"pad_token_id": 1}, _none),  # its pad id is past the narrowed vocabulary
}


def _config(case: str) -> dict[str, Any]:
    overrides, _ = CASES[case]
    raw = read_json(case.split("+")[0])
    fields = {k: v for k, v in raw.items() if not k.startswith("_")}
    return {**fields, **overrides, "num_hidden_layers": LAYERS, "vocab_size": VOCAB}


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def measured_bytes(config: dict[str, Any], precision: str = "fp32") -> int:
    """What autograd keeps in the model's blocks for one forward of `config`, eager attention."""
    torch.manual_seed(0)
    hf_config = transformers.AutoConfig.for_model(**config)
    model = transformers.AutoModelForCausalLM.from_config(hf_config, attn_implementation="eager")
    model = model.to(DTYPES[precision])
    ids = torch.randint(0, VOCAB, (1, SEQ))
    got = saved_bytes(model, model.model.layers, lambda: model(input_ids=ids, labels=ids).loss)
    return sum(got.block_bytes(b) for b in range(LAYERS))


def counted_bytes(config: dict[str, Any], precision: str = "fp32") -> float:
    spec = parse_config(config)
    setup = StepSetup(model=spec, batch=1, seq_len=SEQ, precision=precision, attention="eager")
    return LAYERS * hf_count(setup).block_bytes


def _rotary_cache(config: dict[str, Any]) -> int:
    """The cos and sin tables Llama-style rotary code keeps, first saved by block 0, once a model: as wide
    as a head, or StableLM's rotary part of it."""
    head = config["hidden_size"] // config["num_attention_heads"]
    return 2 * SEQ * FP32 * int(head * config.get("partial_rotary_factor", 1.0))


@pytest.mark.parametrize("case", list(CASES))
def test_blocks_keep_what_the_count_says(case):
    config = _config(case)
    uncounted = CASES[case][1](config)
    if not config["model_type"].startswith("deepseek"):
        uncounted += _rotary_cache(config)
    assert measured_bytes(config) == counted_bytes(config) + uncounted


def test_deepseek_in_bf16_keeps_its_routers_fp32_copies():
    # In BF16 DeepSeek's router scores in FP32: it keeps an FP32 copy of its input and of its weight.
    config = _config("models/deepseek-v2-lite.json")
    uncounted = _rotary_table(config) + _expert_offsets(config)
    assert measured_bytes(config, "bf16") == counted_bytes(config, "bf16") + uncounted
