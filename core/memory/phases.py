"""One training step in three phases, each with the memory live at its peak on one GPU, term by term.

- Forward: the weights (and, after the first step, the optimizer state) plus every block's saved
  activations; its peak is while the loss holds the logits and their FP32 copy, or the last block's
  briefest tensors if those are larger.
- Backward: starts with the loss's two logit-sized gradients on top of everything forward kept, then
  walks the blocks from last to first, each creating its weight gradients as its saved tensors go.
- Optimizer step: weights, gradients and optimizer state, plus the implementation's own temporaries
  (`foreach` AdamW allocates one more copy of the state-sized tensors for √v; `fused` nothing; the
  for-loop two temporaries of its largest tensor; bitsandbytes' 8-bit step nothing).

The training method and sharding decide the terms: the model state one GPU holds comes from
`core.memory.model_state` (full training, frozen blocks, LoRA, QLoRA; DDP, ZeRO, FSDP), what each block
saves from `core.memory.adapted` (backward stops below the first block that trains). Transients have
names of their own: DDP's `gradient_buckets` (allocated with the wrapper, so live throughout), FSDP's
and ZeRO-3's `gathered_block` and QLoRA's `dequantized_weight` (while a block runs, in forward and
backward), FSDP's `gathered_root` (forward and backward) and `gradient_reduce_scatter` (a block's
backward). With tensor parallelism (full training), one GPU keeps its shard of the weights
(`core.memory.tensor_split`) and what sequence parallelism leaves it of the activations
(`core.memory.tensor_parallel`).

`phases` are read as the reference reads them: `torch.cuda.max_memory_allocated()` at the end of each
phase, with the peak reset at the start of the step, so each is at least the one before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from core.datafiles import require
from core.memory.adapted import MethodCount, check_counted, method_count
from core.memory.count import ActivationCount
from core.memory.fused_stack import fused_count
from core.memory.model_state import RunModelState, run_model_state
from core.memory.setup import StepSetup
from core.memory.tensor_parallel import tensor_parallel_count

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
    "gradient_buckets": "DDP gradient buckets",
    "gathered_block": "Gathered blocks (FSDP, ZeRO-3)",
    "gathered_root": "Gathered root weights (FSDP)",
    "gradient_reduce_scatter": "Gradient reduce-scatter (FSDP)",
    "dequantized_weight": "Dequantized layer weight (QLoRA)",
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


@lru_cache(maxsize=STEP_CACHE_SIZE)
def step_inputs(setup: StepSetup) -> tuple[MethodCount, RunModelState]:
    """What a step of `setup` keeps and its model state on one GPU: the phase model's one entry."""
    state = run_model_state(setup, setup.training)
    if setup.stack == "hf":
        method = method_count(setup, head_trains=state.head_trains)
    else:
        check_counted(setup)
        method = MethodCount.uniform(fused_count(setup), setup.model.layers)
    if setup.training.tensor_parallel == 1:
        return method, state
    t = setup.training
    require(
        t.method == "full" and t.freeze_blocks == 0,
        "Tensor parallelism is counted for full training; LoRA, QLoRA and frozen blocks are counted "
        "data-parallel (DDP, ZeRO or FSDP).",
    )
    return MethodCount.uniform(tensor_parallel_count(method.count, setup), setup.model.layers), state


def _state(state: RunModelState, *, state_exists: bool) -> dict[str, float]:
    """What stays resident through the step: weights, FP32 master copy, (if it exists yet) optimizer
    state, and DDP's gradient buckets (allocated with the DDP wrapper, by its Reducer)."""
    per_gpu = state.per_gpu
    terms = {
        "weights": per_gpu.weights,
        "master_weights": per_gpu.master_weights,
        "optimizer_state": per_gpu.optimizer_state if state_exists else 0.0,
    }
    return terms | _named({"gradient_buckets": state.gradient_buckets_bytes})


def _named(transients: Mapping[str, float]) -> dict[str, float]:
    """Transients that exist for this run, each under its own term name."""
    return {term: float(size) for term, size in transients.items() if size}


def _gathered_root(state: RunModelState) -> dict[str, float]:
    """FSDP's root weights, gathered from the forward's start to the backward's end."""
    return _named({"gathered_root": state.gathered_root_bytes})


def _block_transients(count: MethodCount, state: RunModelState, *, backward: bool) -> dict[str, float]:
    """What a block holds beside its own tensors: FSDP's gathered root and blocks, QLoRA's dequantized
    weight, and in backward FSDP's reduce-scatter of the block's gradients."""
    return _named(
        {
            "gathered_root": state.gathered_root_bytes,
            "gathered_block": state.gathered_block_bytes,
            "dequantized_weight": count.dequantized_weight_bytes,
            "gradient_reduce_scatter": state.reduce_scatter_bytes if backward else 0.0,
        }
    )


def _activations(count: MethodCount, setup: StepSetup, blocks_kept: int, *, loss: bool) -> float:
    """Saved activations with the first `blocks_kept` blocks' worth still held, outside the loss."""
    if setup.recompute == "full":  # a checkpointed block keeps its input, if backward reaches it
        skipped = setup.model.layers - count.backward_blocks
        blocks = max(0, blocks_kept - skipped) * count.count.block_input_bytes
    else:
        blocks = sum(count.saved_by_block[:blocks_kept])
    outside = count.count.outside_bytes - count.count.outside.get("loss", 0.0)
    return blocks + (outside if loss else 0.0)


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


