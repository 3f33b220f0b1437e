"""What fine-tuning trains: LoRA adapters on a model's linear layers, counted as peft builds them.

peft's LoRA wraps each targeted layer (an `nn.Linear`, or GPT-2's `Conv1D`) with two new linear
layers and no bias: `lora_A` (in_features → r) and `lora_B` (r → out_features), so a layer gains
r × (in + out) trainable parameters and its own weight is frozen. Two target sets:

- `attention`: the attention projections of every block (q, k, v and o, or the fused ones);
- `all-linear`: peft's `target_modules="all-linear"`, every `nn.Linear` and `Conv1D` in the model
  except the output layer (`model.get_output_embeddings()`, tied or not). Routers and the routed
  experts of transformers 5's MoE blocks are parameters of their own modules, not linear layers, so
  peft leaves them alone; a shared expert and its gate are linear layers and are targeted.

One exception, read from peft 0.21.2 (`peft/utils/transformers_weight_conversion.py`): for the model
types whose experts transformers 5 fused (Mixtral, and through Qwen2-MoE's pattern Qwen3-MoE, OLMoE
and DeepSeek-V2/V3),
peft rewrites `all-linear` as transformers 4 named the layers. The linear layers become leaf names,
the old expert and router names (`w1`, `w3`, `w2`, `gate` for Mixtral; `gate_proj`, `up_proj`,
`down_proj`, `gate` for Qwen3-MoE) become target parameters: LoRA on each router's weight (rank r),
on the fused `gate_up_proj` (rank 2r, one r for each of the two layers fused) and on `down_proj`
(rank r), each expert with its own adapter. A linear layer whose leaf name is one of those old names
is no longer targeted: Qwen3-MoE's dense MLP layers (`mlp_only_layers`), DeepSeek's dense first
layers and its shared experts get no adapters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from core.datafiles import require
from core.model_spec import ModelSpec
from core.model_tensors import Tensor, model_tensors

LORA_TARGETS = ("attention", "all-linear")
MAX_LORA_RANK = 65_536  # ranks in use are 8 to 256; above a layer's width LoRA stops saving anything


# peft's _MOE_TARGET_MODULE_MAPPING keys (the transformers 4 names) for the model types it converts.
CONVERTED_MOE_NAMES = {
    "mixtral": ("w1", "w3", "w2", "gate"),
    "qwen3_moe": ("gate_proj", "up_proj", "down_proj", "gate"),
    "olmoe": ("gate_proj", "up_proj", "down_proj", "gate"),
    "deepseek_v2": ("gate_proj", "up_proj", "down_proj", "gate"),
    "deepseek_v3": ("gate_proj", "up_proj", "down_proj", "gate"),
}
# The fused expert tensors: how many transformers 4 layers each holds, so how many ranks its adapter gets.
FUSED_EXPERT_LAYERS = {"gate_up_proj": 2, "down_proj": 1}


@dataclass(frozen=True)
class LoraTarget:
    """A weight LoRA adapts: `rank_multiple` × r ranks for each of `copies` experts (1: a plain layer)."""

    tensor: Tensor
    in_features: int
    out_features: int
    rank_multiple: int = 1
    copies: int = 1

    def parameters(self, rank: int) -> int:
        """lora_A (in → ranks) and lora_B (ranks → out), no bias, with the ranks of every copy stacked."""
        return self.rank_multiple * rank * self.copies * (self.in_features + self.out_features)


def _leaf(tensor: Tensor) -> str:
    return tensor.name.rsplit(".", 2)[-2]


def _converted_moe_targets(spec: ModelSpec, old_names: tuple[str, ...]) -> Iterator[LoraTarget]:
    for t in model_tensors(spec):
        if t.layer and t.part != "output_layer" and _leaf(t) not in old_names:
            yield LoraTarget(t, *t.features)
        elif t.part == "experts":  # (experts, out, in), as transformers 5 stores them
            experts, out_features, in_features = t.shape
            fused = FUSED_EXPERT_LAYERS[t.name.rsplit(".", 1)[-1]]
            yield LoraTarget(t, in_features, out_features, rank_multiple=fused, copies=experts)
        elif t.name.endswith(
            ".mlp.gate.weight"
        ):  # the router: one score per expert, a weight of its own module
            out_features, in_features = t.shape
            yield LoraTarget(t, in_features, out_features)


# Kept per architecture and target set: the phase model asks once per block of every step it works out
# (a walk over Llama-3-8B's tensors takes about 2 ms, 64 of them a step), and "Will it fit?" works out
# dozens of steps of one model.
@lru_cache(maxsize=256)
def lora_targets(spec: ModelSpec, targets: str) -> tuple[LoraTarget, ...]:
    """The weights LoRA adapts for `targets`, in the order the model creates them."""
    require(
        targets in LORA_TARGETS, f"LoRA targets must be one of {', '.join(LORA_TARGETS)}, not {targets!r}."
    )
    if targets == "all-linear" and spec.model_type in CONVERTED_MOE_NAMES:
        return tuple(_converted_moe_targets(spec, CONVERTED_MOE_NAMES[spec.model_type]))
    return tuple(
        LoraTarget(t, *t.features)
        for t in model_tensors(spec)
        if t.layer and t.part != "output_layer" and (targets == "all-linear" or t.part == "attention")
    )


def check_lora_rank(rank: int) -> int:
    """`rank` if it is a LoRA rank we count; a ValueError a learner can read otherwise."""
    require(
        isinstance(rank, int) and not isinstance(rank, bool) and 1 <= rank <= MAX_LORA_RANK,
        f"The LoRA rank must be a whole number from 1 to {MAX_LORA_RANK:,}, not {rank!r}.",
    )
    return rank


def lora_parameters(spec: ModelSpec, rank: int, targets: str) -> int:
    """Trainable parameters peft adds: r × (in + out) for each targeted layer (lora_A and lora_B, no bias)."""
    check_lora_rank(rank)
    return sum(target.parameters(rank) for target in lora_targets(spec, targets))
