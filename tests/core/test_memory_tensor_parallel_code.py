"""Tensor parallelism's split against the code that runs it: transformers 5.17's tensor-parallel plans
(`base_model_tp_plan` of each family's config) and peft 0.21.2's adapters (`peft/tuners/lora/tp_layer.py`).

peft's `LoraParallelLinear` wraps Megatron's `ColumnParallelLinear` and `RowParallelLinear` and builds its
lora_A and lora_B from the backend it is given. Megatron is not installed here, so the backend below is two
stand-ins with Megatron's constructor arguments and its split (`divide(output_size, t)` output rows for a
column-parallel layer, `divide(input_size, t)` input columns for a row-parallel one); which adapter matrix
is parallel and how wide it is comes from peft's own code.
"""

import re
import types

import pytest
import torch
from peft import LoraConfig
from peft.tuners.lora.tp_layer import LoraParallelLinear
from torch import nn
from transformers import CONFIG_MAPPING

from core.memory.finetune import lora_targets
from core.memory.tensor_split import split_of, tensor_parallel_lora_parameters
from core.model_config import parse_config
from core.model_spec import ModelSpec
from core.model_tensors import FAMILY_TENSORS, Tensor, model_tensors
from tests.core.test_memory_model_state import LLAMA

RANK = 8


def megatron_backend(t: int) -> types.SimpleNamespace:
    """Stand-ins for `megatron.core.tensor_parallel`'s two parallel linear layers over t GPUs, on meta."""

    class ColumnParallelLinear(nn.Module):
        def __init__(
            self, input_size, output_size, *, bias, gather_output=False, init_method=None, config=None
        ):
            super().__init__()
            assert output_size % t == 0  # Megatron's divide()
            self.input_size, self.output_size, self.gather_output = input_size, output_size, gather_output
            self.weight = nn.Parameter(torch.empty(output_size // t, input_size, device="meta"))

    class RowParallelLinear(nn.Module):
        def __init__(
            self,
            input_size,
            output_size,
            *,
            bias,
            input_is_parallel=True,
            skip_bias_add=False,
            init_method=None,
            config=None,
        ):
            super().__init__()
            assert input_size % t == 0
            self.input_size, self.output_size, self.input_is_parallel = (
                input_size,
                output_size,
                input_is_parallel,
            )
            self.weight = nn.Parameter(torch.empty(output_size, input_size // t, device="meta"))

    return types.SimpleNamespace(
        ColumnParallelLinear=ColumnParallelLinear, RowParallelLinear=RowParallelLinear
    )


def peft_adapter_parameters(spec: ModelSpec, targets: str, t: int) -> int:
    """lora_A and lora_B parameters peft builds on one GPU for every target of `spec`."""
    backend, total = megatron_backend(t), 0
    for target in lora_targets(spec, targets):
        layer = {"column": backend.ColumnParallelLinear, "row": backend.RowParallelLinear}[
            split_of(target.tensor)
        ]
        base = layer(target.in_features, target.out_features, bias=False)
        wrapped = LoraParallelLinear(
            base,
            "default",
            # No initialisation: peft 0.21.2's LoraParallelLinear never fills lora_bias, which init reads.
            config=LoraConfig(r=RANK, init_lora_weights=False),
            backend=backend,
            r=RANK,
            lora_alpha=2 * RANK,
            megatron_config=types.SimpleNamespace(),
        )
        total += sum(p.numel() for name, p in wrapped.named_parameters() if "lora_" in name)
    return total


NEOX = {
    "model_type": "gpt_neox",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "intermediate_size": 96,
    "vocab_size": 50,
}


@pytest.mark.parametrize(
    ("config", "t"),
    [(LLAMA, 2), (NEOX, 2), (NEOX, 4), (NEOX, 8)],
    ids=["llama-2", "neox-2", "neox-4", "neox-8"],
)
@pytest.mark.parametrize("targets", ["attention", "all-linear"])
def test_adapters_per_gpu_are_what_peft_builds_on_megatrons_layers(config, t, targets):
    spec = parse_config(config)
    assert tensor_parallel_lora_parameters(spec, RANK, targets, t) == peft_adapter_parameters(
        spec, targets, t
    )


# transformers' plan styles by the split they make of a module's weight (a row-wise bias is replicated).
PLAN_SPLITS = {
    "colwise": "column",
    "colwise_gather_output": "column",  # the same split, its output gathered after
    "packed_colwise": "column",  # gate and up stacked in one tensor, each split
    "rowwise": "row",
    "rowwise_split_input": "row",
    "embedding_rowwise": "vocab",
    "replicated_with_grad_allreduce": "replicated",
}
SMALL = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 16,
    "vocab_size": 40,
    "qk_layernorm": True,
    "num_local_experts": 2,
    "num_experts": 2,
    "num_experts_per_tok": 1,
    "moe_intermediate_size": 8,
    "shared_expert_intermediate_size": 8,
}


def planned_split(tensor: Tensor, plan: dict[str, str]) -> str | None:
    """The split transformers' plan gives `tensor`'s module (or parameter), None where the plan is silent."""
    module = re.sub(r"\.(weight|bias)$", "", tensor.name)
    for pattern, style in plan.items():
        block_pattern = re.escape(pattern).replace(r"\*", r"\d+")  # "layers.*.mlp" names every block
        if style in PLAN_SPLITS and re.search(r"(^|\.)" + block_pattern + "$", module):
            split = PLAN_SPLITS[style]
            return "replicated" if split == "row" and tensor.name.endswith(".bias") else split
    return None


# Families whose transformers 5.17 config has no tensor-parallel plan to compare with.
UNPLANNED = {"gpt2", "stablelm", "falcon", "bloom", "opt", "gpt_bigcode"}


def test_the_families_without_a_plan_are_the_ones_we_know():
    assert {f for f in FAMILY_TENSORS if not CONFIG_MAPPING[f]().base_model_tp_plan} == UNPLANNED


@pytest.mark.parametrize("model_type", [family for family in FAMILY_TENSORS if family not in UNPLANNED])
def test_every_layer_transformers_plans_splits_as_we_split_it(model_type):
    plan = CONFIG_MAPPING[model_type]().base_model_tp_plan or {}
    # DeepSeek's latent attention expands keys and values to every head: as many KV heads as heads.
    latent = {"num_key_value_heads": SMALL["num_attention_heads"]} if "deepseek" in model_type else {}
    spec = parse_config({"model_type": model_type, **SMALL, **latent})
    planned = {t.name: planned_split(t, plan) for t in model_tensors(spec) if planned_split(t, plan)}
    assert planned, f"no tensor of {model_type} matched its plan"
    assert planned == {
        name: split_of(next(t for t in model_tensors(spec) if t.name == name)) for name in planned
    }
