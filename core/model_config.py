"""A Hugging Face `config.json`, read into a `ModelSpec`: size and depth limits, known families, sane sizes.

Each family reads the fields its transformers configuration class defines, with the same
defaults (transformers 5.17), so a config that leaves a field out gets the value transformers
would use. Fields a parameter count does not need are ignored. Anything refused raises a
ValueError with one sentence that names the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.datafiles import require
from core.model_spec import ModelSpec, check_spec

MAX_CONFIG_CHARS = 100_000  # published config.json files are a few kB
MAX_DEPTH = 8  # a config nests a rope_scaling or quantization object a level or two deep

# Sane ranges, a little beyond the largest published models (Llama 3.1 405B: 126 layers,
# hidden 16,384, MLP 53,248; Gemma 3: 262,208-token vocabulary).
LIMITS = {
    "hidden": 65_536,
    "layers": 1_024,
    "heads": 1_024,
    "intermediate": 1_048_576,
    "vocab": 4_194_304,
    "positions": 1_048_576,
    "head_dim": 2_048,
    "experts": 1_024,
}
_UNSET = object()


def _shown(value: object) -> str:
    """A learner's value as a refusal quotes it: short, so one sentence stays one line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _number(data: Mapping[str, Any], key: str, *, most: int, default: Any = _UNSET, least: int = 1) -> int:
    value = data.get(key)
    if value is None:
        require(default is not _UNSET, f"The config needs {key}, a whole number.")
        return int(default)
    require(
        isinstance(value, int) and not isinstance(value, bool) and least <= value <= most,
        f"The config's {key} must be a whole number from {least} to {most:,}, not {_shown(value)}.",
    )
    return int(value)


def _clip(data: Mapping[str, Any], key: str) -> None:
    """A clamp bound (OLMo's clip_qkv): absent, null or a positive number; no count depends on it."""
    value = data.get(key)
    require(
        value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0),
        f"The config's {key} must be a positive number or null, not {_shown(value)}.",
    )


def _flag(data: Mapping[str, Any], key: str, default: bool) -> bool:
    value = data.get(key)
    if value is None:  # left out, or null as some published configs write it: the family's default
        return default
    require(isinstance(value, bool), f"The config's {key} must be true or false, not {_shown(value)}.")
    return bool(value)


def _attention(
    data: Mapping[str, Any],
    *,
    kv_default: int | None,
    head_dim_default: int | None = None,
    grouped: bool = True,
    own_head_dim: bool = True,
) -> dict[str, Any]:
    """Sizes and heads of a config with transformers' field names. `None` defaults mean "as many KV heads
    as heads" and "hidden // heads"; a family that is not `grouped` reads neither field, one without an
    `own_head_dim` (StableLM) reads no head_dim."""
    hidden = _number(data, "hidden_size", most=LIMITS["hidden"])
    heads = _number(data, "num_attention_heads", most=LIMITS["heads"])
    kv_heads, head_dim = heads, None
    if grouped:
        kv_heads = _number(data, "num_key_value_heads", most=heads, default=kv_default or heads)
    if grouped and own_head_dim:
        head_dim = _number(data, "head_dim", most=LIMITS["head_dim"], default=head_dim_default or 0) or None
    if head_dim is None:
        require(hidden % heads == 0, "The config's hidden_size must split evenly into num_attention_heads.")
    require(
        heads % kv_heads == 0, "The config's num_attention_heads must split evenly into num_key_value_heads."
    )
    return {
        "hidden": hidden,
        "layers": _number(data, "num_hidden_layers", most=LIMITS["layers"]),
        "heads": heads,
        "kv_heads": kv_heads,
        "explicit_head_dim": head_dim,
        "intermediate": _number(data, "intermediate_size", most=LIMITS["intermediate"]),
        "vocab": _number(data, "vocab_size", most=LIMITS["vocab"]),
    }


def _rotary(
    data: Mapping[str, Any], sizes: dict[str, Any], *, tied_default: bool, gated: bool
) -> dict[str, Any]:
    """What the rotary families share: no position table; gated ones use RMSNorm and no biases, the
    others LayerNorm and biases (each family then names its exceptions)."""
    return {
        **sizes,
        "positions": 0,
        "tied_embeddings": _flag(data, "tie_word_embeddings", tied_default),
        "gated_mlp": gated,
        "norm": "rmsnorm" if gated else "layernorm",
        "biases": not gated,
        "dropout": False,
    }


