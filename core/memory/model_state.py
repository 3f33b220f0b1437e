"""The model state one GPU holds for a training method (full, LoRA or QLoRA) spread over N GPUs.

Full training trains every parameter in the precision convention's bytes. LoRA freezes the base
weights, stored in the convention's weight bytes (`base_weight_bytes`), and trains peft's adapters:
peft upcasts BF16 and FP16 adapters to FP32 (`cast_adapter_dtype`, on by default), so each adapter
parameter keeps 4 bytes of weight and 4 of gradient (a gradient has its parameter's dtype), no
master copy, and optimizer state in FP32 (PyTorch's AdamW keeps its moments in the parameter's
dtype). QLoRA trains the same adapters over a base stored as bitsandbytes' NF4 with BF16 for the
rest (`core.memory.qlora`; peft's `prepare_model_for_kbit_training` would upcast that rest to FP32,
which is not counted here). Full training with `freeze_blocks` K > 0 freezes the embeddings (and a
tied output layer with them) and the first K blocks: frozen weights stay in the convention's bytes
with no gradient, master copy or state. With tensor parallelism each GPU counts its own shard of every
tensor and adapter (`core.memory.tensor_split`), and sharding then divides these terms among the
`gpus / tensor_parallel` data-parallel replicas (`core.memory.sharding`).

bitsandbytes' AdamW8bit (`bitsandbytes/optim/optimizer.py`, `Optimizer2State.init_state`) keeps, for
a tensor of n ≥ `min_8bit_size` (4096) values, two uint8 moments (n bytes each) and one FP32 absmax per
block of 256 values for each (blockwise); a smaller tensor keeps two FP32 moments. The two 256-entry
FP32 quantization maps (`qmap1`, `qmap2`) are shared by every tensor, so they count once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from core.memory.finetune import lora_targets
from core.memory.qlora import stored_bytes
from core.memory.setup import ADAPTED, StepSetup, TrainingMethod
from core.memory.sharding import (
    SHARDED_TERMS,
    ModelStatePerGpu,
    StateBytesPerParameter,
    block_bytes,
    block_of,
    gathered_block_bytes,
    gradient_bucket_bytes,
    model_state_per_gpu,
)
from core.memory.tensor_split import lora_shard_values, per_gpu_bytes_of, sharded_tensors, vocab_rows
from core.model_tensors import Tensor

ADAPTER_BYTES = 4  # FP32: peft's cast_adapter_dtype upcasts BF16/FP16 adapters
FP32_BYTES = 4
MIN_8BIT_SIZE = 4096  # bitsandbytes' min_8bit_size: smaller tensors keep 32-bit state
EIGHT_BIT_BLOCK = 256  # values per FP32 absmax of the blockwise 8-bit state
QMAP_VALUES = 256  # entries of each of the two shared quantization maps
STATE_TENSORS = 2  # AdamW8bit's two moments


def adamw8bit_state_bytes(values: int) -> int:
    """bitsandbytes AdamW8bit's state for one tensor of `values` values, quantization maps aside."""
    if values < MIN_8BIT_SIZE:
        return STATE_TENSORS * FP32_BYTES * values
    return STATE_TENSORS * (values + FP32_BYTES * math.ceil(values / EIGHT_BIT_BLOCK))


def optimizer_state_bytes(setup: StepSetup, sizes: tuple[int, ...], value_bytes: int) -> float:
    """The optimizer state of trainable tensors of `sizes` values, all GPUs together."""
    if setup.optimizer != "adamw8bit":
        return float(sum(sizes) * value_bytes * setup.state_values)
    maps = STATE_TENSORS * FP32_BYTES * QMAP_VALUES if max(sizes, default=0) >= MIN_8BIT_SIZE else 0
    return float(sum(adamw8bit_state_bytes(n) for n in sizes) + maps)


