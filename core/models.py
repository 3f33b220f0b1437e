"""Model presets from `data/models.json` and their exact parameter counts, from the architecture.

A count is built up tensor by tensor (embeddings, attention and MLP weights, biases, norms, the
output layer) so that it can be checked against the count published for the released weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import read_json, require

CUSTOM = "custom"
NORMS = ("layernorm", "rmsnorm")


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer's shape: everything its parameter count and activations need."""

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    positions: int
    tied_embeddings: bool
    gated_mlp: bool
    norm: str
    biases: bool
    dropout: bool
    published_params: int | None
    source: str
    qkv_bias_only: bool = (
        False  # Qwen2: biases on the query, key and value projections only (overrides `biases`)
    )

    @property
    def head_dim(self) -> int:
        """Width of one attention head."""
        return self.hidden // self.heads

    @property
    def kv_width(self) -> int:
        """Width of the key (or value) projection: narrower than `hidden` with grouped-query attention."""
        return self.kv_heads * self.head_dim


@dataclass(frozen=True)
class ParameterBreakdown:
    """Where a model's parameters sit, counted exactly."""

    embeddings: int
    attention: int
    mlp: int
    norms: int
    output_layer: int

    @property
    def total(self) -> int:
        """Every parameter, shared tensors once."""
        return self.embeddings + self.attention + self.mlp + self.norms + self.output_layer


def check_spec(spec: ModelSpec) -> ModelSpec:
    """`spec` if its sizes are consistent; else a ValueError saying which one is not."""
    where = f"Model {spec.name!r}"
    sizes = {
        "hidden": spec.hidden,
        "layers": spec.layers,
        "heads": spec.heads,
        "kv_heads": spec.kv_heads,
        "intermediate": spec.intermediate,
        "vocab": spec.vocab,
    }
    for field, value in sizes.items():
        require(
            isinstance(value, int) and not isinstance(value, bool) and value > 0,
            f"{where}: {field} must be a positive whole number.",
        )
    require(isinstance(spec.positions, int) and spec.positions >= 0, f"{where}: positions must be 0 or more.")
    require(
        spec.hidden % spec.heads == 0, f"{where}: the hidden size must split evenly into the attention heads."
    )
    require(
        spec.heads % spec.kv_heads == 0, f"{where}: the attention heads must split evenly into the KV heads."
    )
    require(spec.norm in NORMS, f"{where}: norm must be one of {', '.join(NORMS)}.")
    return spec


def parameter_breakdown(spec: ModelSpec) -> ParameterBreakdown:
    """The exact parameter count of `spec`, by part of the model."""
    h, bias = spec.hidden, spec.biases and not spec.qkv_bias_only
    attention_biases = (
        2 * h + 2 * spec.kv_width if bias else (h + 2 * spec.kv_width if spec.qkv_bias_only else 0)
    )
    attention = 2 * h * h + 2 * h * spec.kv_width + attention_biases
    mlp_matrices = 3 if spec.gated_mlp else 2
    mlp = mlp_matrices * h * spec.intermediate + (spec.intermediate + h if bias else 0)
    per_norm = 2 * h if spec.norm == "layernorm" else h
    return ParameterBreakdown(
        embeddings=(spec.vocab + spec.positions) * h,
        attention=spec.layers * attention,
        mlp=spec.layers * mlp,
        norms=(2 * spec.layers + 1) * per_norm,  # two per block plus the final one
        output_layer=0 if spec.tied_embeddings else spec.vocab * h,
    )


def parameter_count(spec: ModelSpec) -> int:
    """Every parameter of `spec`, counted from its architecture."""
    return parameter_breakdown(spec).total