def _llama_like(
    data: Mapping[str, Any],
    *,
    kv_default: int | None,
    head_dim_default: int | None = None,
    tied_default: bool = False,
) -> dict[str, Any]:
    sizes = _attention(data, kv_default=kv_default, head_dim_default=head_dim_default)
    return _rotary(data, sizes, tied_default=tied_default, gated=True)


def gpt2(data: Mapping[str, Any]) -> dict[str, Any]:
    """GPT2Config: n_embd, n_layer, n_head, n_inner (4·n_embd when absent), n_positions learned positions."""
    require(
        not _flag(data, "add_cross_attention", False),
        "add_cross_attention: GPT-2 with cross-attention is not supported.",
    )
    hidden = _number(data, "n_embd", most=LIMITS["hidden"])
    heads = _number(data, "n_head", most=LIMITS["heads"])
    require(hidden % heads == 0, "The config's n_embd must split evenly into n_head.")
    return {
        "hidden": hidden,
        "layers": _number(data, "n_layer", most=LIMITS["layers"]),
        "heads": heads,
        "kv_heads": heads,
        "intermediate": _number(data, "n_inner", most=LIMITS["intermediate"], default=4 * hidden),
        "vocab": _number(data, "vocab_size", most=LIMITS["vocab"]),
        "positions": _number(data, "n_positions", most=LIMITS["positions"], default=1024),
        "tied_embeddings": _flag(data, "tie_word_embeddings", True),
        "gated_mlp": False,
        "norm": "layernorm",
        "biases": True,
        "dropout": True,
    }


def gpt_neox(data: Mapping[str, Any]) -> dict[str, Any]:
    """GPTNeoXConfig: LayerNorms, a plain MLP with biases, attention biases unless attention_bias is false."""
    bias = _flag(data, "attention_bias", True)
    sizes = _attention(data, kv_default=None, grouped=False)
    return {**_rotary(data, sizes, tied_default=False, gated=False), "qkv_bias": bias, "o_bias": bias}


def llama(data: Mapping[str, Any]) -> dict[str, Any]:
    """LlamaConfig: attention_bias for q, k, v and o; mlp_bias for the MLP."""
    return {
        **_llama_like(data, kv_default=None),
        "qkv_bias": _flag(data, "attention_bias", False),
        "o_bias": _flag(data, "attention_bias", False),
        "mlp_bias": _flag(data, "mlp_bias", False),
    }


def mistral(data: Mapping[str, Any]) -> dict[str, Any]:
    """MistralConfig: no biases, 8 KV heads unless the config says otherwise."""
    return _llama_like(data, kv_default=8)


def qwen2(data: Mapping[str, Any]) -> dict[str, Any]:
    """Qwen2Config: biases on q, k and v only."""
    return {**_llama_like(data, kv_default=32), "qkv_bias": True, "o_bias": False}


def qwen3(data: Mapping[str, Any]) -> dict[str, Any]:
    """Qwen3Config: 128-wide heads by default and a per-head RMSNorm on queries and keys."""
    bias = _flag(data, "attention_bias", False)
    return {
        **_llama_like(data, kv_default=32, head_dim_default=128),
        "qkv_bias": bias,
        "o_bias": bias,
        "qk_norm": "per_head",
    }


def _gemma(data: Mapping[str, Any], *, kv_default: int) -> dict[str, Any]:
    bias = _flag(data, "attention_bias", False)
    spec = _llama_like(data, kv_default=kv_default, head_dim_default=256, tied_default=True)
    return {**spec, "qkv_bias": bias, "o_bias": bias}


def gemma(data: Mapping[str, Any]) -> dict[str, Any]:
    """GemmaConfig: 256-wide heads, tied embeddings."""
    return _gemma(data, kv_default=16)


def _softcap(data: Mapping[str, Any], key: str, *, default: bool) -> bool:
    """Whether a soft-capping field is on: a positive number caps, null turns it off, absent: the default."""
    if key not in data:
        return default
    value = data[key]
    require(
        value is None or (isinstance(value, int | float) and not isinstance(value, bool) and value > 0),
        f"The config's {key} must be a positive number or null, not {_shown(value)}.",
    )
    return value is not None


def _gemma_softcaps(data: Mapping[str, Any], *, default: bool) -> dict[str, bool]:
    return {
        "attention_softcap": _softcap(data, "attn_logit_softcapping", default=default),
        "logit_softcap": _softcap(data, "final_logit_softcapping", default=default),
    }


