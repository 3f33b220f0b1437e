"""One GPU's share of a model's weights under tensor parallelism over t GPUs (Megatron-LM; Shoeybi et al.
2019, section 3), tensor by tensor, as `core.memory.model_state` counts model state per GPU:

- column-parallel layers (q, k, v or a fused qkv, DeepSeek's per-head up-projections, gate, up or a fused
  gate-up, an MLP's first layer, each routed expert's gate-up) keep 1/t of their output rows and of
  their biases;
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
column-parallel, so each splits where its layer does. What a GPU keeps of activations under tensor
and sequence parallelism is `core.memory.tensor_parallel`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace

from core.datafiles import require
from core.memory.finetune import LoraTarget, lora_targets
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
        "q_b_proj",  # DeepSeek's latent attention: the up-projections to every head split by head;
        "kv_b_proj",  # the latents themselves (q_a_proj, kv_a_proj_with_mqa) stay whole
    }
)
ROW_PARALLEL = frozenset({"o_proj", "out_proj", "dense", "c_proj", "down_proj", "dense_4h_to_h", "fc2"})
VOCAB_PARALLEL = frozenset({"embed_tokens", "wte", "embed_in", "word_embeddings", "lm_head"})
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


def lora_shard_values(target: LoraTarget, rank: int, spec: ModelSpec, t: int) -> tuple[int, int]:
    """Values one GPU keeps of `target`'s lora_A and lora_B: each splits on the side its layer splits."""
    split, in_features, out_features = split_of(target.tensor), target.in_features, target.out_features
    if split == "column":
        out_features = _column_rows(target.tensor, out_features, spec, t)
    elif split == "row":
        in_features = _even(in_features, t, target.tensor, spec)
    ranks = target.rank_multiple * rank * target.copies
    return ranks * in_features, ranks * out_features


def tensor_parallel_lora_parameters(spec: ModelSpec, rank: int, targets: str, t: int) -> int:
    """LoRA parameters one of t tensor-parallel GPUs holds (peft's `LoraParallelLinear`)."""
    return sum(sum(lora_shard_values(target, rank, spec, t)) for target in lora_targets(spec, targets))
