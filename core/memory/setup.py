"""One training step as each estimate reads it, its settings (`core.memory.settings`) validated together:
`StepSetup` for the phase model, `TrainingSetup` for the detailed estimate (one GPU's share of a run) and
`LessonSetup` for the lesson's six sliders."""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require
from core.gpus import bytes_per_value
from core.memory.budget import Precision, check_choice, check_whole, optimizer_state_values
from core.memory.finetune import LORA_TARGETS, check_lora_rank
from core.memory.settings import (
    CONVENTIONS,
    STATE_VALUES,
    Attention,
    AttentionKind,
    Convention,
    LessonDtype,
    Optimizer,
    OptimizerImpl,
    Recomputation,
    Recompute,
    Stack,
    precision,
)
from core.memory.sharding import check_sharding
from core.memory.tensor_split import check_tensor_parallel
from core.models import ModelSpec, check_spec, parameter_breakdown, parameter_count

METHODS = ("full", "lora", "qlora")
ADAPTED = ("lora", "qlora")  # methods that freeze the base and train peft's adapters


@dataclass(frozen=True)
class TrainingMethod:
    """What is trained, and over how many GPUs.

    `method`: every parameter (`full`), or peft's LoRA adapters of `lora_rank` on `lora_targets` over a
    frozen base (`lora`; `qlora` with the base in NF4). `freeze_blocks`: with full training, the first
    K blocks and the embeddings stay frozen (the last blocks, the final norm and the output layer train).
    `gpus` GPUs in all: `tensor_parallel` of them split every block's matrices (Megatron-style, with
    sequence parallelism), and the `gpus / tensor_parallel` data-parallel replicas share model state
    as `sharding` says.
    """

    method: str = "full"
    lora_rank: int = 16
    lora_targets: str = "attention"
    freeze_blocks: int = 0
    gpus: int = 1
    sharding: str = "none"
    tensor_parallel: int = 1

    def __post_init__(self) -> None:
        require(
            self.method in METHODS, f"The method must be one of {', '.join(METHODS)}, not {self.method!r}."
        )
        check_lora_rank(self.lora_rank)
        require(
            self.lora_targets in LORA_TARGETS,
            f"LoRA targets must be one of {', '.join(LORA_TARGETS)}, not {self.lora_targets!r}.",
        )
        require(
            isinstance(self.freeze_blocks, int)
            and not isinstance(self.freeze_blocks, bool)
            and self.freeze_blocks >= 0,
            f"The number of frozen blocks must be a whole number, 0 or more, not {self.freeze_blocks!r}.",
        )
        require(
            self.freeze_blocks == 0 or self.method == "full",
            "Freezing blocks is a choice for full training; LoRA and QLoRA already freeze every base weight.",
        )
        require(
            isinstance(self.tensor_parallel, int)
            and not isinstance(self.tensor_parallel, bool)
            and self.tensor_parallel >= 1,
            f"Tensor parallelism must be a whole number of GPUs, 1 or more, not {self.tensor_parallel!r}.",
        )
        require(
            isinstance(self.gpus, int) and not isinstance(self.gpus, bool) and self.gpus >= 1,
            f"The number of GPUs must be a whole number, 1 or more, not {self.gpus!r}.",
        )
        require(
            self.gpus % self.tensor_parallel == 0,
            f"{self.gpus} GPUs do not split into tensor-parallel groups of {self.tensor_parallel}.",
        )
        check_sharding(self.sharding, self.data_parallel)

    @property
    def adapted(self) -> bool:
        """Whether the base is frozen and peft's adapters train (LoRA, QLoRA)."""
        return self.method in ADAPTED

    @property
    def data_parallel(self) -> int:
        """Replicas of the model that share the batch: the GPUs over the tensor-parallel group's size."""
        return self.gpus // self.tensor_parallel


