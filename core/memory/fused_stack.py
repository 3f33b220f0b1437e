"""Saved activations as a fused-kernel stack keeps them (Megatron-LM, Transformer Engine): the
Korthikanti et al. 2022 count of `core.memory.detailed`, with the loss and its gradient held once.

Fused kernels keep a norm's input only, fuse attention (no score matrix with SDPA) and compute the loss
in one kernel, so nothing here is an FP32 copy that Python code made.
"""

from __future__ import annotations

from core.memory.count import ActivationCount
from core.memory.detailed import layer_activation_bytes, output_activation_bytes
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup, TrainingSetup


def _detailed(setup: StepSetup) -> TrainingSetup:
    """The same step in `core.memory.detailed`'s terms (2-byte activations unless FP32)."""
    return TrainingSetup(
        model=setup.model,
        precision="fp32" if setup.convention.compute == "fp32" else "mixed16",
        optimizer="adam",
        micro_batch=setup.batch,
        seq_len=setup.seq_len,
        recompute="none",
        attention="memory_efficient" if setup.attention == "sdpa" else "standard",
    )


def fused_count(setup: StepSetup) -> ActivationCount:
    """What a fused-kernel stack keeps in one step of `setup` (bytes), as the Korthikanti count gives it."""
    detailed, m = _detailed(setup), setup.model
    tokens, w = setup.tokens, COMPUTE_BYTES[setup.convention.compute]
    block = float(layer_activation_bytes(detailed, micro_batch=setup.batch, seq_len=setup.seq_len))
    output = float(output_activation_bytes(detailed, micro_batch=setup.batch, seq_len=setup.seq_len))
    logits = tokens * m.vocab * 4.0
    return ActivationCount(
        block={"activations": block},
        block_input_bytes=float(tokens * w * m.hidden),
        outside={"loss": logits, "other": output - logits},
        forward_block_transient_bytes=0.0,
        forward_shared_bytes=0.0,
        loss_forward_transient_bytes=0.0,
        loss_backward_transient_bytes=logits,
        backward_block_transient_bytes=0.0,
    )
