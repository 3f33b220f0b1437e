"""The choices one training step is run with, each with the words a page shows for it: the phase model's
implementation stack, precision convention, attention, recomputation and optimizer, and what trains
over how many GPUs (method, LoRA targets, sharding); the detailed estimate's
mixed-precision conventions, recomputation and attention; the lesson's number format.

Byte sizes here are facts about the conventions, not estimates: a BF16 value is 2 bytes, Adam keeps two
moments per parameter, `torch.optim` creates them in the parameters' dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.memory.budget import Precision, check_choice
from core.validate import Labelled


class Stack(Labelled):
    """The code a training step runs on."""

    HF = "hf", "PyTorch + Hugging Face transformers"
    FUSED = "fused", "Fused kernels (Megatron / Transformer Engine style)"


class Attention(Labelled):
    """How attention is computed, which decides whether the score matrix is kept."""

    SDPA = "sdpa", "SDPA: torch's scaled_dot_product_attention (no score matrix kept on a GPU)"
    EAGER = "eager", "Eager: transformers' Python attention (the score matrix is kept)"


class Recompute(Labelled):
    """What backward recomputes instead of keeping."""

    NONE = "none", "None: keep every saved tensor"
    FULL = "full", "Full: gradient checkpointing keeps each block's input and redoes the block in backward"


class Optimizer(Labelled):
    """The optimizer, which decides how many state values each parameter gets."""

    ADAMW = "adamw", "AdamW (two moments per parameter)"
    ADAM = "adam", "Adam (two moments per parameter)"
    SGD_MOMENTUM = "sgd_momentum", "SGD with momentum (one buffer per parameter)"
    SGD = "sgd", "SGD without momentum (no state)"
    ADAMW8BIT = "adamw8bit", "bitsandbytes AdamW8bit (two 8-bit moments with block statistics)"


STATE_VALUES: dict[str, int] = {
    Optimizer.ADAMW: 2,
    Optimizer.ADAM: 2,
    Optimizer.SGD_MOMENTUM: 1,
    Optimizer.SGD: 0,
    Optimizer.ADAMW8BIT: 2,
}


class OptimizerImpl(Labelled):
    """How `optimizer.step()` walks the parameters, which decides its temporaries."""

    FOREACH = "foreach", "foreach (PyTorch's default on a GPU: whole lists of tensors at once)"
    FUSED = "fused", "fused=True (one kernel, no temporaries)"
    LOOP = "loop", "for-loop (foreach=False: one tensor at a time)"


class Method(Labelled):
    """What trains: every parameter, or peft's adapters over a frozen base (`core.memory.setup.METHODS`)."""

    FULL = "full", "Full training"
    LORA = "lora", "LoRA (adapters over a frozen base)"
    QLORA = "qlora", "QLoRA (adapters over a 4-bit NF4 base)"


class LoraTarget(Labelled):
    """The layers LoRA adapts (`core.memory.finetune.LORA_TARGETS`)."""

    ATTENTION = "attention", "The attention projections"
    ALL_LINEAR = "all-linear", "Every linear layer but the output head"


class Sharding(Labelled):
    """How data-parallel GPUs share model state (the schemes of `core.memory.sharding` a page offers)."""

    NONE = "none", "None (one GPU)"
    DDP = "ddp", "DDP (a full copy on each GPU)"
    ZERO1 = "zero1", "ZeRO-1 (optimizer state sharded)"
    ZERO2 = "zero2", "ZeRO-2 (gradients sharded too)"
    ZERO3 = "zero3", "ZeRO-3 (weights sharded too)"
    FSDP = "fsdp", "FSDP (full sharding, a block gathered at a time)"


@dataclass(frozen=True)
class Convention:
    """Bytes per parameter for each copy of model state, and the code path the forward runs."""

    label: str
    weight_bytes: int
    gradient_bytes: int
    master_bytes: int  # FP32 copies the optimizer keeps beside 2-byte weights (0 when weights are FP32)
    state_bytes: int  # bytes per optimizer-state value
    compute: str  # "fp32", "bf16" (model cast to BF16) or "amp" (torch.autocast over FP32 weights)


