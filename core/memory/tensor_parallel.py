"""One GPU's share of a step under tensor parallelism with sequence parallelism, over t GPUs.

Megatron-LM splits each block's matrices over the t GPUs of a tensor-parallel group (Shoeybi et al.
2019, section 3) and, with sequence parallelism, the tensors between them along the sequence
(Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
section 4.2.2). Weights, per GPU:

- column-parallel layers (q, k, v or a fused qkv, gate, up or a fused gate-up, an MLP's first layer,
  each routed expert's gate-up) keep 1/t of their output rows and of their biases;
- row-parallel layers (the attention output, an MLP's last layer, each routed expert's down) keep
  1/t of their input columns; their biases are added after the all-reduce, so every GPU keeps them;
- the token embedding and the output layer are vocab-parallel: 1/t of the vocabulary, rounded up
  (Megatron pads the vocabulary further, to a multiple of 128·t; that padding is left out so that
  t = 1 is the model itself);
- norms, routers, a shared expert's one-output gate and learned positions stay whole on every GPU;
- KV heads split like the query heads when t divides them; with fewer KV heads than GPUs each GPU
  keeps one KV head's projections (as vLLM's `QKVParallelLinear` does; Megatron itself refuses).

transformers 5.17's tensor-parallel plans (`base_model_tp_plan`) split every layer they name the
same way (tests/core/test_memory_tensor_parallel_code.py checks it). Every linear layer must split
evenly: Megatron's `divide` asserts it, and so does `check_tensor_parallel`. LoRA adapters follow
peft's `LoraParallelLinear` (`peft/tuners/lora/tp_layer.py`): on a row-parallel layer `lora_A` is
row-parallel too and `lora_B` whole, on a column-parallel one `lora_A` is whole and `lora_B`
column-parallel, so each splits where its layer does. Model state is then the state of that shard,
shared out by ZeRO or FSDP over the `gpus / t` data-parallel replicas (`tensor_parallel_model_state`);
FSDP gathers a shard's block (`per_gpu_bytes_of`).

Saved activations, per GPU (`tensor_parallel_count`): with sequence parallelism every tensor a block
keeps is divided by t (section 4.2.2: the norms and dropouts run on s/t of the sequence, attention
on a/t of the heads, the MLP on 1/t of its width), so the paper's GPT block keeps
s·b·h·(34/t + 5·a·s/(h·t)) bytes. The exceptions are counted as they are:

- a column-parallel layer's weight gradient needs its all-gathered input; Megatron keeps only the
  s/t shard and gathers it again in backward (end of section 4.2.2), so the gathered input is a
  transient: Megatron's one all-gather buffer (`get_global_memory_buffer()`, named "mpu"), a full
  block input in size, live while any column-parallel layer runs, forward and backward;
- K and V are kept for each KV head a GPU holds: with fewer KV heads than GPUs that is more than
  1/t, unless attention copies the KV heads out to every query head first;
- the logits, the loss's FP32 log-softmax and their gradients are vocab-parallel (1/t of the
  rounded-up vocabulary); the final norm, the output layer's input and the embedding's dropout mask
  are sequence-split; the token ids and labels stay whole on every GPU (each needs all the labels
  for its part of the vocabulary);
- the eager causal mask (one s × s matrix per sequence, shared by the heads) stays whole;
- autocast's BF16 weight copies are copies of the GPU's own shard.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace

from core.datafiles import require
from core.memory.count import ActivationCount
from core.memory.finetune import LoraTarget, lora_targets
from core.memory.hf_stack import ID_BYTES, sdpa_kernel
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup, TrainingMethod
from core.memory.sharding import (
    ModelStatePerGpu,
    StateBytesPerParameter,
    block_bytes,
    block_of,
    model_state_per_gpu,
)
from core.model_spec import ModelSpec
from core.model_tensors import Tensor, model_tensors

# Layers by the name transformers gives them (the module's own name, the weight's last-but-one part).
COLUMN_PARALLEL = frozenset(
    {
        "q_proj",
        "k_proj",
        "v_proj",
        "qkv_proj",  # Phi-3: q, then k and v
        "query_key_value",  # GPT-NeoX
        "c_attn",  # GPT-2
        "gate_proj",
        "up_proj",
        "gate_up_proj",  # Phi-3's MLP and transformers 5's routed experts: gate and up, each split
        "c_fc",
        "dense_h_to_4h",
        "fc1",
    }
)
ROW_PARALLEL = frozenset({"o_proj", "dense", "c_proj", "down_proj", "dense_4h_to_h", "fc2"})
VOCAB_PARALLEL = frozenset({"embed_tokens", "wte", "embed_in", "lm_head"})
KV_PROJECTIONS = frozenset({"k_proj", "v_proj"})


def check_tensor_parallel(spec: ModelSpec, t: int) -> int:
    """`t` if `spec` splits over t tensor-parallel GPUs; a ValueError a learner can read otherwise."""
    require(
        isinstance(t, int) and not isinstance(t, bool) and t >= 1,
        f"Tensor parallelism must be a whole number of GPUs, 1 or more, not {t!r}.",
    )
    require(
        spec.heads % t == 0 and (spec.kv_heads % t == 0 or t % spec.kv_heads == 0),
        f"{spec.name}'s {spec.heads} attention heads ({spec.kv_heads} KV heads) do not split over {t} "
        "tensor-parallel GPUs.",
    )
    for tensor in model_tensors(spec):
        shard(tensor, spec, t)  # raises where a layer's width does not split evenly
    return t


def _module(tensor: Tensor) -> str:
    """The module a tensor belongs to: `...mlp.up_proj.weight` → `up_proj`; a bare parameter (routed
    experts' `...experts.down_proj`) is its own name."""
    parts = tensor.name.split(".")
    return parts[-2] if parts[-1] in ("weight", "bias") and len(parts) > 1 else parts[-1]


def split_of(tensor: Tensor) -> str:
    """How tensor parallelism splits `tensor`: "column", "row", "vocab" or "replicated"."""
    module = _module(tensor)
    if module in VOCAB_PARALLEL:
        return "vocab"
    if module in COLUMN_PARALLEL:
        return "column"
    if module in ROW_PARALLEL:  # its bias is added after the all-reduce, so every GPU keeps all of it
        return "replicated" if tensor.name.endswith(".bias") else "row"
    return "replicated"


def vocab_rows(vocab: int, t: int) -> int:
    """Vocabulary rows one GPU keeps of a vocab-parallel table: 1/t, rounded up."""
    return math.ceil(vocab / t)


def _even(width: int, parts: int, tensor: Tensor, spec: ModelSpec) -> int:
    require(
        width % parts == 0,
        f"{spec.name}'s {tensor.name} is {width:,} wide, which does not split evenly over {parts} "
        "tensor-parallel GPUs.",
    )
    return width // parts


def _column_rows(tensor: Tensor, out_features: int, spec: ModelSpec, t: int) -> int:
    """Output rows one GPU keeps of a column-parallel layer."""
    module, kv_groups = _module(tensor), min(t, spec.kv_heads)
    if module in KV_PROJECTIONS:  # one KV head each when the GPUs outnumber them
        return _even(out_features, kv_groups, tensor, spec)
    if module == "qkv_proj":
        return spec.q_width // t + 2 * _even(spec.kv_width, kv_groups, tensor, spec)
    if module == "gate_up_proj":  # gate and up are stacked: each GPU keeps 1/t of each
        return 2 * _even(out_features // 2, t, tensor, spec)
    return _even(out_features, t, tensor, spec)


def _axes(tensor: Tensor) -> tuple[int, int]:
    """(output axis, input axis) of a weight: nn.Linear and the experts store out × in, Conv1D in × out."""
    if tensor.layer == "conv1d":
        return 1, 0
    return (0, 0) if len(tensor.shape) == 1 else (len(tensor.shape) - 2, len(tensor.shape) - 1)


def shard(tensor: Tensor, spec: ModelSpec, t: int) -> Tensor:
    """The part of `tensor` one of t tensor-parallel GPUs holds (the tensor itself where it is replicated)."""
    split = split_of(tensor)
    if split == "replicated":
        return tensor
    shape = list(tensor.shape)
    out_axis, in_axis = _axes(tensor)
    if split == "vocab":
        shape[0] = vocab_rows(shape[0], t)
    elif split == "column":
        shape[out_axis] = _column_rows(tensor, shape[out_axis], spec, t)
    else:
        shape[in_axis] = _even(shape[in_axis], t, tensor, spec)
    return replace(tensor, shape=tuple(shape))


def sharded_tensors(spec: ModelSpec, t: int) -> Iterator[Tensor]:
    """Every weight tensor of `spec` as one of t tensor-parallel GPUs holds it."""
    return (shard(tensor, spec, t) for tensor in model_tensors(spec))


def per_gpu_bytes_of(
    spec: ModelSpec, t: int, bytes_of: Callable[[Tensor], float]
) -> Callable[[Tensor], float]:
    """`bytes_of` for one GPU's shard of a tensor: what `core.memory.sharding.block_bytes` takes to give each
    block's bytes on one GPU, and so FSDP's `gathered_block_bytes` (FSDP gathers a shard's block)."""
    return lambda tensor: bytes_of(shard(tensor, spec, t))


def tensor_parallel_weight_bytes(spec: ModelSpec, t: int, bytes_of: Callable[[Tensor], float]) -> float:
    """One GPU's share of the weights, each shard counted as `bytes_of` says (a shard is a Tensor)."""
    return float(sum(bytes_of(tensor) for tensor in sharded_tensors(spec, t)))


def tensor_parallel_parameters(spec: ModelSpec, t: int) -> int:
    """Parameters one of t tensor-parallel GPUs holds, replicated ones included."""
    return sum(tensor.numel for tensor in sharded_tensors(spec, t))


def _lora_target_parameters(target: LoraTarget, rank: int, spec: ModelSpec, t: int) -> int:
    """One GPU's lora_A and lora_B for `target`: each splits on the side its layer splits."""
    split, in_features, out_features = split_of(target.tensor), target.in_features, target.out_features
    if split == "column":
        out_features = _column_rows(target.tensor, out_features, spec, t)
    elif split == "row":
        in_features = _even(in_features, t, target.tensor, spec)
    return target.rank_multiple * rank * target.copies * (in_features + out_features)


def tensor_parallel_lora_parameters(spec: ModelSpec, rank: int, targets: str, t: int) -> int:
    """LoRA parameters one of t tensor-parallel GPUs holds (peft's `LoraParallelLinear`)."""
    return sum(_lora_target_parameters(target, rank, spec, t) for target in lora_targets(spec, targets))


def tensor_parallel_block_bytes(
    spec: ModelSpec, method: TrainingMethod, *, base_bytes_of: Callable[[Tensor], float], adapter_bytes: int
) -> dict[int, float]:
    """Each block's weights on one GPU, by block number, as FSDP gathers them (`gathered_block_bytes`): the
    shard of its base weights as `base_bytes_of` stores them, and with LoRA the shard of its adapters."""
    t = method.tensor_parallel
    blocks = block_bytes(spec, per_gpu_bytes_of(spec, t, base_bytes_of))
    if method.adapted:
        for target in lora_targets(spec, method.lora_targets):
            block = block_of(target.tensor.name)
            if block is not None:
                blocks[block] += _lora_target_parameters(target, method.lora_rank, spec, t) * adapter_bytes
    return blocks


def tensor_parallel_model_state(
    spec: ModelSpec,
    method: TrainingMethod,
    *,
    per_parameter: StateBytesPerParameter,
    base_bytes_of: Callable[[Tensor], float],
) -> ModelStatePerGpu:
    """Model state on one GPU: its tensor-parallel shard's state (the adapters' shard and the frozen base's
    shard, as `base_bytes_of` stores it, for LoRA and QLoRA), sharded as `method.sharding` says over the
    `gpus / tensor_parallel` data-parallel replicas."""
    t = method.tensor_parallel
    if method.adapted:
        trainable = tensor_parallel_lora_parameters(spec, method.lora_rank, method.lora_targets, t)
        frozen = tensor_parallel_weight_bytes(spec, t, base_bytes_of)
    else:
        trainable, frozen = tensor_parallel_parameters(spec, t), 0.0
    return model_state_per_gpu(
        trainable_parameters=trainable,
        per_parameter=per_parameter,
        frozen_weight_bytes=frozen,
        gpus=method.data_parallel,
        sharding=method.sharding,
    )


def _block_matrix_share(spec: ModelSpec, t: int) -> float:
    """The share of the blocks' matrices and biases (no norms) one GPU holds: what autocast copies to BF16."""
    whole = held = 0
    for tensor in model_tensors(spec):
        if block_of(tensor.name) is not None and tensor.part != "norms":
            whole += tensor.numel
            held += shard(tensor, spec, t).numel
    return held / whole


def _kv_expanded(setup: StepSetup) -> bool:
    """Whether attention copies grouped KV heads out to every query head before it keeps them."""
    if setup.attention == "eager":
        return True
    return setup.stack == "hf" and sdpa_kernel(setup) == "math"


def replicated_kv_bytes(setup: StepSetup) -> float:
    """What one GPU keeps of K and V beyond 1/t of them: with fewer KV heads than GPUs, each GPU keeps a whole
    KV head over the whole sequence (attention runs on all of it), unless attention expanded them."""
    m, t = setup.model, setup.training.tensor_parallel
    if _kv_expanded(setup):
        return 0.0
    kept_width = m.kv_width // min(t, m.kv_heads)
    return float(2 * setup.tokens * COMPUTE_BYTES[setup.convention.compute] * (kept_width - m.kv_width / t))


def _outside(count: ActivationCount, setup: StepSetup) -> dict[str, float]:
    """What is kept outside the blocks on one GPU: the loss and the head's copy vocab-split, the rest
    sequence-split but for the token ids and labels, which every GPU keeps whole."""
    m, t = setup.model, setup.training.tensor_parallel
    vocab_share = vocab_rows(m.vocab, t) / m.vocab
    ids = float(setup.tokens * 2 * ID_BYTES) if setup.stack == "hf" else 0.0
    per_kind = {
        "loss": lambda kept: kept * vocab_share,
        "weight_copies": lambda kept: kept * vocab_share,
        "other": lambda kept: (kept - ids) / t + ids,
    }
    return {kind: per_kind[kind](kept) for kind, kept in count.outside.items()}


def all_gather_buffer_bytes(count: ActivationCount, setup: StepSetup) -> float:
    """Megatron's all-gather buffer under sequence parallelism: one whole block input (what a column-parallel
    layer gathers from the GPUs' s/t shards), live while any such layer runs; none on one GPU. `count` is
    the whole-model count."""
    return count.block_input_bytes if setup.training.tensor_parallel > 1 else 0.0


def tensor_parallel_count(count: ActivationCount, setup: StepSetup) -> ActivationCount:
    """One GPU's saved activations and transients of `count` (a whole-model count of `setup`'s stack) with
    tensor and sequence parallelism over `setup.training.tensor_parallel` GPUs; the module docstring says
    what is split how."""
    m, t = setup.model, setup.training.tensor_parallel
    matrix_share = _block_matrix_share(m, t)
    block = {
        kind: kept * matrix_share if kind == "weight_copies" else kept / t
        for kind, kept in count.block.items()
    }
    kv_kind = "attention" if "attention" in block else "activations"
    block[kv_kind] += replicated_kv_bytes(setup)
    vocab_share = vocab_rows(m.vocab, t) / m.vocab
    gathered = all_gather_buffer_bytes(count, setup)
    return ActivationCount(
        block=block,
        block_input_bytes=count.block_input_bytes / t,
        outside=_outside(count, setup),
        forward_block_transient_bytes=count.forward_block_transient_bytes / t + gathered,
        forward_shared_bytes=count.forward_shared_bytes,
        loss_forward_transient_bytes=count.loss_forward_transient_bytes * vocab_share + gathered,
        loss_backward_transient_bytes=count.loss_backward_transient_bytes * vocab_share + gathered,
        backward_block_transient_bytes=count.backward_block_transient_bytes / t + gathered,
    )
