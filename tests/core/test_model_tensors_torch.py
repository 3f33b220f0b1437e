"""Our tensor lists against transformers itself: every family built from its config on the meta device.

The meta device gives each parameter a shape and no storage, so even a 30B model is built in a
moment. For each family we compare names, shapes and the total with `named_parameters()`.
"""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
transformers = pytest.importorskip(
    "transformers", reason="transformers is a test-only dependency (pip install -r requirements-torch.txt)."
)

from core.datafiles import DATA_DIR  # noqa: E402
from core.model_config import FAMILIES, parse_config  # noqa: E402
from core.model_tensors import model_tensors  # noqa: E402
from core.models import parameter_count  # noqa: E402

pytestmark = pytest.mark.torch
transformers.logging.set_verbosity_error()  # tiny random vocabularies draw warnings about token ids

# DeepSeek's latent attention and experts, every width different: one dense layer, then experts.
LATENT = {
    "num_key_value_heads": 4,
    "kv_lora_rank": 20,
    "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 6,
    "v_head_dim": 10,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 24,
    "first_k_dense_replace": 1,
}
# One small config per family; the shapes make every width different so a swapped one shows.
SMALL: dict[str, dict[str, Any]] = {
    "gpt2": {"n_embd": 48, "n_layer": 2, "n_head": 4, "n_inner": 80, "n_positions": 40, "vocab_size": 101},
    "gpt_neox": {
        "hidden_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 80,
        "vocab_size": 101,
        "attention_bias": False,
    },
    "llama": {"attention_bias": True, "mlp_bias": True, "head_dim": 16, "tie_word_embeddings": True},
    "mistral": {},
    "mixtral": {"num_local_experts": 4, "num_experts_per_tok": 2},
    "qwen2": {},
    "qwen2_moe": {
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 24,
        "shared_expert_intermediate_size": 40,
        "decoder_sparse_step": 2,
    },
    "qwen3": {"head_dim": 16},
    "qwen3_moe": {
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 24,
        "mlp_only_layers": [0],
    },
    "gemma": {"head_dim": 16},
    "gemma2": {"head_dim": 16},
    "gemma3_text": {"head_dim": 16},
    "phi": {"qk_layernorm": True},
    "phi3": {},
    "olmo2": {"attention_bias": True},
    "olmo": {"attention_bias": True, "clip_qkv": 8.0},
    "olmoe": {"num_experts": 4, "num_experts_per_tok": 2, "clip_qkv": 8.0},
    "cohere": {"use_qk_norm": True, "attention_bias": True, "logit_scale": 0.125},
    "stablelm": {"use_qkv_bias": True, "qk_layernorm": True, "use_parallel_residual": True},
    # DeepSeek-V2-Lite's layout: a plain q_proj (no query latent), two shared experts, biased MLPs.
    "deepseek_v2": {
        **LATENT,
        "q_lora_rank": None,
        "n_shared_experts": 2,
        "moe_layer_freq": 1,
        "mlp_bias": True,
    },
    # V3's: a query latent, biased latent projections, grouped routing.
    "deepseek_v3": {**LATENT, "q_lora_rank": 28, "n_group": 2, "topk_group": 1, "attention_bias": True},
    # Falcon-40B's layout: the new decoder, grouped KV heads, ln_attn and ln_mlp; biases and ALiBi on.
    "falcon": {
        "hidden_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_kv_heads": 2,
        "ffn_hidden_size": 80,
        "vocab_size": 101,
        "new_decoder_architecture": True,
        "bias": True,
        "alibi": True,
    },
    "starcoder2": {"use_bias": True},
    "bloom": {"hidden_size": 48, "n_layer": 2, "n_head": 4, "vocab_size": 101},
    "opt": {
        "hidden_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "ffn_dim": 80,
        "vocab_size": 101,
        "max_position_embeddings": 40,
        "word_embed_proj_dim": 32,
    },
    "gpt_bigcode": {
        "n_embd": 48,
        "n_layer": 2,
        "n_head": 4,
        "n_inner": 80,
        "n_positions": 40,
        "vocab_size": 101,
    },
}
# The other layouts of families with switches: Falcon-7B (old decoder, one norm, multi-query), the
# sequential Falcon (Falcon-RW: parallel_attn false, a KV head a head, ALiBi), OPT-350m's post-norm blocks
# without a final norm, OPT without norm weights or biases, and GPT-BigCode with a KV head a head.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("falcon", {"new_decoder_architecture": False, "bias": False, "alibi": False, "num_kv_heads": None}),
    (
        "falcon",
        {
            "new_decoder_architecture": False,
            "multi_query": False,
            "parallel_attn": False,
            "num_kv_heads": None,
        },
    ),
    ("opt", {"do_layer_norm_before": False, "tie_word_embeddings": False}),
    ("opt", {"layer_norm_elementwise_affine": False, "enable_bias": False, "word_embed_proj_dim": 48}),
    ("opt", {"_remove_final_layer_norm": True}),
    ("gpt_bigcode", {"multi_query": False, "tie_word_embeddings": False}),
]
OWN_NAMES = ("gpt2", "gpt_neox", "falcon", "bloom", "opt", "gpt_bigcode")  # families whose SMALL is complete
# Underscored fields are our own (_preset) except those transformers reads.
READ_PRIVATE_FIELDS = ("_remove_final_layer_norm",)
LLAMA_STYLE = {
    "hidden_size": 48,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 80,
    "vocab_size": 101,
}
NO_SPECIAL_TOKENS = {"pad_token_id": None, "bos_token_id": None, "eos_token_id": None}