def _forward(
    setup: StepSetup, method: MethodCount, state: RunModelState, base: dict[str, float]
) -> list[Moment]:
    count, layers = method.count, setup.model.layers
    redo = count.block_bytes - count.block_input_bytes if setup.recompute == "full" else 0.0
    busy = count.forward_block_transient_bytes + count.forward_shared_bytes + redo
    moments = [
        Moment(
            "forward",
            block,
            f"in block {block} of {layers}",
            {
                **base,
                "activations": _activations(method, setup, block, loss=False),
                "workspace": busy,
                **_block_transients(method, state, backward=False),
            },
        )
        for block in range(1, layers + 1)
    ]
    loss = count.outside.get("loss", 0.0) + count.loss_forward_transient_bytes
    moments.append(
        Moment(
            "forward",
            None,
            "in the loss: logits, their FP32 copy and its log-softmax",
            {
                **base,
                "activations": _activations(method, setup, layers, loss=True),
                "loss": loss,
                **_gathered_root(state),
            },
        )
    )
    return moments


def _gradients_made(setup: StepSetup, state: RunModelState, block: int) -> float:
    """Gradient bytes one GPU holds in backward at block `block` (1-based): the output layer's and those
    of every block after it, as a share of all its gradients (sharded ones shrink with the rest)."""
    made = state.head_parameters + sum(values for b, values in state.trainable_by_block.items() if b >= block)
    return state.per_gpu.gradients * made / state.trainable_per_gpu


def _backward(
    setup: StepSetup, method: MethodCount, state: RunModelState, base: dict[str, float]
) -> list[Moment]:
    m, count = setup.model, method.count
    layers = m.layers
    saved = count.outside.get("loss", 0.0)
    moments = [
        Moment(
            "backward",
            None,
            "at its start: the loss's gradients beside everything forward kept",
            {
                **base,
                "activations": _activations(method, setup, layers, loss=True),
                "loss": saved + count.loss_backward_transient_bytes,
                **_gathered_root(state),
            },
        )
    ]
    redo = count.block_bytes - count.block_input_bytes if setup.recompute == "full" else 0.0
    last_reached = layers - method.backward_blocks
    moments += [
        Moment(
            "backward",
            block,
            f"in block {block} of {layers} (backward runs from the last block)",
            {
                **base,
                "gradients": _gradients_made(setup, state, block),
                "activations": _activations(method, setup, block, loss=False) + redo,
                "workspace": count.backward_block_transient_bytes,
                **_block_transients(method, state, backward=True),
            },
        )
        for block in range(layers, last_reached, -1)
    ]
    # The embedding's gradient comes last; tied to the output layer, it is made apart and then added in.
    embedding_trains = setup.training.method == "full" and setup.training.freeze_blocks == 0
    tied = m.tied_embeddings and embedding_trains
    moments.append(
        Moment(
            "backward",
            None,
            "at its end: every gradient" + (", and the embedding's being added in" if tied else ""),
            {
                **base,
                "gradients": state.per_gpu.gradients,
                "workspace": float(state.head_parameters * setup.convention.gradient_bytes if tied else 0),
            },
        )
    )
    return moments


def _optimizer_transient(setup: StepSetup, state: RunModelState) -> float:
    """Bytes the optimizer's step allocates for a moment, by implementation (bitsandbytes' 8-bit step
    updates in place)."""
    if setup.optimizer not in ("adam", "adamw") or setup.optimizer_impl == "fused":
        return 0.0
    if setup.optimizer_impl == "foreach":  # torch._foreach_sqrt(exp_avg_sqs): a copy of one moment
        return state.per_gpu.optimizer_state / setup.state_values
    # sqrt, then the division, of one tensor
    return float(2 * state.largest_trainable_parameters * state.state_value_bytes)


def _optimizer_step(setup: StepSetup, state: RunModelState) -> list[Moment]:
    moment = "while it creates the optimizer state" if setup.first_step else "updating the weights"
    return [
        Moment(
            "optimizer_step",
            None,
            moment,
            {
                **_state(state, state_exists=True),
                "gradients": state.per_gpu.gradients,
                "optimizer_transient": _optimizer_transient(setup, state),
            },
        )
    ]


@lru_cache(maxsize=STEP_CACHE_SIZE)
def step_moments(setup: StepSetup) -> tuple[Moment, ...]:
    """Every moment of one step of `setup` in order: each forward block and the loss, backward from the loss
    through the blocks it reaches to the embedding, then the optimizer step."""
    method, state = step_inputs(setup)
    base = _state(state, state_exists=not setup.first_step)
    return tuple(
        _forward(setup, method, state, base)
        + _backward(setup, method, state, base)
        + _optimizer_step(setup, state)
    )


def _peak(moments: tuple[Moment, ...], phase: str) -> PhasePeak:
    top = max((m for m in moments if m.phase == phase), key=lambda m: m.total_bytes)
    return PhasePeak(phase, top.what, top.terms)


@lru_cache(maxsize=STEP_CACHE_SIZE)
def step_phases(setup: StepSetup) -> StepPhases:
    """The phase model of one training step of `setup`: each phase's peak is its busiest moment."""
    method, state = step_inputs(setup)
    count = method.count
    moments = step_moments(setup)
    base = _state(state, state_exists=not setup.first_step)
    after_forward = sum(base.values()) + _activations(method, setup, setup.model.layers, loss=True)
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
