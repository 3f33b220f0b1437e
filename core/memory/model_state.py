"""The model state one GPU holds for a training method (full or LoRA) spread over N GPUs.

Full training trains every parameter in the precision convention's bytes. LoRA freezes the base
weights, stored in the convention's weight bytes (`base_weight_bytes`), and trains peft's adapters:
peft upcasts BF16 and FP16 adapters to FP32 (`cast_adapter_dtype`, on by default), so each adapter
parameter keeps 4 bytes of weight and 4 of gradient (a gradient has its parameter's dtype), no
master copy, and optimizer state in FP32 (PyTorch's AdamW keeps its moments in the parameter's
dtype). Sharding then divides these terms among the GPUs (`core.memory.sharding`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from core.datafiles import require
from core.memory.finetune import LORA_TARGETS, check_lora_rank, lora_parameters, lora_targets
from core.memory.setup import StepSetup
from core.memory.sharding import (
    ModelStatePerGpu,
    StateBytesPerParameter,
    block_of,
    block_parameters,
    check_sharding,
    gathered_block_bytes,
    gradient_bucket_bytes,
    model_state_per_gpu,
)

METHODS = ("full", "lora")
ADAPTER_BYTES = 4  # FP32: peft's cast_adapter_dtype upcasts BF16/FP16 adapters


@dataclass(frozen=True)
class TrainingMethod:
    """What is trained and over how many GPUs: the method, LoRA's rank and targets, the sharding."""

    method: str = "full"
    lora_rank: int = 16
    lora_targets: str = "attention"
    gpus: int = 1
    sharding: str = "none"

    def __post_init__(self) -> None:
        require(
            self.method in METHODS, f"The method must be one of {', '.join(METHODS)}, not {self.method!r}."
        )
        check_lora_rank(self.lora_rank)
        require(
            self.lora_targets in LORA_TARGETS,
            f"LoRA targets must be one of {', '.join(LORA_TARGETS)}, not {self.lora_targets!r}.",
        )
        check_sharding(self.sharding, self.gpus)


@dataclass(frozen=True)
class RunModelState:
    """A run's model state on one GPU: what it trains, what it keeps frozen, and two transients."""

    trainable_parameters: int
    base_weight_bytes: float  # the frozen weights as stored, on all GPUs together (0 for full training)
    per_gpu: ModelStatePerGpu
    gradient_buckets_bytes: float  # DDP's flat copies of the gradients
    gathered_block_bytes: float  # FSDP's full weights of the running and the prefetched block


def _per_parameter(setup: StepSetup, method: str) -> StateBytesPerParameter:
    c = setup.convention
    if method == "lora":
        return StateBytesPerParameter(ADAPTER_BYTES, ADAPTER_BYTES, 0, ADAPTER_BYTES * setup.state_values)
    return StateBytesPerParameter(
        c.weight_bytes, c.gradient_bytes, c.master_bytes, c.state_bytes * setup.state_values
    )


def _block_weight_bytes(setup: StepSetup, method: TrainingMethod) -> dict[int, float]:
    """Each block's full weights as FSDP gathers them: base weights, and LoRA's adapters in FP32."""
    blocks = {b: float(p * setup.convention.weight_bytes) for b, p in block_parameters(setup.model).items()}
    if method.method == "lora":
        adapters: Counter[int] = Counter()
        for target in lora_targets(setup.model, method.lora_targets):
            block = block_of(target.tensor.name)
            if block is not None:
                adapters[block] += target.parameters(method.lora_rank)
        for block, count in adapters.items():
            blocks[block] += count * ADAPTER_BYTES
    return blocks


def run_model_state(setup: StepSetup, method: TrainingMethod) -> RunModelState:
    """The model state one GPU holds for `setup` trained by `method`, term by term."""
    lora = method.method == "lora"
    trainable = (
        lora_parameters(setup.model, method.lora_rank, method.lora_targets) if lora else setup.parameters
    )
    base_bytes = float(setup.parameters * setup.convention.weight_bytes) if lora else 0.0
    per_parameter = _per_parameter(setup, method.method)
    return RunModelState(
        trainable_parameters=trainable,
        base_weight_bytes=base_bytes,
        per_gpu=model_state_per_gpu(
            trainable_parameters=trainable,
            per_parameter=per_parameter,
            frozen_weight_bytes=base_bytes,
            gpus=method.gpus,
            sharding=method.sharding,
        ),
        gradient_buckets_bytes=gradient_bucket_bytes(trainable, per_parameter.gradients, method.sharding),
        gathered_block_bytes=gathered_block_bytes(_block_weight_bytes(setup, method), method.sharding),
    )
