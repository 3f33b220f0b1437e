"""The models and optimizers tools/measure_gpu.py fine-tunes: LoRA and QLoRA as peft and bitsandbytes
build them, frozen blocks, and AdamW (PyTorch's or bitsandbytes' 8-bit one) over what trains.

LoRA: the model is built from its config as for full training, then wrapped by peft's
`get_peft_model` with `LoraConfig(r, lora_alpha=2r, target_modules, lora_dropout=0, bias="none")`.
The `attention` target set is the module names `core.memory.finetune.lora_targets` lists, given in
full because a leaf name can be ambiguous (GPT-2's `c_proj` is both the attention output and an MLP
layer); `all-linear` is peft's own keyword. peft keeps the adapters in FP32 over a BF16 base.

QLoRA: nothing may be downloaded, so a random BF16 model built from the config is handed to
transformers' loader as a state dict with `BitsAndBytesConfig(load_in_4bit, nf4, double quantization,
BF16 compute)`. The loader swaps the linear layers for `Linear4bit` (`replace_with_bnb_linear`) and
bitsandbytes quantizes each weight as it lands on the device: the path `from_pretrained` takes for a
real checkpoint. peft's `prepare_model_for_kbit_training` upcasts every weight that is not NF4 to FP32,
which the phase model does not count, so it runs only when asked and the CSV says whether it did.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import Any

import torch

from core.memory.finetune import lora_targets
from core.memory.setup import TrainingMethod
from core.memory.sharding import block_of
from core.model_spec import ModelSpec
from core.model_tensors import model_tensors

OPTIMIZERS = ("adamw", "adamw8bit")
LEARNING_RATE = 1e-5  # as the H200 reference ran; the value changes no memory


def hf_config(raw: Mapping[str, Any]) -> Any:
    """transformers' config for the config.json `raw`, with the generation cache off as in training."""
    from transformers import AutoConfig  # test-only dependency

    config = AutoConfig.for_model(**dict(raw))
    config.use_cache = False
    return config


def peft_target_modules(spec: ModelSpec, targets: str) -> list[str] | str:
    """What peft's `target_modules` gets for `targets`: our attention layers by full name, or peft's
    `all-linear`."""
    if targets == "all-linear":
        return "all-linear"
    return [target.tensor.name.removesuffix(".weight") for target in lora_targets(spec, targets)]


def with_lora(model: torch.nn.Module, spec: ModelSpec, training: TrainingMethod) -> torch.nn.Module:
    """`model` wrapped by peft's LoRA of `training`'s rank on its targets (the base frozen)."""
    import peft  # test-only dependency

    config = peft.LoraConfig(
        r=training.lora_rank,
        lora_alpha=2 * training.lora_rank,  # the scale changes no memory
        target_modules=peft_target_modules(spec, training.lora_targets),
        lora_dropout=0.0,
        bias="none",
    )
    return peft.get_peft_model(model, config)


def nf4_model(raw: Mapping[str, Any], device: torch.device, attn: str) -> torch.nn.Module:
    """The model of config `raw` with random weights, its linear layers in NF4 on `device` (QLoRA's base)."""
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig  # test-only dependency

    config = hf_config(raw)
    with device:  # BF16 values to quantize; the loader's quantizer reads them from this state dict
        dense = AutoModelForCausalLM.from_config(config, attn_implementation=attn, dtype=torch.bfloat16)
    quantization = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
    model = type(dense).from_pretrained(
        None,
        config=config,
        state_dict=dense.state_dict(),
        quantization_config=quantization,
        device_map={"": str(device)},
        dtype=torch.bfloat16,
        attn_implementation=attn,
    )
    del dense
    gc.collect()  # the BF16 copy must be gone before the weights are read
    return model


def prepare_for_kbit(model: torch.nn.Module) -> torch.nn.Module:
    """peft's `prepare_model_for_kbit_training`, its own gradient checkpointing left to the setup."""
    import peft  # test-only dependency

    return peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)


def frozen_names(spec: ModelSpec, blocks: int) -> set[str]:
    """Tensors that stay frozen when the first `blocks` blocks are: those blocks and the embeddings
    (none when no block is: full training)."""
    if blocks == 0:
        return set()
    return {t.name for t in model_tensors(spec) if t.part == "embeddings" or _in_first(t.name, blocks)}


def _in_first(tensor_name: str, blocks: int) -> bool:
    block = block_of(tensor_name)
    return block is not None and block < blocks


def freeze(model: torch.nn.Module, names: set[str]) -> None:
    """Stop gradients for the named parameters (a tied output layer shares its embedding's freeze)."""
    for name, parameter in model.named_parameters():
        if name in names:
            parameter.requires_grad_(False)


def trained(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """The parameters that get gradients: the only ones the optimizer is given."""
    return [p for p in model.parameters() if p.requires_grad]


def parameter_counts(model: torch.nn.Module) -> tuple[int, int]:
    """(base-model parameters, trainable parameters): NF4 weights counted as the values they hold."""
    count = getattr(model, "get_nb_trainable_parameters", None)
    if count is not None:  # peft's own count knows that a packed NF4 byte holds two values
        trainable, every = count()
        return int(every) - int(trainable), int(trainable)
    return sum(p.numel() for p in model.parameters()), sum(p.numel() for p in trained(model))


def make_optimizer(params: list[torch.nn.Parameter], optimizer: str, impl: str) -> torch.optim.Optimizer:
    """AdamW over `params`: PyTorch's in `impl`'s way, or bitsandbytes' AdamW8bit."""
    if optimizer == "adamw8bit":
        import bitsandbytes as bnb  # test-only dependency

        return bnb.optim.AdamW8bit(params, lr=LEARNING_RATE)
    if impl == "fused":
        return torch.optim.AdamW(params, lr=LEARNING_RATE, fused=True)
    return torch.optim.AdamW(params, lr=LEARNING_RATE, foreach=impl == "foreach")
