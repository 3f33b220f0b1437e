"""The terms of a training-memory budget, and what every estimate does with them.

Both estimates on the memory page (the lesson's and the detailed one), the Run A timeline and
the scaling lab build a `MemoryTerms` here, shard it with `zero_sharded`, judge it with
`budget_verdict` and sweep it with `sweep_totals`, so they cannot disagree about memory.
Everything is in bytes until a `_gb` field says otherwise (decimal GB, 1e9 bytes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from core import lessons
from core.datafiles import require
from core.validate import Labelled

BYTES_PER_GB = 1e9
WORKSPACE_BYTES = 1e9  # the lesson's flat allowance for kernel scratch buffers
OPTIMIZER_STATE_BYTES_PER_VALUE = (
    4  # mixed precision keeps optimizer state in FP32 even when the weights are not
)
LOGIT_BYTES = 4  # mixed-precision training casts the logits to FP32 for the loss, which keeps that copy

# Every term any estimate may fill, in the order charts stack them.
TERMS = (
    "parameters",
    "gradients",
    "master_weights",
    "optimizer_state",
    "activations",
    "communication_buffers",
    "workspace",
    "runtime_overhead",
)
TERM_LABELS = {
    "parameters": "Parameters",
    "gradients": "Gradients",
    "master_weights": "FP32 master copy",
    "optimizer_state": "Optimizer state",
    "activations": "Saved activations",
    "communication_buffers": "Communication buffers",
    "workspace": "Workspace",
    "runtime_overhead": "Runtime overhead",
}


class BudgetOptimizer(Labelled):
    """The optimizers the lesson's budget offers (the phase model's are `core.memory.settings.Optimizer`)."""

    SGD = "sgd", "SGD, no state"
    SGD_MOMENTUM = "sgd_momentum", "SGD with momentum, 1 extra value per parameter"
    ADAM = "adam", "Adam, 2 extra values per parameter"


_STATE_VALUES = {"sgd": 0, "sgd_momentum": 1, "adam": 2}

ZERO_STAGES = (0, 1, 2, 3)
# Each stage shards what the one before it did, and one more kind of state.
ZERO_SHARDED_TERMS = {
    0: (),
    1: ("master_weights", "optimizer_state"),
    2: ("master_weights", "optimizer_state", "gradients"),
    3: ("master_weights", "optimizer_state", "gradients", "parameters"),
}


def to_gb(n_bytes: float) -> float:
    """Bytes in decimal gigabytes."""
    return n_bytes / BYTES_PER_GB


def check_whole(value: object, what: str, *, minimum: int = 1) -> int:
    """`value` if it is a whole number of at least `minimum`; else a readable ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{what} must be a whole number of at least {minimum}, got {value!r}.")
    return int(value)


def check_choice(value: str, choices: Iterable[str], what: str) -> str:
    """`value` if it is one of `choices`; else a ValueError that lists them."""
    options = tuple(choices)
    require(value in options, f"Unknown {what} {value!r}: pick one of {', '.join(options)}.")
    return value


def optimizer_state_values(optimizer: str) -> int:
    """Extra values the optimizer keeps per parameter: 0 for SGD, 1 with momentum, 2 for Adam."""
    return _STATE_VALUES[check_choice(optimizer, BudgetOptimizer, "optimizer")]


@dataclass(frozen=True)
class TermShare:
    """One term of a budget as a chart or table shows it."""

    term: str
    label: str
    gb: float
    share_percent: float