def frozen(tensor: Tensor, method: TrainingMethod) -> bool:
    """Whether full training with `method.freeze_blocks` keeps `tensor` frozen: the embeddings and the
    first K blocks (none when K is 0)."""
    if method.freeze_blocks == 0:
        return False
    block = block_of(tensor.name)
    return tensor.part == "embeddings" if block is None else block < method.freeze_blocks


def _trainable_tensors(setup: StepSetup, method: TrainingMethod, t: int) -> Iterator[tuple[int | None, int]]:
    """(block or None, values) of every trainable tensor one GPU of a tensor-parallel group of `t` holds
    (the whole model's for t = 1): the model's, or peft's lora_A and lora_B."""
    if method.method in ADAPTED:
        for target in lora_targets(setup.model, method.lora_targets):
            block = block_of(target.tensor.name)
            for values in lora_shard_values(target, method.lora_rank, setup.model, t):
                yield block, values
        return
    for tensor in sharded_tensors(setup.model, t):
        if not frozen(tensor, method):
            yield block_of(tensor.name), tensor.numel


def _base_bytes(tensor: Tensor, setup: StepSetup, method: str) -> float:
    """Bytes a base weight tensor is stored in: NF4 or BF16 for QLoRA, else the convention's bytes."""
    return float(stored_bytes(tensor) if method == "qlora" else tensor.numel * setup.convention.weight_bytes)


@dataclass(frozen=True)
class RunModelState:
    """A run's model state on one GPU: what it trains, what it keeps frozen, and two transients."""

    trainable_parameters: int  # the whole model's, as peft counts them (not one GPU's shard)
    trainable_per_gpu: int  # one GPU's tensor-parallel shard of them (all of them on one GPU)
    head_parameters: int  # one GPU's share of the output layer (or the embedding tied to it) if it trains
    base_weight_bytes: float  # the frozen weights as stored, on all GPUs together (0 for full training)
    per_gpu: ModelStatePerGpu
    gradient_buckets_bytes: float  # DDP's flat copies of the gradients
    gathered_block_bytes: float  # FSDP's (and ZeRO-3's) full weights of the running and the next block
    gathered_root_bytes: float  # FSDP: the root module's weights (embeddings, final norm, output layer)
    reduce_scatter_bytes: float  # FSDP: a block's full gradients and the reduce-scatter input they fill
    trainable_by_block: Mapping[int, int]  # trainable values in each block (0 = nearest the input)
    head_trains: bool  # whether the output layer (or the embedding tied to it) has a gradient
    largest_trainable_parameters: int  # values of the largest trainable tensor
    state_value_bytes: int  # bytes of one optimizer-state value as torch.optim keeps it


def _per_parameter(setup: StepSetup, method: str) -> StateBytesPerParameter:
    """Bytes a trainable parameter keeps of weights, gradients and master copy; the optimizer state is
    counted tensor by tensor (`optimizer_state_bytes`), since AdamW8bit's depends on each tensor's size."""
    c = setup.convention
    if method in ADAPTED:
        return StateBytesPerParameter(ADAPTER_BYTES, ADAPTER_BYTES, 0, 0)
    return StateBytesPerParameter(c.weight_bytes, c.gradient_bytes, c.master_bytes, 0)


def _block_weight_bytes(setup: StepSetup, method: TrainingMethod) -> dict[int, float]:
    """Each block's full weights as FSDP gathers them (a tensor-parallel shard's block): base weights as
    stored, and adapters in FP32."""
    t = method.tensor_parallel
    blocks = block_bytes(
        setup.model,
        per_gpu_bytes_of(setup.model, t, lambda tensor: _base_bytes(tensor, setup, method.method)),
    )
    if method.method in ADAPTED:
        for target in lora_targets(setup.model, method.lora_targets):
            block = block_of(target.tensor.name)
            if block is not None:
                values = lora_shard_values(target, method.lora_rank, setup.model, t)
                blocks[block] += sum(values) * ADAPTER_BYTES
    return blocks