@dataclass(frozen=True)
class StepSetup:
    """A training step on one GPU: model, micro-batch × sequence, and every setting that changes memory.

    `first_step` is the very first step, whose `optimizer.step()` creates the optimizer state;
    later steps start with it already resident.
    """

    model: ModelSpec
    batch: int
    seq_len: int
    precision: str = "bf16"
    attention: str = "sdpa"
    recompute: str = "none"
    optimizer: str = "adamw"
    optimizer_impl: str = "foreach"
    stack: str = "hf"
    first_step: bool = False
    training: TrainingMethod = TrainingMethod()

    def __post_init__(self) -> None:
        check_spec(self.model)
        check_whole(self.batch, "The micro-batch")
        check_whole(self.seq_len, "The sequence length")
        check_choice(self.precision, CONVENTIONS, "precision")
        check_choice(self.attention, Attention, "attention")
        check_choice(self.recompute, Recompute, "recomputation")
        check_choice(self.optimizer, Optimizer, "optimizer")
        check_choice(self.optimizer_impl, OptimizerImpl, "optimizer implementation")
        check_choice(self.stack, Stack, "implementation stack")
        require(
            self.model.positions == 0 or self.seq_len <= self.model.positions,
            f"{self.model.name} has {self.model.positions:,} learned positions; a sequence of "
            f"{self.seq_len:,} tokens does not fit.",
        )
        require(isinstance(self.training, TrainingMethod), "The training method must be a TrainingMethod.")
        require(
            self.training.freeze_blocks <= self.model.layers,
            f"{self.model.name} has {self.model.layers} blocks; "
            f"{self.training.freeze_blocks} cannot be frozen.",
        )
        check_tensor_parallel(self.model, self.training.tensor_parallel)

    @property
    def convention(self) -> Convention:
        """The precision convention's bytes per parameter and code path."""
        return CONVENTIONS[self.precision]

    @property
    def tokens(self) -> int:
        """Tokens in one micro-batch."""
        return self.batch * self.seq_len

    @property
    def parameters(self) -> int:
        """Every parameter of the model, counted exactly."""
        return parameter_count(self.model)

    @property
    def state_values(self) -> int:
        """Optimizer-state values kept per parameter."""
        return STATE_VALUES[self.optimizer]

    @property
    def block_parameters(self) -> int:
        """Parameters of one transformer block (attention, MLP, its two norms)."""
        parts = parameter_breakdown(self.model)
        per_norm = 2 * self.model.hidden if self.model.norm == "layernorm" else self.model.hidden
        return (parts.attention + parts.mlp) // self.model.layers + 2 * per_norm

    @property
    def largest_tensor_parameters(self) -> int:
        """Values in the largest single weight tensor (the embedding table, or the widest MLP matrix)."""
        return max(self.model.vocab * self.model.hidden, self.model.hidden * self.model.intermediate)


@dataclass(frozen=True)
class TrainingSetup:
    """One GPU's share of a training run: model, number formats, optimizer and what it processes at once."""

    model: ModelSpec
    precision: str
    optimizer: str
    micro_batch: int
    seq_len: int
    recompute: str = "none"
    attention: str = "standard"
    runtime_overhead_gb: float = 1.0

    def __post_init__(self) -> None:
        precision(self.precision)
        optimizer_state_values(self.optimizer)
        check_whole(self.micro_batch, "The micro-batch")
        check_whole(self.seq_len, "The sequence length")
        check_choice(self.recompute, Recomputation, "recomputation")
        check_choice(self.attention, AttentionKind, "attention kind")
        require(0 <= self.runtime_overhead_gb < float("inf"), "The runtime overhead must be 0 GB or more.")


@dataclass(frozen=True)
class LessonSetup:
    """The lesson's six sliders: the model's shape, its dtype and optimizer, and how it is run."""

    hidden: int
    layers: int
    dtype: str
    optimizer: str
    batch: int
    seq_len: int

    def __post_init__(self) -> None:
        for name in ("hidden", "layers", "batch", "seq_len"):
            check_whole(getattr(self, name), name.replace("_", " ").capitalize())
        check_choice(self.dtype, LessonDtype, "dtype")
        optimizer_state_values(self.optimizer)

    @property
    def precision(self) -> Precision:
        """Weights, gradients and activations at the chosen dtype, and no master copy."""
        size = bytes_per_value(self.dtype)
        return Precision(weight_bytes=size, gradient_bytes=size, master_bytes=0, activation_bytes=size)