def small_config(model_type: str) -> dict:
    """A small config of `model_type`, as its config.json would hold it."""
    base: dict = {} if model_type in OWN_NAMES else LLAMA_STYLE
    return {"model_type": model_type, **base, **SMALL[model_type]}


def hf_model(config: dict):
    """The transformers model for `config`, built on the meta device (shapes only, no memory)."""
    fields = {k: v for k, v in config.items() if not k.startswith("_") or k in READ_PRIVATE_FIELDS}
    hf_config = transformers.AutoConfig.for_model(**{**fields, **NO_SPECIAL_TOKENS})
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(hf_config)


def hf_tensors(model) -> dict[str, tuple[int, ...]]:
    return {name: tuple(p.shape) for name, p in model.named_parameters()}


def ours(config: dict) -> dict[str, tuple[int, ...]]:
    return {t.name: t.shape for t in model_tensors(parse_config(config))}


def test_every_family_has_a_small_config():
    assert set(SMALL) == set(FAMILIES)


@pytest.mark.parametrize("model_type", list(SMALL))
def test_each_family_lists_the_tensors_transformers_builds(model_type):
    config = small_config(model_type)
    model = hf_model(config)
    assert ours(config) == hf_tensors(model)
    assert parameter_count(parse_config(config)) == sum(p.numel() for p in model.parameters())


def variant_config(model_type: str, changes: dict[str, Any]) -> dict:
    """The small config of `model_type` with `changes`: another layout of the same family."""
    return {**small_config(model_type), **changes}


@pytest.mark.parametrize(("model_type", "changes"), VARIANTS)
def test_each_layout_of_a_family_lists_the_tensors_transformers_builds(model_type, changes):
    config = variant_config(model_type, changes)
    model = hf_model(config)
    assert ours(config) == hf_tensors(model)
    assert parameter_count(parse_config(config)) == sum(p.numel() for p in model.parameters())


# Presets small enough to build at full size quickly; every preset is checked against its
# published count when it loads (tests/core/test_models.py).
FULL_SIZE = (
    "gpt2.json",
    "pythia-160m.json",
    "qwen2.5-0.5b.json",
    "qwen3-0.6b.json",
    "gemma-3-1b-pt.json",
    "olmo-1b-hf.json",
    "olmoe-1b-7b-0924.json",
    "deepseek-v2-lite.json",
    "falcon-rw-1b.json",
    "starcoder2-3b.json",
    "bloom-560m.json",
    "opt-125m.json",
    "starcoderbase-1b.json",
)


