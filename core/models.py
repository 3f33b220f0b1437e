"""Model presets from `data/models/` and exact parameter counts, from the architecture.

A count adds up every weight tensor the model's transformers code creates
(`core/model_tensors.py`), so it can be checked against the count published for the released
weights. For a mixture of experts, `active_parameter_count` is what one token uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from core.datafiles import DATA_DIR, read_json, require
from core.model_config import FAMILIES, parse_config, with_name
from core.model_spec import NORMS, ModelSpec, check_spec
from core.model_tensors import PARTS, model_tensors

__all__ = ["NORMS", "ModelSpec", "check_spec"]  # re-exported: callers import the spec from here

CUSTOM = "custom"
PRESET_DIR = "models"
CUSTOM_RECIPE = "custom_model.json"


@dataclass(frozen=True)
class ParameterBreakdown:
    """Where a model's parameters sit, counted exactly; `experts` are the routed experts' weights."""

    embeddings: int
    attention: int
    mlp: int
    norms: int
    output_layer: int
    experts: int = 0

    @property
    def total(self) -> int:
        """Every parameter, shared tensors once."""
        return self.embeddings + self.attention + self.mlp + self.norms + self.output_layer + self.experts


def _parts(spec: ModelSpec) -> Counter[str]:
    parts: Counter[str] = Counter()
    for tensor in model_tensors(spec):
        parts[tensor.part] += tensor.numel
    return parts


# An architecture's count is asked for hundreds of times a page (every budget, phase and sweep point of a
# setup); it depends on the architecture alone, never on who asked. 256 covers the presets and every
# size a workshop's sliders reach.
BREAKDOWN_CACHE_SIZE = 256


@lru_cache(maxsize=BREAKDOWN_CACHE_SIZE)
def parameter_breakdown(spec: ModelSpec) -> ParameterBreakdown:
    """The exact parameter count of `spec`, by part of the model."""
    # Every block of a kind holds the same tensors, so the count lists what sits outside the blocks
    # (no layers), one block, and one dense block of an MoE model, then multiplies: a page rerun
    # costs three short lists, not one per layer of a 126-layer model.
    outside = _parts(replace(spec, layers=0, dense_layers=()))
    block = _parts(replace(spec, layers=1, dense_layers=())) - outside
    dense_block = _parts(replace(spec, layers=1, dense_layers=(0,))) - outside
    dense = len(spec.dense_layers)
    total = Counter(outside)
    for part in PARTS:
        total[part] += (spec.layers - dense) * block[part] + dense * dense_block[part]
    return ParameterBreakdown(**{part: total[part] for part in PARTS})


def parameter_count(spec: ModelSpec) -> int:
    """Every parameter of `spec`, counted from its architecture: what memory holds (all experts)."""
    return parameter_breakdown(spec).total


def active_parameter_count(spec: ModelSpec) -> int:
    """Parameters one token uses: everything but the routed experts, plus its share of them (top-k of all)."""
    parts = parameter_breakdown(spec)
    if not spec.is_moe:
        return parts.total
    return parts.total - parts.experts + parts.experts * spec.active_experts // spec.experts


def _text(value: object, message: str) -> str:
    if not (isinstance(value, str) and value.strip()):
        raise ValueError(message)
    return value


def parse_preset(raw: Mapping[str, Any], file_name: str) -> ModelSpec:
    """One preset: a published config.json plus `_preset` (name, published count, source); its
    architecture must reproduce the published count exactly."""
    about = raw.get("_preset")
    if not isinstance(about, Mapping):
        raise ValueError(f"{file_name} needs a _preset object with name, published_params and source.")
    name = _text(about.get("name"), f"{file_name}: a preset needs a name.")
    require(name != CUSTOM, f"{file_name}: a preset cannot be called {CUSTOM!r}.")
    published = about.get("published_params")
    if not (isinstance(published, int) and not isinstance(published, bool) and published > 0):
        raise ValueError(f"Model {name!r} needs its published parameter count.")
    source = _text(about.get("source"), f"Model {name!r} needs a source.")
    spec = with_name(parse_config(raw, name=name), name=name, published_params=published, source=source)
    counted = parameter_count(spec)
    require(
        counted == published,
        f"Model {name!r}: the architecture gives {counted:,} parameters, not the published {published:,}.",
    )
    return spec


@dataclass(frozen=True)
class ModelTable:
    """Every preset, by family then size, and the recipe that completes a custom shape."""

    presets: tuple[ModelSpec, ...]
    custom: Mapping[str, Any]


def parse_models(files: Mapping[str, Any], custom: Any) -> ModelTable:
    """Validated presets (unique names) from the JSON of each preset file, and the custom recipe."""
    presets = tuple(parse_preset(raw, file_name) for file_name, raw in files.items())
    require(bool(presets), "data/models holds no presets.")
    names = [p.name for p in presets]
    require(len(set(names)) == len(names), "Two model presets share a name.")
    require(isinstance(custom, Mapping), f"{CUSTOM_RECIPE} must hold an object.")
    family_order = list(FAMILIES)
    ordered = sorted(presets, key=lambda p: (family_order.index(p.model_type), parameter_count(p)))
    table = ModelTable(presets=tuple(ordered), custom=dict(custom))
    custom_model(hidden=custom.get("head_dim", 0), layers=1, table=table)  # the recipe must build a model
    return table


@lru_cache(maxsize=1)
def load_models() -> ModelTable:
    """The presets of `data/models/` and the custom recipe, read and validated once per process."""
    files = {
        path.name: read_json(f"{PRESET_DIR}/{path.name}")
        for path in sorted((DATA_DIR / PRESET_DIR).glob("*.json"))
    }
    return parse_models(files, read_json(CUSTOM_RECIPE))


def model_names() -> tuple[str, ...]:
    """Preset names by family then size, then "custom" (the choices of a model picker)."""
    return tuple(p.name for p in load_models().presets) + (CUSTOM,)


def preset(name: str) -> ModelSpec:
    """The preset called `name`; a ValueError naming the known ones if there is none."""
    for spec in load_models().presets:
        if spec.name == name:
            return spec
    raise ValueError(
        f"There is no model preset called {name!r}. Known presets: {', '.join(model_names()[:-1])}."
    )


def llama_mlp_width(hidden: int, multiple_of: int) -> int:
    """Llama's MLP width: 8/3 of the hidden size (a gated MLP of 8·H²), rounded up to `multiple_of`."""
    width = int(2 * (4 * hidden) / 3)
    return multiple_of * -(-width // multiple_of)


def custom_model(*, hidden: int, layers: int, table: ModelTable | None = None) -> ModelSpec:
    """A model of the given hidden size and depth, completed by the recipe in `data/custom_model.json`."""
    recipe = (table or load_models()).custom
    head_dim, multiple_of = recipe.get("head_dim"), recipe.get("mlp_multiple_of")
    if not (isinstance(head_dim, int) and head_dim > 0 and isinstance(multiple_of, int) and multiple_of > 0):
        raise ValueError(f"{CUSTOM_RECIPE} needs a positive head_dim and mlp_multiple_of.")
    require(
        isinstance(hidden, int) and hidden > 0 and hidden % head_dim == 0,
        f"A custom model's hidden size must be a positive multiple of {head_dim}.",
    )
    config = {
        **recipe.get("config", {}),
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": hidden // head_dim,
        "num_key_value_heads": hidden // head_dim,
        "intermediate_size": llama_mlp_width(hidden, multiple_of),
    }
    return with_name(
        parse_config(config), name=CUSTOM, published_params=None, source=str(recipe.get("source"))
    )


def resolve_model(name: str, *, hidden: int, layers: int) -> ModelSpec:
    """The preset `name`, or a custom model of this hidden size and depth when `name` is "custom"."""
    return custom_model(hidden=hidden, layers=layers) if name == CUSTOM else preset(name)
