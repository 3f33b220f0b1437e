"""One training step as each estimate reads it, its settings (`core.memory.settings`) validated together:
`StepSetup` for the phase model, `TrainingSetup` for the detailed estimate (one GPU's share of a run) and
`LessonSetup` for the lesson's six sliders."""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require
from core.gpus import bytes_per_value
from core.memory.budget import Precision, check_choice, check_whole, optimizer_state_values
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
from core.models import ModelSpec, check_spec, parameter_breakdown, parameter_count


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
