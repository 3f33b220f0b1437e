"""The detailed memory estimate: exact parameters, mixed precision, measured-style activations.

Saved activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models": a GPT-style block with 2-byte values and dropout keeps s·b·h·(34 + 5·a·s/h)
bytes (already bytes, not values), 34·s·b·h with selective recomputation and 2·s·b·h with full
recomputation. We count the same tensors for any shape, so grouped KV heads, a gated MLP, no
dropout or 4-byte values change the sum the way they change the tensors; for the paper's block
the count reduces to the paper's formula exactly.

Like the paper, the count assumes fused GPU kernels (a norm keeps its input, fused attention keeps
no score matrix) and leaves out per-token statistics: a norm's mean and 1/σ and fused attention's
log-sum-exp per head, each a few values per token against the hundreds counted.
`core/estimate_check/` compares the count with what PyTorch really kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from core.memory.budget import (
    BYTES_PER_GB,
    WORKSPACE_BYTES,
    MemorySweep,
    MemoryTerms,
    model_state_terms,
    sweep_totals,
    zero_sharded,
)
from core.memory.settings import precision
from core.memory.setup import TrainingSetup
from core.models import parameter_count


def layer_activation_bytes(
    setup: TrainingSetup, *, micro_batch: int | np.ndarray, seq_len: int | np.ndarray
) -> float | np.ndarray:
    """Bytes one transformer block keeps for backward; `micro_batch` or `seq_len` may be arrays."""
    model, size = setup.model, precision(setup.precision).activation_bytes
    tokens = micro_batch * seq_len
    if setup.recompute == "full":
        return tokens * model.hidden * size  # only the block's input; the rest is recomputed
    # Values kept per token: attention (norm output, Q, K, V, context; Q and context are heads × head
    # width, which a config may set apart from hidden), MLP (input and its I-wide intermediates:
    # 2 plain, 4 gated) and the input of each of the block's norms.
    mlp_intermediates = 4 if model.gated_mlp else 2
    # A token passes through only its routed experts (and a shared one): MoE activations follow those.
    mlp_width = model.token_mlp_width if model.is_moe else model.intermediate
    values = (
        model.hidden
        + 2 * model.q_width
        + 2 * kept_kv_width(setup)
        + model.hidden
        + mlp_intermediates * mlp_width
        + model.norms_per_block * model.hidden
    )
    masks = 2 * model.hidden if model.dropout else 0  # 1-byte dropout masks after attention and MLP
    kept = tokens * (values * size + masks)
    if setup.recompute == "selective" or setup.attention == "memory_efficient":
        return kept
    # The a·s² scores per sequence: softmax output, plus dropout's mask and output when it is on.
    score_bytes = 2 * size + 1 if model.dropout else size
    return kept + tokens * model.heads * seq_len * score_bytes


def kept_kv_width(setup: TrainingSetup) -> int:
    """Width of the K (and V) tensor a block keeps: all heads when standard attention expands grouped KV
    heads."""
    # Standard attention multiplies each query head by its own K and V, so grouped KV heads are copied out to
    # every head first and backward keeps those copies; a fused kernel reads the groups as they are, and
    # selective recomputation keeps only the projections and redoes the copying.
    expanded = setup.attention == "standard" and setup.recompute == "none"
    return setup.model.q_width if expanded else setup.model.kv_width


def output_activation_bytes(
    setup: TrainingSetup, *, micro_batch: int | np.ndarray, seq_len: int | np.ndarray
) -> float | np.ndarray:
    """Bytes kept once per model, outside the blocks: final norm and output-layer inputs, the logits the loss
    reads."""
    model, chosen = setup.model, precision(setup.precision)
    embedding_mask = model.hidden if model.dropout else 0
    return (
        micro_batch
        * seq_len
        * (2 * model.hidden * chosen.activation_bytes + model.vocab * chosen.logit_bytes + embedding_mask)
    )


def activation_bytes(
    setup: TrainingSetup, *, micro_batch: int | np.ndarray, seq_len: int | np.ndarray
) -> float | np.ndarray:
    """Every saved activation: all blocks plus the output side."""
    per_layer = layer_activation_bytes(setup, micro_batch=micro_batch, seq_len=seq_len)
    return setup.model.layers * per_layer + output_activation_bytes(
        setup, micro_batch=micro_batch, seq_len=seq_len
    )


def replicated_terms(setup: TrainingSetup) -> MemoryTerms:
    """One GPU's budget when it holds a full copy of the model state (no sharding)."""
    state = model_state_terms(
        parameters=parameter_count(setup.model),
        precision=precision(setup.precision),
        optimizer=setup.optimizer,
    )
    return replace(
        state,
        activations_bytes=float(
            activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len)
        ),
        workspace_bytes=WORKSPACE_BYTES,
        runtime_overhead_bytes=setup.runtime_overhead_gb * BYTES_PER_GB,
    )


def per_gpu_terms(setup: TrainingSetup, *, zero_stage: int = 0, gpus: int = 1) -> MemoryTerms:
    """One GPU's budget with ZeRO at `zero_stage` over `gpus` data-parallel GPUs."""
    return zero_sharded(replicated_terms(setup), zero_stage=zero_stage, gpus=gpus)


def detailed_sweep(
    setup: TrainingSetup,
    *,
    axis: str,
    values: Sequence[int],
    device_gb: float,
    zero_stage: int = 0,
    gpus: int = 1,
) -> MemorySweep:
    """Per-GPU peak as the micro-batch or sequence length takes each of `values`, the rest held fixed."""
    grid = np.asarray(values)
    activations = activation_bytes(
        setup,
        micro_batch=grid if axis == "batch" else setup.micro_batch,
        seq_len=grid if axis == "seq_len" else setup.seq_len,
    )
    terms = per_gpu_terms(setup, zero_stage=zero_stage, gpus=gpus)
    return sweep_totals(
        terms, axis=axis, values=values, activations_bytes=np.asarray(activations), device_gb=device_gb
    )