@pytest.mark.parametrize("file_name", FULL_SIZE)
def test_published_configs_at_full_size_match_transformers(file_name):
    config = json.loads((DATA_DIR / "models" / file_name).read_text())
    model = hf_model(config)
    assert parameter_count(parse_config(config)) == sum(p.numel() for p in model.parameters())
    assert parameter_count(parse_config(config)) == config["_preset"]["published_params"]


def _llama_style(draw, *, head_dim: bool) -> dict:
    kv_heads = draw(st.integers(1, 4))
    heads = kv_heads * draw(st.integers(1, 3))
    width = draw(st.integers(1, 6)) * 2  # rotary embeddings need an even head width
    config = {
        "hidden_size": heads * width,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "intermediate_size": draw(st.integers(1, 40)),
        "vocab_size": draw(st.integers(1, 60)),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if head_dim:
        config["head_dim"] = draw(st.integers(1, 8)) * 2
    return config


# The on/off switches each family reads (attention_bias unless named here).
FLAGS = {
    "llama": ("attention_bias", "mlp_bias"),
    "qwen2_moe": ("qkv_bias",),
    "phi": ("qk_layernorm",),
    "cohere": ("attention_bias", "use_qk_norm"),
    "stablelm": ("use_qkv_bias", "qk_layernorm", "use_parallel_residual"),
    "deepseek_v2": ("attention_bias", "mlp_bias"),
}
# Families whose code sizes heads from hidden_size alone (StableLM, OLMoE's QK-norm) or from the latent
# head fields (DeepSeek), so a config's head_dim is not drawn.
NO_HEAD_DIM = ("gpt_neox", "stablelm", "olmoe", "deepseek_v2", "deepseek_v3")


def _deepseek(draw, config: dict) -> dict:
    """DeepSeek's latent attention and experts: every head gets keys and values, so KV heads = heads."""
    layers = config["num_hidden_layers"]
    experts = draw(st.integers(1, 4))
    return {
        "num_key_value_heads": config["num_attention_heads"],
        "q_lora_rank": draw(st.none() | st.integers(1, 24)),
        "kv_lora_rank": draw(st.integers(1, 24)),
        "qk_nope_head_dim": draw(st.integers(1, 8)),
        "qk_rope_head_dim": draw(st.integers(1, 4)) * 2,
        "v_head_dim": draw(st.integers(1, 8)),
        "n_routed_experts": experts,
        "num_experts_per_tok": draw(st.integers(1, experts)),
        "n_group": 1,
        "topk_group": 1,
        "moe_intermediate_size": draw(st.integers(1, 24)),
        "n_shared_experts": draw(st.integers(1, 2)),
        "first_k_dense_replace": draw(st.integers(0, layers + 1)),
    }


def _heads(draw) -> tuple[int, int]:
    """Heads and a hidden size they split (head widths even, as rotary embeddings need)."""
    heads = draw(st.integers(1, 4))
    return heads, heads * draw(st.integers(1, 6)) * 2


def _falcon(draw) -> dict:
    new = draw(st.booleans())
    kv_heads = draw(st.integers(1, 3))
    heads = kv_heads * draw(st.integers(1, 3)) if new else draw(st.integers(1, 4))
    parallel = True if new else draw(st.booleans())
    return {
        "hidden_size": heads * draw(st.integers(1, 6)) * 2,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads if new else None,
        "ffn_hidden_size": draw(st.none() | st.integers(1, 40)),
        "vocab_size": draw(st.integers(1, 60)),
        "new_decoder_architecture": new,
        "multi_query": draw(st.booleans()),
        "parallel_attn": parallel,
        "num_ln_in_parallel_attn": draw(st.sampled_from((None, 1, 2))) if new else None,
        "bias": draw(st.booleans()),
        "alibi": draw(st.booleans()),
        "tie_word_embeddings": draw(st.booleans()),
    }


def _starcoder2(draw) -> dict:
    return {**_llama_style(draw, head_dim=True), "use_bias": draw(st.booleans())}


def _bloom(draw) -> dict:
    heads, hidden = _heads(draw)
    return {
        "hidden_size": hidden,
        "n_layer": draw(st.integers(1, 3)),
        "n_head": heads,
        "vocab_size": draw(st.integers(1, 60)),
        "tie_word_embeddings": draw(st.booleans()),
    }


def _opt(draw) -> dict:
    heads, hidden = _heads(draw)
    return {
        "hidden_size": hidden,
        "num_hidden_layers": draw(st.integers(1, 3)),
        "num_attention_heads": heads,
        "ffn_dim": draw(st.integers(1, 40)),
        "vocab_size": draw(st.integers(1, 60)),
        "max_position_embeddings": draw(st.integers(1, 64)),
        "word_embed_proj_dim": draw(st.none() | st.integers(1, 24)),
        "do_layer_norm_before": draw(st.booleans()),
        "_remove_final_layer_norm": draw(st.booleans()),
        "enable_bias": draw(st.booleans()),
        "layer_norm_elementwise_affine": draw(st.booleans()),
        "tie_word_embeddings": draw(st.booleans()),
    }


def _gpt_bigcode(draw) -> dict:
    heads, hidden = _heads(draw)
    return {
        "n_embd": hidden,
        "n_layer": draw(st.integers(1, 3)),
        "n_head": heads,
        "n_inner": draw(st.none() | st.integers(1, 40)),
        "n_positions": draw(st.integers(1, 64)),
        "vocab_size": draw(st.integers(1, 60)),
        "multi_query": draw(st.booleans()),
        "tie_word_embeddings": draw(st.booleans()),
    }


OWN_RANDOM = {
    "falcon": _falcon,
    "starcoder2": _starcoder2,
    "bloom": _bloom,
    "opt": _opt,
    "gpt_bigcode": _gpt_bigcode,
}


@st.composite
def random_configs(draw, model_type: str) -> dict:
    """A random valid config of `model_type`: small sizes, every option the family reads."""
    if model_type == "gpt2":
        heads = draw(st.integers(1, 4))
        return {
            "model_type": "gpt2",
            "n_embd": heads * draw(st.integers(1, 8)),
            "n_layer": draw(st.integers(1, 3)),
            "n_head": heads,
            "n_inner": draw(st.none() | st.integers(1, 40)),
            "n_positions": draw(st.integers(1, 64)),
            "vocab_size": draw(st.integers(1, 60)),
            "tie_word_embeddings": draw(st.booleans()),
        }
    if model_type in OWN_RANDOM:
        return {"model_type": model_type, **OWN_RANDOM[model_type](draw)}
    config = {"model_type": model_type, **_llama_style(draw, head_dim=model_type not in NO_HEAD_DIM)}
    for flag in FLAGS.get(model_type, ("attention_bias",)):
        config[flag] = draw(st.booleans())
    if model_type in ("deepseek_v2", "deepseek_v3"):
        config.update(_deepseek(draw, config))
    if model_type in ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe"):
        experts = draw(st.integers(1, 4))
        key = "num_local_experts" if model_type == "mixtral" else "num_experts"
        config.update({key: experts, "num_experts_per_tok": draw(st.integers(1, experts))})
    if model_type in ("qwen2_moe", "qwen3_moe"):
        layers = config["num_hidden_layers"]
        config["moe_intermediate_size"] = draw(st.integers(1, 24))
        config["decoder_sparse_step"] = draw(st.integers(1, layers))
        config["mlp_only_layers"] = draw(st.lists(st.integers(0, layers - 1), unique=True))
    if model_type == "qwen2_moe":
        config["shared_expert_intermediate_size"] = draw(st.integers(1, 24))
    return config


@pytest.mark.parametrize("model_type", list(FAMILIES))
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_random_configs_of_every_family_agree_with_transformers(model_type, data):
    config = data.draw(random_configs(model_type))
    model = hf_model(config)
    assert ours(config) == hf_tensors(model)
    assert parameter_count(parse_config(config)) == sum(p.numel() for p in model.parameters())