def _sliding(data: Mapping[str, Any], layers: int, *, pattern: int) -> dict[str, int]:
    """The sliding window and how many layers use it: `layer_types` when the config lists them, else
    every layer but each `pattern`-th, as Gemma2Config (2) and Gemma3TextConfig (6) fill `layer_types`."""
    window = data.get("sliding_window")
    require(
        window is None or (isinstance(window, int) and not isinstance(window, bool) and window >= 1),
        f"The config's sliding_window must be a whole number, 1 or more, or null, not {_shown(window)}.",
    )
    types = data.get("layer_types")
    if types is None:
        sliding = layers - layers // pattern
    else:
        require(
            isinstance(types, list)
            and len(types) == layers
            and all(t in ("sliding_attention", "full_attention") for t in types),
            f"The config's layer_types must list sliding_attention or full_attention for each of its "
            f"{layers} layers.",
        )
        sliding = types.count("sliding_attention")
    return {"sliding_window": window or 0, "sliding_layers": sliding if window else 0}


def gemma2(data: Mapping[str, Any]) -> dict[str, Any]:
    """Gemma2Config: Gemma's block with four norms; scores capped at 50 and logits at 30 by default;
    every other layer (the first, third, ...) attends through a 4,096-token window by default."""
    spec = _gemma(data, kv_default=4)
    window = {"sliding_window": 4096, **data}
    return {
        **spec,
        "norms_per_block": 4,
        **_gemma_softcaps(data, default=True),
        **_sliding(window, spec["layers"], pattern=2),
    }


def gemma3_text(data: Mapping[str, Any]) -> dict[str, Any]:
    """Gemma3TextConfig: Gemma 2's four norms plus a per-head QK-norm; no soft-capping by default; five
    layers in six attend through a 4,096-token window unless `sliding_window_pattern` says otherwise."""
    spec = _gemma(data, kv_default=4)
    window = {"sliding_window": 4096, **data}
    pattern = _number(data, "sliding_window_pattern", most=LIMITS["layers"], default=6)
    return {
        **spec,
        "norms_per_block": 4,
        "qk_norm": "per_head",
        **_gemma_softcaps(data, default=False),
        **_sliding(window, spec["layers"], pattern=pattern),
    }


def phi(data: Mapping[str, Any]) -> dict[str, Any]:
    """PhiConfig: one LayerNorm a block, biases everywhere, an output bias, a QK LayerNorm if qk_layernorm."""
    return {
        **_rotary(data, _attention(data, kv_default=None), tied_default=False, gated=False),
        "norms_per_block": 1,
        "qk_norm": "per_head" if _flag(data, "qk_layernorm", False) else "none",
        "output_bias": True,
    }


def phi3(data: Mapping[str, Any]) -> dict[str, Any]:
    """Phi3Config: fused projections, no biases."""
    return _llama_like(data, kv_default=None)


def olmo2(data: Mapping[str, Any]) -> dict[str, Any]:
    """Olmo2Config: QK-norm over the whole query and key width."""
    bias = _flag(data, "attention_bias", False)
    return {**_llama_like(data, kv_default=None), "qkv_bias": bias, "o_bias": bias, "qk_norm": "per_layer"}


def _experts(
    data: Mapping[str, Any], *, experts_key: str, experts: int, top_k: Any = _UNSET
) -> dict[str, Any]:
    count = _number(data, experts_key, most=LIMITS["experts"], default=experts)
    active = _number(data, "num_experts_per_tok", most=count, default=top_k)
    return {"experts": count, "active_experts": active}


def mixtral(data: Mapping[str, Any]) -> dict[str, Any]:
    """MixtralConfig: every layer routes each token to num_experts_per_tok of num_local_experts experts."""
    spec = mistral(data)
    routed = _experts(data, experts_key="num_local_experts", experts=8, top_k=2)
    return {**spec, **routed, "expert_intermediate": spec["intermediate"]}


def _dense_layers(data: Mapping[str, Any], layers: int) -> tuple[int, ...]:
    """Layers with a dense MLP: those in mlp_only_layers and those decoder_sparse_step skips."""
    step = _number(data, "decoder_sparse_step", most=layers, default=1)
    only = data.get("mlp_only_layers") or []
    require(isinstance(only, list), "The config's mlp_only_layers must be a list of layer numbers.")
    # Checked before the list is scanned: a layer can be listed once, so a longer list is not a config.
    require(
        len(only) <= layers,
        f"The config's mlp_only_layers lists {len(only):,} layers; the model has {layers}.",
    )
    require(
        all(isinstance(i, int) and not isinstance(i, bool) for i in only),
        "The config's mlp_only_layers must be a list of layer numbers.",
    )
    dense = set(only)
    return tuple(i for i in range(layers) if i in dense or (i + 1) % step != 0)


