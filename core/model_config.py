"""A Hugging Face `config.json` read into a `ModelSpec`, for the architectures whose code the memory
count follows: GPT-2, Llama, Mistral and Qwen2.

Only the fields those architectures' modeling code reads are used; anything else is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.datafiles import require
from core.models import ModelSpec, check_spec

ARCHITECTURES = ("gpt2", "llama", "mistral", "qwen2")


def _whole(data: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key, default)
    require(
        isinstance(value, int) and not isinstance(value, bool) and value > 0,
        f"config.json: '{key}' must be a positive whole number, got {value!r}.",
    )
    return int(value)


def _gpt2(data: Mapping[str, Any]) -> ModelSpec:
    hidden = _whole(data, "n_embd")
    inner = data.get("n_inner")
    dropout = any(float(data.get(k, 0.1) or 0) > 0 for k in ("resid_pdrop", "embd_pdrop", "attn_pdrop"))
    return ModelSpec(
        name=str(data.get("_name_or_path") or "gpt2"),
        hidden=hidden,
        layers=_whole(data, "n_layer"),
        heads=_whole(data, "n_head"),
        kv_heads=_whole(data, "n_head"),
        intermediate=_whole({"n_inner": inner}, "n_inner") if inner is not None else 4 * hidden,
        vocab=_whole(data, "vocab_size"),
        positions=_whole(data, "n_positions"),
        tied_embeddings=bool(data.get("tie_word_embeddings", True)),
        gated_mlp=False,
        norm="layernorm",
        biases=True,
        dropout=dropout,
        published_params=None,
        source="config.json",
    )


def _llama_like(data: Mapping[str, Any], kind: str) -> ModelSpec:
    heads = _whole(data, "num_attention_heads")
    hidden = _whole(data, "hidden_size")
    head_dim = data.get("head_dim") or hidden // heads
    require(
        head_dim * heads == hidden,
        "config.json: this count needs head_dim × attention heads = hidden_size.",
    )
    attention_bias = bool(data.get("attention_bias", False))
    return ModelSpec(
        name=str(data.get("_name_or_path") or kind),
        hidden=hidden,
        layers=_whole(data, "num_hidden_layers"),
        heads=heads,
        kv_heads=_whole(data, "num_key_value_heads", heads),
        intermediate=_whole(data, "intermediate_size"),
        vocab=_whole(data, "vocab_size"),
        positions=0,
        tied_embeddings=bool(data.get("tie_word_embeddings", False)),
        gated_mlp=True,
        norm="rmsnorm",
        biases=attention_bias or bool(data.get("mlp_bias", False)),
        dropout=float(data.get("attention_dropout", 0.0) or 0.0) > 0,
        published_params=None,
        source="config.json",
        qkv_bias_only=kind == "qwen2",
    )


def parse_config(data: Mapping[str, Any]) -> ModelSpec:
    """The `ModelSpec` of a Hugging Face config (GPT-2, Llama, Mistral or Qwen2); ValueError otherwise."""
    require(isinstance(data, Mapping), "config.json must hold a JSON object.")
    kind = data.get("model_type")
    require(
        kind in ARCHITECTURES,
        f"config.json: model_type {kind!r} is not one this count follows ({', '.join(ARCHITECTURES)}).",
    )
    return check_spec(_gpt2(data) if kind == "gpt2" else _llama_like(data, str(kind)))


def load_config_text(text: str) -> ModelSpec:
    """The `ModelSpec` of a config.json given as text; a readable ValueError if it is not JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"config.json is not valid JSON: {err.msg} (line {err.lineno}).") from None
    return parse_config(data)
