"""The model state one GPU holds for a training method (full, LoRA or QLoRA) spread over N GPUs.

Full training trains every parameter in the precision convention's bytes. LoRA freezes the base
weights, stored in the convention's weight bytes (`base_weight_bytes`), and trains peft's adapters:
peft upcasts BF16 and FP16 adapters to FP32 (`cast_adapter_dtype`, on by default), so each adapter
parameter keeps 4 bytes of weight and 4 of gradient (a gradient has its parameter's dtype), no
master copy, and optimizer state in FP32 (PyTorch's AdamW keeps its moments in the parameter's
dtype). QLoRA trains the same adapters over a base stored as bitsandbytes' NF4 with BF16 for the
rest (`core.memory.qlora`; peft's `prepare_model_for_kbit_training` would upcast that rest to FP32,
which is not counted here). Sharding then divides these terms among the GPUs (`core.memory.sharding`).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.memory.finetune import lora_parameters, lora_targets
from core.memory.qlora import stored_bytes
from core.memory.setup import ADAPTED, StepSetup, TrainingMethod
from core.memory.sharding import (
    ModelStatePerGpu,
    StateBytesPerParameter,
    block_bytes,
    block_of,
    gathered_block_bytes,
    gradient_bucket_bytes,
    model_state_per_gpu,
)
from core.model_tensors import Tensor, model_tensors

ADAPTER_BYTES = 4  # FP32: peft's cast_adapter_dtype upcasts BF16/FP16 adapters


def _base_bytes(tensor: Tensor, setup: StepSetup, method: str) -> float:
    """Bytes a base weight tensor is stored in: NF4 or BF16 for QLoRA, else the convention's bytes."""
    return float(stored_bytes(tensor) if method == "qlora" else tensor.numel * setup.convention.weight_bytes)


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
    if method in ADAPTED:
        return StateBytesPerParameter(ADAPTER_BYTES, ADAPTER_BYTES, 0, ADAPTER_BYTES * setup.state_values)
    return StateBytesPerParameter(
        c.weight_bytes, c.gradient_bytes, c.master_bytes, c.state_bytes * setup.state_values
    )


def _block_weight_bytes(setup: StepSetup, method: TrainingMethod) -> dict[int, float]:
    """Each block's full weights as FSDP gathers them: base weights as stored, and adapters in FP32."""
    blocks = block_bytes(setup.model, lambda tensor: _base_bytes(tensor, setup, method.method))
    if method.method in ADAPTED:
        for target in lora_targets(setup.model, method.lora_targets):
            block = block_of(target.tensor.name)
            if block is not None:
                blocks[block] += target.parameters(method.lora_rank) * ADAPTER_BYTES
    return blocks


def run_model_state(setup: StepSetup, method: TrainingMethod) -> RunModelState:
    """The model state one GPU holds for `setup` trained by `method`, term by term."""
    adapted = method.method in ADAPTED
    trainable = setup.parameters
    base_bytes = 0.0
    if adapted:
        trainable = lora_parameters(setup.model, method.lora_rank, method.lora_targets)
        base_bytes = sum(_base_bytes(t, setup, method.method) for t in model_tensors(setup.model))
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
