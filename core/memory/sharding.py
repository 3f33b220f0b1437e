"""Model state on each GPU when a run is spread over many: DDP, ZeRO stages 1 to 3 and FSDP.

Model state is four terms (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
Parameter Models", SC 2020, section 3.1 and figure 1): the weights the forward reads, their
gradients, the optimizer's FP32 master copy and its state (Adam's two moments). Data parallelism
with N GPUs divides some of them by N:

- `ddp` (and `none`, one GPU): every GPU holds all four. DDP also keeps its gradient buckets, flat
  copies of every gradient the all-reduce runs on (`gradient_as_bucket_view=False`, PyTorch's
  default), a fifth term the ZeRO paper's figure does not count;
- `zero1` (P_os): master copy and optimizer state sharded;
- `zero2` (P_os+g) and FSDP's `shard_grad_op`: gradients sharded too;
- `zero3` (P_os+g+p) and FSDP's `fsdp` (FULL_SHARD): weights sharded too. FSDP gathers a block's
  full weights just before it runs and prefetches the next block's meanwhile, so two blocks' full
  weights are live beside the shards: `gathered_block`, a transient. DeepSpeed's ZeRO-3 also gathers
  each module's weights before it runs and prefetches the next ones; it is counted as FSDP's two blocks.

Frozen weights (LoRA's base model) are weights with no gradient, master copy or state; they shard
only where the weights do.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.datafiles import require
from core.model_spec import ModelSpec
from core.model_tensors import Tensor, model_tensors

SHARDINGS = ("none", "ddp", "zero1", "zero2", "shard_grad_op", "zero3", "fsdp")
# Which model-state terms each scheme divides among the GPUs.
SHARDED_TERMS = {
    "none": frozenset(),
    "ddp": frozenset(),
    "zero1": frozenset({"master_weights", "optimizer_state"}),
    "zero2": frozenset({"master_weights", "optimizer_state", "gradients"}),
    "shard_grad_op": frozenset({"master_weights", "optimizer_state", "gradients"}),
    "zero3": frozenset({"master_weights", "optimizer_state", "gradients", "weights"}),
    "fsdp": frozenset({"master_weights", "optimizer_state", "gradients", "weights"}),
}
MAX_GPUS = 65_536
GATHERED_BLOCKS = 2  # FSDP's forward and backward prefetch: the block running and the next one
_BLOCK = re.compile(r"(?:^|\.)(?:layers|h)\.(\d+)\.")  # transformer blocks as model_tensors names them


@dataclass(frozen=True)
class StateBytesPerParameter:
    """Bytes one trainable parameter keeps for each model-state term (Adam: state counts both moments)."""

    weights: int
    gradients: int
    master_weights: int
    optimizer_state: int


@dataclass(frozen=True)
class ModelStatePerGpu:
    """The model state one GPU holds, term by term, in bytes."""

    weights: float
    gradients: float
    master_weights: float
    optimizer_state: float

    @property
    def total_bytes(self) -> float:
        """All four terms."""
        return self.weights + self.gradients + self.master_weights + self.optimizer_state

    def as_terms(self) -> dict[str, float]:
        """The terms by the names the phase model and the JSON use."""
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "master_weights": self.master_weights,
            "optimizer_state": self.optimizer_state,
        }


def check_sharding(sharding: str, gpus: int) -> None:
    """A ValueError a learner can read unless `sharding` over `gpus` GPUs is a run we count."""
    require(sharding in SHARDINGS, f"Sharding must be one of {', '.join(SHARDINGS)}, not {sharding!r}.")
    require(
        isinstance(gpus, int) and not isinstance(gpus, bool) and 1 <= gpus <= MAX_GPUS,
        f"The number of GPUs must be a whole number from 1 to {MAX_GPUS:,}, not {gpus!r}.",
    )
    require(
        sharding != "none" or gpus == 1,
        f"{gpus} GPUs need a sharding scheme: one of {', '.join(SHARDINGS[1:])}.",
    )


def model_state_per_gpu(
    *,
    trainable_parameters: int,
    per_parameter: StateBytesPerParameter,
    frozen_weight_bytes: float,
    gpus: int,
    sharding: str,
) -> ModelStatePerGpu:
    """What one of `gpus` GPUs holds under `sharding`: trainable parameters' four terms, frozen weights."""
    check_sharding(sharding, gpus)
    sharded = SHARDED_TERMS[sharding]

    def share(term: str, total_bytes: float) -> float:
        return total_bytes / gpus if term in sharded else float(total_bytes)

    p = trainable_parameters
    return ModelStatePerGpu(
        weights=share("weights", p * per_parameter.weights + frozen_weight_bytes),
        gradients=share("gradients", p * per_parameter.gradients),
        master_weights=share("master_weights", p * per_parameter.master_weights),
        optimizer_state=share("optimizer_state", p * per_parameter.optimizer_state),
    )


def gradient_bucket_bytes(trainable_parameters: int, gradient_bytes: int, sharding: str) -> float:
    """DDP's flat all-reduce buckets: a second copy of every gradient (0 for any other scheme)."""
    return float(trainable_parameters * gradient_bytes) if sharding == "ddp" else 0.0


def block_of(tensor_name: str) -> int | None:
    """The transformer block a tensor belongs to (as `model_tensors` names it), or None outside the blocks."""
    found = _BLOCK.search(tensor_name)
    return int(found.group(1)) if found else None


def block_bytes(spec: ModelSpec, bytes_of: Callable[[Tensor], float]) -> dict[int, float]:
    """Each transformer block's weights, by block number, each tensor counted as `bytes_of` says."""
    blocks: defaultdict[int, float] = defaultdict(float)
    for tensor in model_tensors(spec):
        block = block_of(tensor.name)
        if block is not None:
            blocks[block] += bytes_of(tensor)
    return dict(blocks)


def gathered_block_bytes(block_bytes: Mapping[int, float], sharding: str) -> float:
    """FSDP FULL_SHARD's and ZeRO-3's transient: the running and the prefetched block's full weights (0
    otherwise), from each block's full weight bytes; the largest block counts, as the step's peak would
    see it."""
    if sharding not in ("zero3", "fsdp"):
        return 0.0
    return float(GATHERED_BLOCKS * max(block_bytes.values()))