def _qwen_moe(
    data: Mapping[str, Any], base: dict[str, Any], *, experts: int, top_k: int, width: int
) -> dict[str, Any]:
    routed = _experts(data, experts_key="num_experts", experts=experts, top_k=top_k)
    return {
        **base,
        **routed,
        "expert_intermediate": _number(
            data, "moe_intermediate_size", most=LIMITS["intermediate"], default=width
        ),
        "dense_layers": _dense_layers(data, base["layers"]),
    }


def qwen3_moe(data: Mapping[str, Any]) -> dict[str, Any]:
    """Qwen3MoeConfig: Qwen3's attention; by default 128 experts 768 wide, 8 per token."""
    bias = _flag(data, "attention_bias", False)
    base = {**_llama_like(data, kv_default=4), "qkv_bias": bias, "o_bias": bias, "qk_norm": "per_head"}
    return _qwen_moe(data, base, experts=128, top_k=8, width=768)


def qwen2_moe(data: Mapping[str, Any]) -> dict[str, Any]:
    """Qwen2MoeConfig: by default 60 experts 1,408 wide, 4 per token, and a gated shared expert."""
    base = {**_llama_like(data, kv_default=16), "qkv_bias": _flag(data, "qkv_bias", True), "o_bias": False}
    shared = _number(data, "shared_expert_intermediate_size", most=LIMITS["intermediate"], default=5632)
    return {**_qwen_moe(data, base, experts=60, top_k=4, width=1408), "shared_expert_intermediate": shared}


def olmo(data: Mapping[str, Any]) -> dict[str, Any]:
    """OlmoConfig: Llama's block with LayerNorms that have no weight and no bias; clip_qkv clamps q, k, v."""
    _clip(data, "clip_qkv")
    bias = _flag(data, "attention_bias", False)
    return {**_llama_like(data, kv_default=None), "qkv_bias": bias, "o_bias": bias, "norm": "layernorm_plain"}