@dataclass(frozen=True)
class MemoryTerms:
    """Bytes claimed by each term of a training-memory budget (on one GPU)."""

    parameters_bytes: float = 0.0
    gradients_bytes: float = 0.0
    master_weights_bytes: float = 0.0
    optimizer_state_bytes: float = 0.0
    activations_bytes: float = 0.0
    communication_buffers_bytes: float = 0.0
    workspace_bytes: float = 0.0
    runtime_overhead_bytes: float = 0.0

    def __post_init__(self) -> None:
        # Budgets are built thousands of times a page (sweeps, timelines): the message is only worded for a
        # term that fails.
        for term in TERMS:
            value = getattr(self, f"{term}_bytes")
            if not (value >= 0 and np.isfinite(value)):
                raise ValueError(
                    f"The {term.replace('_', ' ')} term must be a finite, non-negative number of bytes."
                )

    def term_bytes(self, term: str) -> float:
        """Bytes of one term, by its name in `TERMS`."""
        if term not in TERMS:
            raise ValueError(f"Unknown memory term {term!r}: pick one of {', '.join(TERMS)}.")
        return getattr(self, f"{term}_bytes")

    @cached_property  # a timeline asks each moment's total many times a run
    def total_bytes(self) -> float:
        """The sum of every term: the peak the device must hold."""
        return sum(getattr(self, f"{term}_bytes") for term in TERMS)

    @property
    def total_gb(self) -> float:
        """The total in decimal GB."""
        return to_gb(self.total_bytes)

    def shares(self) -> tuple[TermShare, ...]:
        """The non-zero terms in stacking order, each in GB and as a percentage of the total."""
        total = self.total_bytes
        return tuple(
            TermShare(
                term=term,
                label=TERM_LABELS[term],
                gb=to_gb(self.term_bytes(term)),
                share_percent=100 * self.term_bytes(term) / total,
            )
            for term in TERMS
            if self.term_bytes(term) > 0
        )


@dataclass(frozen=True)
class Precision:
    """Bytes per parameter for each copy of the model's state, and bytes per saved activation value.

    Optimizer state and the logits the loss keeps are FP32 unless a convention says otherwise
    (pure BF16 training keeps both in 2 bytes).
    """

    weight_bytes: int
    gradient_bytes: int
    master_bytes: int
    activation_bytes: int
    optimizer_state_bytes: int = OPTIMIZER_STATE_BYTES_PER_VALUE
    logit_bytes: int = LOGIT_BYTES

    def state_bytes_per_parameter(self, optimizer: str) -> int:
        """Weights + gradients + master copy + optimizer state, per parameter (16 for FP32 Adam)."""
        return (
            self.weight_bytes
            + self.gradient_bytes
            + self.master_bytes
            + self.optimizer_state_bytes * optimizer_state_values(optimizer)
        )


def model_state_terms(*, parameters: float, precision: Precision, optimizer: str) -> MemoryTerms:
    """The four terms fixed by the model alone: parameters, gradients, master copy, optimizer state."""
    require(parameters > 0, f"The parameter count must be positive, got {parameters!r}.")
    parameters = float(parameters)
    return MemoryTerms(
        parameters_bytes=parameters * precision.weight_bytes,
        gradients_bytes=parameters * precision.gradient_bytes,
        master_weights_bytes=parameters * precision.master_bytes,
        optimizer_state_bytes=parameters
        * precision.optimizer_state_bytes
        * optimizer_state_values(optimizer),
    )


def zero_sharded(terms: MemoryTerms, *, zero_stage: int, gpus: int) -> MemoryTerms:
    """Per-GPU terms when ZeRO at `zero_stage` splits model state over `gpus` data-parallel GPUs.

    Stage 1 shards the optimizer state and the FP32 master copy, stage 2 adds the gradients,
    stage 3 the parameters. Activations, buffers and overheads stay whole on every GPU.
    """
    require(zero_stage in ZERO_STAGES, f"The ZeRO stage must be 0, 1, 2 or 3, got {zero_stage!r}.")
    gpus = check_whole(gpus, "The number of GPUs")
    return replace(
        terms, **{f"{term}_bytes": terms.term_bytes(term) / gpus for term in ZERO_SHARDED_TERMS[zero_stage]}
    )


def effective_batch(*, micro_batch: int, accumulation_steps: int, gpus: int) -> int:
    """Samples per optimizer step: micro-batch x accumulation steps x data-parallel GPUs."""
    return (
        check_whole(micro_batch, "The micro-batch")
        * check_whole(accumulation_steps, "The accumulation steps")
        * check_whole(gpus, "The number of GPUs")
    )


