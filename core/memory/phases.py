"""One training step in three phases, each with the memory live at its peak, term by term.

- Forward: the weights (and, after the first step, the optimizer state) plus every block's saved
  activations; its peak is while the loss holds the logits and their FP32 copy, or the last block's
  briefest tensors if those are larger.
- Backward: starts with the loss's two logit-sized gradients on top of everything forward kept, then
  walks the blocks from last to first, each creating its weight gradients as its saved tensors go.
- Optimizer step: weights, gradients and optimizer state, plus the implementation's own temporaries
  (`foreach` AdamW allocates one more copy of the state-sized tensors for √v; `fused` nothing; the
  for-loop two temporaries of its largest tensor).

`phases` are read as the reference reads them: `torch.cuda.max_memory_allocated()` at the end of each
phase, with the peak reset at the start of the step, so each is at least the one before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from core.memory.count import ActivationCount
from core.memory.fused_stack import fused_count
from core.memory.hf_stack import hf_count
from core.memory.setup import StepSetup

PHASES = ("forward", "backward", "optimizer_step")
# Setups worked out and kept per process. A setup is settings only (a model's shape and the choices
# that change memory), never who asked; without this, Run A's few fixed setups and a workshop's common
# choices were worked out again on every rerun of the pages that show them (Run A: 15 of its 16 ms).
# One setup keeps about 80 KiB (16 layers) to 0.4 MiB (80 layers) of moments and timeline points.
STEP_CACHE_SIZE = 64
PHASE_LABELS = {"forward": "Forward", "backward": "loss.backward()", "optimizer_step": "optimizer.step()"}
# What a step holds as the allocator sees it, phase by phase: not the budget's TERMS, whose labels are
# TERM_LABELS in core.memory.budget.
PHASE_TERM_LABELS = {
    "weights": "Weights",
    "master_weights": "FP32 master copy",
    "optimizer_state": "Optimizer state",
    "gradients": "Gradients",
    "activations": "Saved activations",
    "loss": "Loss: FP32 logits and log-softmax",
    "workspace": "Transient tensors",
    "optimizer_transient": "Optimizer step temporaries",
}


@dataclass(frozen=True)
class PhasePeak:
    """The most memory one phase holds (allocated bytes) and the terms live at that moment."""

    phase: str
    moment: str
    terms: Mapping[str, float]

    @property
    def peak_bytes(self) -> float:
        """The sum of the terms live at the peak."""
        return float(sum(self.terms.values()))


@dataclass(frozen=True)
class StepPhases:
    """A training step's phases: each one's own peak, and the peaks as the allocator reports them."""

    setup: StepSetup
    count: ActivationCount
    forward: PhasePeak
    backward: PhasePeak
    optimizer_step: PhasePeak
    after_forward_bytes: float

    @property
    def parameters(self) -> int:
        """Every parameter of the model."""
        return self.setup.parameters

    def own(self, phase: str) -> PhasePeak:
        """One phase's own peak and its terms."""
        return {"forward": self.forward, "backward": self.backward, "optimizer_step": self.optimizer_step}[
            phase
        ]

    @property
    def reported_bytes(self) -> dict[str, float]:
        """`max_memory_allocated()` at the end of each phase: the running maximum of the own peaks."""
        running, out = 0.0, {}
        for phase in PHASES:
            running = max(running, self.own(phase).peak_bytes)
            out[phase] = running
        return out

    @property
    def peak_bytes(self) -> float:
        """The step's peak: the largest phase peak."""
        return self.reported_bytes["optimizer_step"]

    @property
    def peak_phase(self) -> str:
        """The phase in which the step's peak happens (the first of equals)."""
        return max(PHASES, key=lambda p: self.own(p).peak_bytes)


def activation_count(setup: StepSetup) -> ActivationCount:
    """The saved activations and transients of `setup` on its stack."""
    return hf_count(setup) if setup.stack == "hf" else fused_count(setup)


def _state(setup: StepSetup, *, state_exists: bool) -> dict[str, float]:
    """Weights, FP32 master copy and (if it exists yet) optimizer state."""
    p, c = setup.parameters, setup.convention
    return {
        "weights": float(p * c.weight_bytes),
        "master_weights": float(p * c.master_bytes),
        "optimizer_state": float(p * c.state_bytes * setup.state_values) if state_exists else 0.0,
    }


def _activations(count: ActivationCount, setup: StepSetup, blocks_kept: int, *, loss: bool) -> float:
    """Saved activations with `blocks_kept` blocks' worth still held, outside the loss."""
    per_block = count.block_input_bytes if setup.recompute == "full" else count.block_bytes
    outside = count.outside_bytes - count.outside.get("loss", 0.0)
    return blocks_kept * per_block + (outside if loss else 0.0)


@dataclass(frozen=True)
class Moment:
    """One moment of a step: its phase, the block in progress (None outside the blocks), what is live."""

    phase: str
    block: int | None
    what: str
    terms: Mapping[str, float]

    @property
    def total_bytes(self) -> float:
        """Allocated bytes at this moment."""
        return float(sum(self.terms.values()))