def _spec(raw: Mapping[str, Any], name: str, published: int | None) -> ModelSpec:
    fields = {
        f: raw.get(f) for f in ("hidden", "layers", "heads", "kv_heads", "intermediate", "vocab", "positions")
    }
    flags = {f: raw.get(f) for f in ("tied_embeddings", "gated_mlp", "biases", "dropout")}
    for flag, value in flags.items():
        require(isinstance(value, bool), f"Model {name!r}: {flag} must be true or false.")
    source = raw.get("source")
    require(isinstance(source, str) and source.strip() != "", f"Model {name!r} needs a source.")
    return check_spec(
        ModelSpec(
            name=name, norm=raw.get("norm"), published_params=published, source=source, **fields, **flags
        )
    )


def parse_preset(raw: Mapping[str, Any]) -> ModelSpec:
    """One validated preset; its architecture must reproduce its published count exactly."""
    name = raw.get("name")
    require(
        isinstance(name, str) and name.strip() != "" and name != CUSTOM,
        f"A model preset has a missing or reserved name: {name!r}.",
    )
    published = raw.get("published_params")
    require(
        isinstance(published, int) and published > 0, f"Model {name!r} needs its published parameter count."
    )
    spec = _spec(raw, name, published)
    counted = parameter_count(spec)
    require(
        counted == published,
        f"Model {name!r}: the architecture gives {counted:,} parameters, not the published {published:,}.",
    )
    return spec


@dataclass(frozen=True)
class ModelTable:
    """Every preset, in file order, and the recipe that completes a custom shape."""

    presets: tuple[ModelSpec, ...]
    custom: Mapping[str, Any]


def parse_models(raw: Any) -> ModelTable:
    """Validated presets (unique names) and the custom recipe from the JSON form of `data/models.json`."""
    require(isinstance(raw, Mapping), "models.json must hold an object.")
    presets = tuple(parse_preset(p) for p in raw.get("presets", []))
    require(bool(presets), "models.json lists no presets.")
    names = [p.name for p in presets]
    require(len(set(names)) == len(names), "models.json repeats a preset name.")
    custom = raw.get("custom")
    require(isinstance(custom, Mapping), "models.json needs a 'custom' recipe.")
    table = ModelTable(presets=presets, custom=dict(custom))
    custom_model(hidden=custom.get("head_dim", 0), layers=1, table=table)  # the recipe must build a model
    return table


@lru_cache(maxsize=1)
def load_models() -> ModelTable:
    """The presets of `data/models.json`, read and validated once per process."""
    return parse_models(read_json("models.json"))


def model_names() -> tuple[str, ...]:
    """Preset names in file order, then "custom" (the choices of a model picker)."""
    return tuple(p.name for p in load_models().presets) + (CUSTOM,)


def preset(name: str) -> ModelSpec:
    """The preset called `name`; a ValueError naming the known ones if there is none."""
    for spec in load_models().presets:
        if spec.name == name:
            return spec
    raise ValueError(
        f"There is no model preset called {name!r}. Known presets: {', '.join(model_names()[:-1])}."
    )


def custom_model(*, hidden: int, layers: int, table: ModelTable | None = None) -> ModelSpec:
    """A model of the given hidden size and depth, completed by the custom recipe of `data/models.json`."""
    recipe = (table or load_models()).custom
    head_dim = recipe.get("head_dim")
    require(
        isinstance(hidden, int)
        and isinstance(head_dim, int)
        and head_dim > 0
        and hidden > 0
        and hidden % head_dim == 0,
        f"A custom model's hidden size must be a positive multiple of {head_dim}.",
    )
    raw = {
        **recipe,
        "hidden": hidden,
        "layers": layers,
        "heads": hidden // head_dim,
        "kv_heads": hidden // head_dim,
        "intermediate": recipe.get("mlp_ratio", 0) * hidden,
    }
    return _spec(raw, CUSTOM, None)


def resolve_model(name: str, *, hidden: int, layers: int) -> ModelSpec:
    """The preset `name`, or a custom model of this hidden size and depth when `name` is "custom"."""
    return custom_model(hidden=hidden, layers=layers) if name == CUSTOM else preset(name)
