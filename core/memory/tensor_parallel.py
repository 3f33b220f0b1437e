"""One GPU's saved activations and transients under tensor parallelism with sequence parallelism, over t
GPUs (Megatron-LM; Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", section 4.2.2). How the weights split is `core.memory.tensor_split`.
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

from core.memory.count import ActivationCount
from core.memory.hf_stack import sdpa_kernel, token_id_bytes
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup
from core.memory.sharding import block_of
from core.memory.tensor_split import shard, vocab_rows
from core.model_spec import ModelSpec
from core.model_tensors import model_tensors


def _block_matrix_share(spec: ModelSpec, t: int) -> float:
    """The share of the blocks' matrices (no norms or biases) one GPU holds: what autocast keeps in BF16."""
    whole = held = 0
    for tensor in model_tensors(spec):
        if block_of(tensor.name) is not None and tensor.part != "norms" and not tensor.name.endswith(".bias"):
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
    ids = float(token_id_bytes(setup)) if setup.stack == "hf" else 0.0
    per_kind = {
        "loss": lambda kept: kept * vocab_share,
        "weight_copies": lambda kept: kept * vocab_share,
        "other": lambda kept: (kept - ids) / t + ids,
        "scores": lambda kept: kept / t,  # Falcon's per-head ALiBi masks, kept under SDPA: split by head
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