def _forward(setup: StepSetup, count: ActivationCount, base: dict[str, float]) -> list[Moment]:
    layers = setup.model.layers
    redo = count.block_bytes - count.block_input_bytes if setup.recompute == "full" else 0.0
    busy = count.forward_block_transient_bytes + count.forward_shared_bytes + redo
    moments = [
        Moment(
            "forward",
            block,
            f"in block {block} of {layers}",
            {**base, "activations": _activations(count, setup, block, loss=False), "workspace": busy},
        )
        for block in range(1, layers + 1)
    ]
    loss = count.outside.get("loss", 0.0) + count.loss_forward_transient_bytes
    moments.append(
        Moment(
            "forward",
            None,
            "in the loss: logits, their FP32 copy and its log-softmax",
            {**base, "activations": _activations(count, setup, layers, loss=True), "loss": loss},
        )
    )
    return moments


def _backward(setup: StepSetup, count: ActivationCount, base: dict[str, float]) -> list[Moment]:
    m, c = setup.model, setup.convention
    layers = m.layers
    block_grads = setup.block_parameters * c.gradient_bytes
    all_grads = setup.parameters * c.gradient_bytes
    head_grads = m.vocab * m.hidden * c.gradient_bytes  # the output layer's (tied: the embedding's) gradient
    saved = count.outside.get("loss", 0.0)
    moments = [
        Moment(
            "backward",
            None,
            "at its start: the loss's gradients beside everything forward kept",
            {
                **base,
                "activations": _activations(count, setup, layers, loss=True),
                "loss": saved + count.loss_backward_transient_bytes,
            },
        )
    ]
    redo = count.block_bytes - count.block_input_bytes if setup.recompute == "full" else 0.0
    moments += [
        Moment(
            "backward",
            block,
            f"in block {block} of {layers} (backward runs from the last block)",
            {
                **base,
                "gradients": float(head_grads + (layers - block) * block_grads),
                "activations": _activations(count, setup, block, loss=False) + redo,
                "workspace": count.backward_block_transient_bytes,
            },
        )
        for block in range(layers, 0, -1)
    ]
    # The embedding's gradient comes last; tied to the output layer, it is made apart and then added in.
    moments.append(
        Moment(
            "backward",
            None,
            "at its end: every gradient"
            + (", and the embedding's being added in" if m.tied_embeddings else ""),
            {
                **base,
                "gradients": float(all_grads),
                "workspace": float(head_grads if m.tied_embeddings else 0),
            },
        )
    )
    return moments


def _optimizer_transient(setup: StepSetup) -> float:
    """Bytes the optimizer's step allocates for a moment, by implementation."""
    if setup.optimizer not in ("adam", "adamw") or setup.optimizer_impl == "fused":
        return 0.0
    state_bytes = setup.convention.state_bytes
    if (
        setup.optimizer_impl == "foreach"
    ):  # torch._foreach_sqrt(exp_avg_sqs): one state-sized copy of everything
        return float(setup.parameters * state_bytes)
    return float(2 * setup.largest_tensor_parameters * state_bytes)  # sqrt, then the division, of one tensor


def _optimizer_step(setup: StepSetup) -> list[Moment]:
    moment = "while it creates the optimizer state" if setup.first_step else "updating the weights"
    return [
        Moment(
            "optimizer_step",
            None,
            moment,
            {
                **_state(setup, state_exists=True),
                "gradients": float(setup.parameters * setup.convention.gradient_bytes),
                "optimizer_transient": _optimizer_transient(setup),
            },
        )
    ]


@lru_cache(maxsize=STEP_CACHE_SIZE)
def step_moments(setup: StepSetup) -> tuple[Moment, ...]:
    """Every moment of one step of `setup` in order: each forward block and the loss, backward from the loss
    through the blocks to the embedding, then the optimizer step."""
    count = activation_count(setup)
    base = _state(setup, state_exists=not setup.first_step)
    return tuple(_forward(setup, count, base) + _backward(setup, count, base) + _optimizer_step(setup))


def _peak(moments: tuple[Moment, ...], phase: str) -> PhasePeak:
    top = max((m for m in moments if m.phase == phase), key=lambda m: m.total_bytes)
    return PhasePeak(phase, top.what, top.terms)


@lru_cache(maxsize=STEP_CACHE_SIZE)
def step_phases(setup: StepSetup) -> StepPhases:
    """The phase model of one training step of `setup`: each phase's peak is its busiest moment."""
    count = activation_count(setup)
    moments = step_moments(setup)
    base = _state(setup, state_exists=not setup.first_step)
    after_forward = sum(base.values()) + _activations(count, setup, setup.model.layers, loss=True)
    after_forward += count.outside.get("loss", 0.0)
    if setup.recompute == "full":
        after_forward -= count.outside.get("weight_copies", 0.0)
    return StepPhases(
        setup=setup,
        count=count,
        forward=_peak(moments, "forward"),
        backward=_peak(moments, "backward"),
        optimizer_step=_peak(moments, "optimizer_step"),
        after_forward_bytes=float(after_forward),
    )
