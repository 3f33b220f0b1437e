"""What one training step keeps and briefly holds, tensor by tensor: the result every stack's count fills.

Sizes are in bytes for the step's whole micro-batch. `block` maps each kind of saved activation to the
bytes one transformer block keeps for backward; `outside` is what the rest of the model keeps (embedding,
final norm, the loss's FP32 log-softmax). Transients are tensors that exist only for a moment: the
largest one of each phase decides that phase's peak.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KIND_LABELS = {
    "activations": "Saved activations (Korthikanti count)",
    "norms": "Norm inputs and outputs",
    "attention": "Attention Q, K, V and output",
    "scores": "Attention scores (the s × s matrix)",
    "mlp": "MLP intermediates",
    "masks": "Dropout masks",
    "casts": "BF16 copies autocast makes of activations",
    "weight_copies": "BF16 copies autocast makes of the weights",
    "adapters": "LoRA: FP32 input copies, rank-r outputs",
    "loss": "Loss: the logits' FP32 log-softmax",
    "other": "Embeddings, final norm, token ids",
}


@dataclass(frozen=True)
class ActivationCount:
    """Saved activations by kind and the transients of each phase, for one step's micro-batch."""

    block: Mapping[str, float]  # kind -> bytes one block keeps (with full recompute: while it is redone)
    block_input_bytes: float  # one block's input, all a checkpointed block keeps through forward
    outside: Mapping[str, float]  # kind -> bytes kept outside the blocks
    forward_block_transient_bytes: float  # the most a block holds briefly beyond what it keeps
    forward_shared_bytes: float  # held through the whole forward and then dropped (eager's causal mask)
    loss_forward_transient_bytes: float  # logits and their FP32 copy while the loss runs
    loss_backward_transient_bytes: float  # the loss's two logit-sized FP32 gradients
    backward_block_transient_bytes: float  # the most a block's backward holds briefly

    @property
    def block_bytes(self) -> float:
        """Everything one block keeps for backward."""
        return float(sum(self.block.values()))

    @property
    def outside_bytes(self) -> float:
        """Everything kept outside the blocks."""
        return float(sum(self.outside.values()))