def accumulation_steps(*, global_batch: int, micro_batch: int, gpus: int) -> int:
    """Micro-batches each GPU accumulates to reach `global_batch`; ValueError if it does not divide evenly."""
    per_step = check_whole(micro_batch, "The micro-batch") * check_whole(gpus, "The number of GPUs")
    global_batch = check_whole(global_batch, "The global batch")
    require(
        global_batch % per_step == 0,
        f"A global batch of {global_batch:,} cannot be split evenly into micro-batches of "
        f"{micro_batch:,} on {gpus:,} GPUs.",
    )
    return global_batch // per_step


@dataclass(frozen=True)
class Verdict:
    """Whether a budget fits its device, by how much, and which term to cut first."""

    fits: bool
    total_gb: float
    device_gb: float
    headroom_gb: float
    over_gb: float
    largest_term: str
    largest_label: str
    largest_gb: float
    largest_share_percent: float
    lever: str


def budget_verdict(terms: MemoryTerms, *, device_gb: float) -> Verdict:
    """Fits or not against `device_gb`, the headroom (or overshoot) and the largest term's lever."""
    require(
        device_gb > 0 and np.isfinite(device_gb),
        f"Device memory must be a positive number of GB, got {device_gb!r}.",
    )
    require(terms.total_bytes > 0, "A budget needs at least one term above zero.")
    largest = max(terms.shares(), key=lambda share: share.gb)  # max keeps the first of equals
    headroom_gb = device_gb - terms.total_gb
    return Verdict(
        fits=headroom_gb >= 0,
        total_gb=terms.total_gb,
        device_gb=device_gb,
        headroom_gb=max(headroom_gb, 0.0),
        over_gb=max(-headroom_gb, 0.0),
        largest_term=largest.term,
        largest_label=largest.label,
        largest_gb=largest.gb,
        largest_share_percent=largest.share_percent,
        lever=lessons.sentence("levers", largest.term),
    )


class SweepAxis(Labelled):
    """The setting a memory sweep grows."""

    SEQ_LEN = "seq_len", "Sequence length (tokens)"
    BATCH = "batch", "Micro-batch (sequences)"


@dataclass(frozen=True)
class MemorySweep:
    """Peak memory as one run setting grows, and where it stops fitting the device."""

    axis: str
    axis_label: str
    values: tuple[int, ...]
    total_gb: tuple[float, ...]
    fits: tuple[bool, ...]
    device_gb: float
    largest_fitting: int | None
    first_failing: int | None


def sweep_totals(
    terms: MemoryTerms, *, axis: str, values: Sequence[int], activations_bytes: np.ndarray, device_gb: float
) -> MemorySweep:
    """Totals when only the activations change, to `activations_bytes[i]` at `values[i]`.

    Every other term is independent of batch and sequence length, so it is taken from `terms`.
    """
    check_choice(axis, SweepAxis, "sweep axis")
    activations = np.asarray(activations_bytes, dtype=float)
    require(len(values) == activations.size > 0, "A sweep needs one activation size per value.")
    totals_gb = (terms.total_bytes - terms.activations_bytes + activations) / BYTES_PER_GB
    fitting = totals_gb <= device_gb
    failing = [v for v, ok in zip(values, fitting, strict=True) if not ok]
    first_failing = failing[0] if failing else None
    below = [
        v
        for v, ok in zip(values, fitting, strict=True)
        if ok and (first_failing is None or v < first_failing)
    ]
    return MemorySweep(
        axis=axis,
        axis_label=SweepAxis.label_of(axis),
        values=tuple(int(v) for v in values),
        total_gb=tuple(float(t) for t in totals_gb),
        fits=tuple(bool(ok) for ok in fitting),
        device_gb=float(device_gb),
        largest_fitting=below[-1] if below else None,
        first_failing=first_failing,
    )