CONVENTIONS = {
    "fp32": Convention("FP32: everything in 4 bytes", 4, 4, 0, 4, "fp32"),
    "amp": Convention(
        "torch.autocast BF16: FP32 weights, gradients and AdamW state; BF16 matmuls", 4, 4, 0, 4, "amp"
    ),
    "bf16": Convention("Pure BF16: model cast to BF16, AdamW state in BF16", 2, 2, 0, 2, "bf16"),
    "mixed16": Convention(
        "16 bytes/parameter (ZeRO paper): BF16 weights and gradients, FP32 master", 2, 2, 4, 4, "bf16"
    ),
    "mixed18": Convention("18 bytes/parameter: BF16 weights, FP32 gradients and master", 2, 4, 4, 4, "bf16"),
    "mixed20": Convention(
        "20 bytes/parameter: BF16 weights and gradients, FP32 copies of both", 2, 2, 8, 4, "bf16"
    ),
}
PRECISIONS = tuple(CONVENTIONS)
COMPUTE_BYTES = {"fp32": 4, "bf16": 2, "amp": 2}  # bytes of a matmul output in each code path


def convention_label(name: str) -> str:
    """The words a page shows for a phase-model precision convention."""
    return CONVENTIONS[name].label


# Mixed-precision conventions in use, by bytes per parameter of model state with Adam:
# 16 (ZeRO paper), 18 (FP32 gradients, e.g. Megatron bf16) and 20 (FP32 copies of both
# weights and gradients, Megatron fp16). The FP32 copies shard with the optimizer state.
# DETAILED_PRECISIONS are the conventions the memory page's detailed estimate offers.
DETAILED_PRECISIONS = {
    "fp32": Precision(weight_bytes=4, gradient_bytes=4, master_bytes=0, activation_bytes=4),
    "mixed16": Precision(weight_bytes=2, gradient_bytes=2, master_bytes=4, activation_bytes=2),
    "mixed18": Precision(weight_bytes=2, gradient_bytes=4, master_bytes=4, activation_bytes=2),
    "mixed20": Precision(weight_bytes=2, gradient_bytes=2, master_bytes=8, activation_bytes=2),
}
# Pure BF16 is a model cast to bfloat16 and trained as it is: torch.optim creates Adam's moments in the
# weights' dtype, there is no FP32 copy, and the loss reads the BF16 logits. The measured runs use it.
ALL_DETAILED_PRECISIONS = {
    **DETAILED_PRECISIONS,
    "bf16": Precision(
        weight_bytes=2,
        gradient_bytes=2,
        master_bytes=0,
        activation_bytes=2,
        optimizer_state_bytes=2,
        logit_bytes=2,
    ),
}
_PRECISION_WORDS = {
    "fp32": "No mixed precision: everything in FP32",
    "mixed16": "2-byte weights and gradients, FP32 master weights",
    "mixed18": "2-byte weights, FP32 gradients and master weights",
    "mixed20": "2-byte weights and gradients, FP32 copies of both",
    "bf16": "Pure BF16: weights, gradients and optimizer state all in 2 bytes, no FP32 copy",
}


class Recomputation(Labelled):
    """What the detailed estimate's backward recomputes instead of keeping."""

    NONE = "none", "None: keep every saved tensor"
    SELECTIVE = "selective", "Selective: recompute the attention scores"
    FULL = "full", "Full: keep only each block's input"


class AttentionKind(Labelled):
    """Whether the detailed estimate keeps the attention score matrix."""

    STANDARD = "standard", "Standard: the a·s² score matrix is kept"
    MEMORY_EFFICIENT = "memory_efficient", "Memory-efficient (flash): no score matrix"


def precision_label(name: str) -> str:
    """What a precision convention keeps, with its bytes per parameter of model state under Adam."""
    return (
        f"{_PRECISION_WORDS[name]} ({precision(name).state_bytes_per_parameter('adam')} bytes per "
        "parameter with Adam)"
    )


def precision(name: str) -> Precision:
    """The named precision convention; a ValueError listing them for an unknown name."""
    return ALL_DETAILED_PRECISIONS[check_choice(name, ALL_DETAILED_PRECISIONS, "precision")]


class LessonDtype(Labelled):
    """The number formats the lesson's estimate offers for weights and activations."""

    FP32 = "fp32", "FP32, 4 bytes"
    BF16 = "bf16", "FP16 or BF16, 2 bytes"