def _gathered_root_bytes(setup: StepSetup, method: TrainingMethod) -> float:
    """FSDP2's root module (what no block holds) stays gathered from its forward to its backward:
    `fully_shard` leaves the root unsharded after forward (`_fsdp_state.py`, `_lazy_init`)."""
    if method.sharding != "fsdp":
        return 0.0
    return float(
        sum(
            _base_bytes(t, setup, method.method)
            for t in sharded_tensors(setup.model, method.tensor_parallel)
            if block_of(t.name) is None
        )
    )


def _reduce_scatter_bytes(by_block: Mapping[int, int], gradient_bytes: int, sharding: str) -> float:
    """FSDP2's `foreach_reduce` (`_fsdp_collectives.py`) copies a block's full gradients into the
    reduce-scatter input before it frees them: twice the largest block's gradients, for a moment."""
    if sharding not in ("fsdp", "shard_grad_op"):
        return 0.0
    return float(2 * max(by_block.values(), default=0) * gradient_bytes)


def _frozen_weight_bytes(setup: StepSetup, method: TrainingMethod, t: int) -> float:
    """The frozen weights as stored, of the whole model (t = 1) or one GPU's tensor-parallel shard: the
    whole base model (LoRA, QLoRA) or the frozen blocks."""
    tensors = sharded_tensors(setup.model, t)
    if method.method in ADAPTED:
        return float(sum(_base_bytes(tensor, setup, method.method) for tensor in tensors))
    weight_bytes = setup.convention.weight_bytes
    return float(sum(tensor.numel * weight_bytes for tensor in tensors if frozen(tensor, method)))


def _head_trains(setup: StepSetup, method: TrainingMethod) -> bool:
    """Full training trains the output layer, unless it is the embedding and the embeddings are frozen."""
    return method.method == "full" and not (setup.model.tied_embeddings and method.freeze_blocks > 0)


def run_model_state(setup: StepSetup, method: TrainingMethod) -> RunModelState:
    """The model state one GPU holds for `setup` trained by `method`, term by term."""
    tensors = tuple(_trainable_tensors(setup, method, method.tensor_parallel))
    sizes = tuple(values for _, values in tensors)
    trainable = sum(sizes)  # on one GPU of a tensor-parallel group
    by_block: dict[int, int] = {}
    for block, values in tensors:
        if block is not None:
            by_block[block] = by_block.get(block, 0) + values
    per_parameter = _per_parameter(setup, method.method)
    value_bytes = ADAPTER_BYTES if method.method in ADAPTED else setup.convention.state_bytes
    per_gpu = model_state_per_gpu(
        trainable_parameters=trainable,
        per_parameter=per_parameter,
        frozen_weight_bytes=_frozen_weight_bytes(setup, method, method.tensor_parallel),
        gpus=method.data_parallel,
        sharding=method.sharding,
    )
    state = optimizer_state_bytes(setup, sizes, value_bytes)
    if "optimizer_state" in SHARDED_TERMS[method.sharding]:
        state /= method.data_parallel
    return RunModelState(
        trainable_parameters=sum(values for _, values in _trainable_tensors(setup, method, 1)),
        trainable_per_gpu=trainable,
        head_parameters=(
            vocab_rows(setup.model.vocab, method.tensor_parallel) * setup.model.hidden
            if _head_trains(setup, method)
            else 0
        ),
        base_weight_bytes=_frozen_weight_bytes(setup, method, 1),
        per_gpu=replace(per_gpu, optimizer_state=state),
        gradient_buckets_bytes=gradient_bucket_bytes(trainable, per_parameter.gradients, method.sharding),
        gathered_block_bytes=gathered_block_bytes(_block_weight_bytes(setup, method), method.sharding),
        gathered_root_bytes=_gathered_root_bytes(setup, method),
        reduce_scatter_bytes=_reduce_scatter_bytes(by_block, per_parameter.gradients, method.sharding),
        trainable_by_block=by_block,
        head_trains=_head_trains(setup, method),
        largest_trainable_parameters=max(sizes, default=0),
        state_value_bytes=value_bytes,
    )