def olmoe(data: Mapping[str, Any]) -> dict[str, Any]:
    """OlmoeConfig: OLMo 2's QK-norm over the whole width; every layer routes each token to 8 of 64
    experts intermediate_size wide by default."""
    _clip(data, "clip_qkv")
    bias = _flag(data, "attention_bias", False)
    base = {**_llama_like(data, kv_default=None), "qkv_bias": bias, "o_bias": bias, "qk_norm": "per_layer"}
    # transformers sizes the QK-norm from hidden_size whatever head_dim says, so only a matching one builds.
    require(
        base["explicit_head_dim"] in (None, base["hidden"] // base["heads"])
        and base["hidden"] % base["heads"] == 0,
        "The config's head_dim must be hidden_size / num_attention_heads: OLMoE's QK-norm is "
        "hidden_size wide.",
    )
    routed = _experts(data, experts_key="num_experts", experts=64, top_k=8)
    return {**base, **routed, "expert_intermediate": base["intermediate"]}


def cohere(data: Mapping[str, Any]) -> dict[str, Any]:
    """CohereConfig (Command-R, Aya): attention and MLP in parallel after one bias-free LayerNorm, tied
    embeddings, and with use_qk_norm a LayerNorm weight for every query and key head."""
    bias = _flag(data, "attention_bias", False)
    spec = _rotary(data, _attention(data, kv_default=None), tied_default=True, gated=True)
    return {
        **spec,
        "norm": "layernorm_no_bias",
        "norms_per_block": 1,
        "qkv_bias": bias,
        "o_bias": bias,
        "qk_norm": "each_head" if _flag(data, "use_qk_norm", False) else "none",
    }


def stablelm(data: Mapping[str, Any]) -> dict[str, Any]:
    """StableLmConfig: LayerNorms with biases, a gated MLP, biases on q, k and v if use_qkv_bias, one norm a
    block if use_parallel_residual, and with qk_layernorm a LayerNorm for every query and key head."""
    sizes = _attention(data, kv_default=32, own_head_dim=False)
    return {
        **_rotary(data, sizes, tied_default=False, gated=True),
        "norm": "layernorm",
        "qkv_bias": _flag(data, "use_qkv_bias", False),
        "norms_per_block": 1 if _flag(data, "use_parallel_residual", False) else 2,
        "qk_norm": "each_head" if _flag(data, "qk_layernorm", False) else "none",
    }


def _q_lora_rank(data: Mapping[str, Any], default: int) -> int:
    """DeepSeek's query latent: null for a plain q_proj (V2-Lite), absent for the family's default."""
    if "q_lora_rank" in data and data["q_lora_rank"] is None:
        return 0
    return _number(data, "q_lora_rank", most=LIMITS["hidden"], default=default)


def _deepseek(data: Mapping[str, Any], *, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """What DeepSeek-V2 and V3 share: multi-head latent attention, dense MLPs in the first
    first_k_dense_replace layers, then routed experts plus n_shared_experts shared ones."""
    heads = _number(data, "num_attention_heads", most=LIMITS["heads"])
    require(
        _number(data, "num_key_value_heads", most=heads, default=heads) == heads,
        "The config's num_key_value_heads must equal num_attention_heads: latent attention expands "
        "keys and values for every head.",
    )
    # transformers builds every layer from first_k_dense_replace on as MoE, whatever moe_layer_freq says.
    require(
        data.get("moe_layer_freq") in (None, 1),
        f"The config's moe_layer_freq is {_shown(data.get('moe_layer_freq'))}; transformers builds an MoE "
        "block in every layer after the dense ones, so only 1 can be counted.",
    )
    layers = _number(data, "num_hidden_layers", most=LIMITS["layers"])
    dense = _number(data, "first_k_dense_replace", most=LIMITS["layers"], default=defaults["dense"], least=0)
    rope = _number(data, "qk_rope_head_dim", most=LIMITS["head_dim"], default=64)
    nope = _number(data, "qk_nope_head_dim", most=LIMITS["head_dim"], default=128)
    width = _number(data, "moe_intermediate_size", most=LIMITS["intermediate"], default=defaults["width"])
    shared = _number(data, "n_shared_experts", most=LIMITS["experts"], default=defaults["shared"])
    bias = _flag(data, "attention_bias", False)
    return {
        "hidden": _number(data, "hidden_size", most=LIMITS["hidden"]),
        "layers": layers,
        "heads": heads,
        "kv_heads": heads,
        "explicit_head_dim": nope + rope,
        "intermediate": _number(data, "intermediate_size", most=LIMITS["intermediate"]),
        "vocab": _number(data, "vocab_size", most=LIMITS["vocab"]),
        "positions": 0,
        "tied_embeddings": _flag(data, "tie_word_embeddings", False),
        "gated_mlp": True,
        "norm": "rmsnorm",
        "biases": False,
        "qkv_bias": bias,
        "o_bias": bias,
        "dropout": False,
        **_experts(
            data, experts_key="n_routed_experts", experts=defaults["experts"], top_k=defaults["top_k"]
        ),
        "expert_intermediate": width,
        "shared_expert_intermediate": width * shared,
        "dense_layers": tuple(range(min(dense, layers))),
        "kv_lora_rank": _number(data, "kv_lora_rank", most=LIMITS["hidden"], default=512),
        "q_lora_rank": _q_lora_rank(data, 1536),
        "qk_rope_head_dim": rope,
        "v_head_dim": _number(data, "v_head_dim", most=LIMITS["head_dim"], default=128),
    }


def deepseek_v2(data: Mapping[str, Any]) -> dict[str, Any]:
    """DeepseekV2Config: by default 64 routed experts 1,407 wide and 2 shared; num_experts_per_tok has no
    default (transformers leaves it None); mlp_bias for every dense and shared MLP."""
    defaults = {"dense": 0, "width": 1407, "shared": 2, "experts": 64, "top_k": _UNSET}
    return {**_deepseek(data, defaults=defaults), "mlp_bias": _flag(data, "mlp_bias", False)}


def deepseek_v3(data: Mapping[str, Any]) -> dict[str, Any]:
    """DeepseekV3Config: by default 3 dense layers, then 256 routed experts 2,048 wide (8 per token) and
    1 shared; the router's e_score_correction_bias is a buffer, not a parameter; transformers builds no
    multi-token-prediction layer (num_nextn_predict_layers), so none is counted."""
    defaults = {"dense": 3, "width": 2048, "shared": 1, "experts": 256, "top_k": 8}
    return _deepseek(data, defaults=defaults)


def _aliased(data: Mapping[str, Any], names: tuple[str, ...], *, most: int, default: Any = _UNSET) -> int:
    """A size some configs write under another name (transformers maps one onto the other); given under
    both names, the two must agree."""
    given = {name: _number(data, name, most=most) for name in names if data.get(name) is not None}
    require(
        len(set(given.values())) <= 1,
        f"The config gives {' and '.join(given)} different values; they name the same size.",
    )
    return next(iter(given.values())) if given else _number(data, names[0], most=most, default=default)


def _gpt_names(data: Mapping[str, Any], *, hidden: tuple[str, ...]) -> tuple[int, int, int]:
    """Hidden size (under `hidden`'s names), heads and layers of a config that may use GPT-2's names
    (`n_head`, `n_layer`) or the common ones."""
    return (
        _aliased(data, hidden, most=LIMITS["hidden"]),
        _aliased(data, ("n_head", "num_attention_heads"), most=LIMITS["heads"]),
        _aliased(data, ("n_layer", "num_hidden_layers"), most=LIMITS["layers"]),
    )


def _dropout(data: Mapping[str, Any], defaults: Mapping[str, float]) -> bool:
    """Whether any of these dropout probabilities (`defaults`: name and default) is above 0."""
    probabilities = []
    for key, default in defaults.items():
        value = data.get(key, default)
        value = default if value is None else value
        require(
            isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1,
            f"The config's {key} must be a probability from 0 to 1, not {_shown(value)}.",
        )
        probabilities.append(value)
    return any(p > 0 for p in probabilities)


def _dropouts(
    data: Mapping[str, Any], residual: Mapping[str, float], attention: str, attention_default: float
) -> dict[str, bool]:
    """The spec's dropout switches: on the residual stream and embeddings, and on attention probabilities."""
    return {
        "dropout": _dropout(data, residual),
        "attention_dropout": _dropout(data, {attention: attention_default}),
    }


def _plain(
    data: Mapping[str, Any], *, hidden: int, layers: int, heads: int, kv_heads: int, intermediate: int
) -> dict[str, Any]:
    """The sizes of a LayerNorm family whose fields transformers names its own way (Falcon, BLOOM, OPT,
    GPT-BigCode): a plain MLP, biases unless the family says otherwise, no position table."""
    require(hidden % heads == 0, "The config's hidden size must split evenly into its attention heads.")
    require(heads % kv_heads == 0, "The config's attention heads must split evenly into its KV heads.")
    return {
        "hidden": hidden,
        "layers": layers,
        "heads": heads,
        "kv_heads": kv_heads,
        "intermediate": intermediate,
        "vocab": _number(data, "vocab_size", most=LIMITS["vocab"]),
        "positions": 0,
        "tied_embeddings": _flag(data, "tie_word_embeddings", True),
        "gated_mlp": False,
        "norm": "layernorm",
        "biases": True,
    }


def _falcon_layout(data: Mapping[str, Any], new: bool) -> dict[str, Any]:
    """Falcon's block norms: two in sequence (parallel_attn false), ln_attn and ln_mlp side by side (the
    new decoder), or one input_layernorm both branches read (Falcon-7B); other mixes fail in transformers'
    forward."""
    parallel = _flag(data, "parallel_attn", True)
    norms = _number(data, "num_ln_in_parallel_attn", most=2, default=2 if new else 1)
    require(
        parallel or not new,
        "parallel_attn false with new_decoder_architecture: transformers' Falcon then builds no ln_attn "
        "and cannot run.",
    )
    require(
        new or not parallel or norms == 1,
        "num_ln_in_parallel_attn 2 needs new_decoder_architecture: transformers' Falcon-7B block reads "
        "one input_layernorm.",
    )
    return {"parallel_attn": parallel, "norms_per_block": 2 if not parallel else norms}


def _falcon_kv_heads(data: Mapping[str, Any], heads: int, new: bool) -> int:
    """The new decoder groups heads by num_kv_heads; the old one has one KV head (multi_query) or one a
    head."""
    kv_heads = _number(data, "num_kv_heads", most=heads, default=heads)
    if new:
        return kv_heads
    if _flag(data, "multi_query", True):
        return 1
    require(
        kv_heads == heads,
        "num_kv_heads below num_attention_heads needs new_decoder_architecture: transformers' older "
        "Falcon block keeps one KV head a head unless it is multi_query.",
    )
    return heads


def falcon(data: Mapping[str, Any]) -> dict[str, Any]:
    """FalconConfig: a fused query_key_value, `bias` on every linear layer, ALiBi or rotary positions, tied
    embeddings; the new decoder (Falcon-40B, 180B) or the old one (Falcon-7B)."""
    new = _flag(data, "new_decoder_architecture", False)
    hidden = _aliased(data, ("hidden_size", "n_embed"), most=LIMITS["hidden"])
    heads = _number(data, "num_attention_heads", most=LIMITS["heads"])
    sizes = _plain(
        data,
        hidden=hidden,
        layers=_number(data, "num_hidden_layers", most=LIMITS["layers"]),
        heads=heads,
        kv_heads=_falcon_kv_heads(data, heads, new),
        intermediate=_number(data, "ffn_hidden_size", most=LIMITS["intermediate"], default=4 * hidden),
    )
    return {
        **sizes,
        **_falcon_layout(data, new),
        "biases": _flag(data, "bias", False),
        "alibi": _flag(data, "alibi", False),
        "kv_broadcast": new,
        **_dropouts(data, {"hidden_dropout": 0.0}, "attention_dropout", 0.0),
    }


def starcoder2(data: Mapping[str, Any]) -> dict[str, Any]:
    """Starcoder2Config: grouped-query attention (2 KV heads by default), LayerNorms, a plain MLP (c_fc,
    c_proj), biases on every projection unless use_bias is false, tied embeddings."""
    sizes = _attention(data, kv_default=2)
    return {
        **_rotary(data, sizes, tied_default=True, gated=False),
        "biases": _flag(data, "use_bias", True),
        **_dropouts(data, {"residual_dropout": 0.0, "embedding_dropout": 0.0}, "attention_dropout", 0.0),
    }


def bloom(data: Mapping[str, Any]) -> dict[str, Any]:
    """BloomConfig: n_layer, n_head, hidden_size (n_embed in older files); ALiBi, a LayerNorm after the
    embedding, a fused query_key_value and an MLP 4 × hidden wide, biases everywhere."""
    hidden, heads, layers = _gpt_names(data, hidden=("hidden_size", "n_embed"))
    sizes = _plain(data, hidden=hidden, layers=layers, heads=heads, kv_heads=heads, intermediate=4 * hidden)
    dropouts = _dropouts(data, {"hidden_dropout": 0.0}, "attention_dropout", 0.0)
    return {**sizes, "embedding_norm": True, "alibi": True, **dropouts}


OPT_POSITION_OFFSET = 2  # OPTLearnedPositionalEmbedding keeps 2 rows before position 0


def opt(data: Mapping[str, Any]) -> dict[str, Any]:
    """OPTConfig: learned positions (2 rows more than max_position_embeddings), an embedding
    word_embed_proj_dim wide with project_in and project_out, enable_bias, ffn_dim, and a final LayerNorm
    only with do_layer_norm_before."""
    hidden = _number(data, "hidden_size", most=LIMITS["hidden"])
    heads = _number(data, "num_attention_heads", most=LIMITS["heads"])
    sizes = _plain(
        data,
        hidden=hidden,
        layers=_number(data, "num_hidden_layers", most=LIMITS["layers"]),
        heads=heads,
        kv_heads=heads,
        intermediate=_number(data, "ffn_dim", most=LIMITS["intermediate"]),
    )
    width = _number(data, "word_embed_proj_dim", most=LIMITS["hidden"], default=hidden)
    before = _flag(data, "do_layer_norm_before", True)
    affine = _flag(data, "layer_norm_elementwise_affine", True)
    return {
        **sizes,
        "positions": _number(data, "max_position_embeddings", most=LIMITS["positions"], default=2048),
        "position_offset": OPT_POSITION_OFFSET,
        "embedding_width": 0 if width == hidden else width,
        "norm": "layernorm" if affine else "layernorm_no_affine",
        "biases": _flag(data, "enable_bias", True),
        "final_norm": before and not _flag(data, "_remove_final_layer_norm", False),
        **_dropouts(data, {"dropout": 0.1}, "attention_dropout", 0.0),
    }


def gpt_bigcode(data: Mapping[str, Any]) -> dict[str, Any]:
    """GPTBigCodeConfig (SantaCoder, StarCoder): GPT-2's names and learned positions, nn.Linear layers, one KV
    head shared by all heads (multi_query) unless it is false."""
    require(
        not _flag(data, "add_cross_attention", False),
        "add_cross_attention: GPT-BigCode with cross-attention is not supported.",
    )
    hidden, heads, layers = _gpt_names(data, hidden=("n_embd", "hidden_size"))
    sizes = _plain(
        data,
        hidden=hidden,
        layers=layers,
        heads=heads,
        kv_heads=1 if _flag(data, "multi_query", True) else heads,
        intermediate=_number(data, "n_inner", most=LIMITS["intermediate"], default=4 * hidden),
    )
    positions = _aliased(
        data, ("n_positions", "max_position_embeddings"), most=LIMITS["positions"], default=1024
    )
    dropouts = _dropouts(data, {"resid_pdrop": 0.1, "embd_pdrop": 0.1}, "attn_pdrop", 0.1)
    return {**sizes, "positions": positions, **dropouts}


@dataclass(frozen=True)
class Family:
    """A model_type we read: the name people know it by and the reader of its config fields."""

    label: str
    read: Callable[[Mapping[str, Any]], dict[str, Any]]


FAMILIES = {
    "gpt2": Family("GPT-2", gpt2),
    "gpt_neox": Family("GPT-NeoX (Pythia)", gpt_neox),
    "llama": Family("Llama", llama),
    "mistral": Family("Mistral", mistral),
    "mixtral": Family("Mixtral (mixture of experts)", mixtral),
    "qwen2": Family("Qwen2 / Qwen2.5", qwen2),
    "qwen2_moe": Family("Qwen2-MoE (mixture of experts, shared expert)", qwen2_moe),
    "qwen3": Family("Qwen3", qwen3),
    "qwen3_moe": Family("Qwen3-MoE (mixture of experts)", qwen3_moe),
    "gemma": Family("Gemma", gemma),
    "gemma2": Family("Gemma 2", gemma2),
    "gemma3_text": Family("Gemma 3 (text only)", gemma3_text),
    "phi": Family("Phi-1.5 / Phi-2", phi),
    "phi3": Family("Phi-3", phi3),
    "olmo2": Family("OLMo 2", olmo2),
    "olmo": Family("OLMo", olmo),
    "olmoe": Family("OLMoE (mixture of experts)", olmoe),
    "cohere": Family("Command-R / Aya (Cohere)", cohere),
    "stablelm": Family("StableLM", stablelm),
    "deepseek_v2": Family("DeepSeek-V2 (latent attention, mixture of experts)", deepseek_v2),
    "deepseek_v3": Family("DeepSeek-V3 (latent attention, mixture of experts)", deepseek_v3),
    "falcon": Family("Falcon", falcon),
    "starcoder2": Family("StarCoder2", starcoder2),
    "bloom": Family("BLOOM (ALiBi)", bloom),
    "opt": Family("OPT", opt),
    "gpt_bigcode": Family("GPT-BigCode (SantaCoder, StarCoder)", gpt_bigcode),
}


def parse_config(data: Mapping[str, object], *, name: str = "pasted config") -> ModelSpec:
    """The model a config.json describes; a ValueError naming any field missing, unknown or out of range."""
    require(isinstance(data, Mapping), "A config.json must hold one JSON object.")
    model_type = data.get("model_type")
    require(
        isinstance(model_type, str) and model_type in FAMILIES,
        f"The config's model_type {_shown(model_type)} is not one we can count; "
        f"supported: {', '.join(FAMILIES)}.",
    )
    fields = FAMILIES[str(model_type)].read(data)
    spec = ModelSpec(
        name=name,
        published_params=None,
        source=f"config.json, model_type {model_type}",
        model_type=str(model_type),
        **fields,
    )
    return check_spec(spec)


def _depth(value: object) -> int:
    if isinstance(value, Mapping):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        require(key not in data, f"The config gives the field {key!r} twice.")
        data[key] = value
    return data


def _no_constant(token: str) -> None:
    raise ValueError(f"The config holds {token}, which is not a number JSON allows.")


def read_config_text(text: str) -> Mapping[str, Any]:
    """The JSON object in `text`, refused if it is too long, not JSON, nested too deep or repeats a key."""
    require(isinstance(text, str), "A config.json must be text.")
    require(
        len(text) <= MAX_CONFIG_CHARS,
        f"This config is {len(text):,} characters long; a config.json is at most {MAX_CONFIG_CHARS:,}.",
    )
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"This is not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}."
        ) from None
    except RecursionError:
        raise ValueError(f"This config nests objects deeper than {MAX_DEPTH} levels.") from None
    require(_depth(data) <= MAX_DEPTH, f"This config nests objects deeper than {MAX_DEPTH} levels.")
    require(isinstance(data, Mapping), "A config.json must hold one JSON object, in braces.")
    return data


def decode_config_file(raw: bytes) -> str:
    """The text of an uploaded config.json, refused if it is too large or not UTF-8."""
    require(
        len(raw) <= 4 * MAX_CONFIG_CHARS,
        f"This file is {len(raw):,} bytes; a config.json is at most {MAX_CONFIG_CHARS:,} characters.",
    )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("This file is not UTF-8 text, so it cannot be a config.json.") from None


def load_config_text(text: str, *, name: str = "pasted config") -> ModelSpec:
    """The model described by the config.json in `text` (pasted or uploaded), validated."""
    return parse_config(read_config_text(text), name=name)


def with_name(spec: ModelSpec, *, name: str, published_params: int | None, source: str) -> ModelSpec:
    """`spec` under a display name, with the count published for its weights and where that came from."""
    return replace(spec, name=name, published_params=published_params, source=source)
