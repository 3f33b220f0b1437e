"""What the Memory page's two sketch predictions are graded against: the careful count of the step its
sliders describe, on the card its device choice names.

The page shows the lesson's rough rule first (five terms, all alive at once), but a guess is graded
against what is true for that setup. The rule and the count disagree on the lesson's own model: the rule
keeps four B·S·H tensors a block, the code keeps several times that (the MLP's 4·H-wide tensors, the
norms' inputs, dropout masks) plus the loss's FP32 logits, so saved activations, not optimizer state,
are the largest term, and the step breaks at a much shorter sequence.

The count is PyTorch with Hugging Face transformers, torch's SDPA attention, no recomputation and the
default `foreach` optimizer: the code a learner would most likely run, fixed here so that the grade depends
only on the settings the page shows above the sketch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.memory.phases import STEP_CACHE_SIZE, step_phases
from core.memory.reference import cuda_context_bytes
from core.memory.setup import StepSetup
from core.memory.timeline import chart_terms, step_timeline
from core.memory.verdict import GIB, Capacity, whole_card
from core.models import resolve_model
from core.units import capacity_label

# The code the count follows (see the module's docstring).
GRADED_STACK = "hf"
GRADED_ATTENTION = "sdpa"
GRADED_RECOMPUTE = "none"
GRADED_OPTIMIZER_IMPL = "foreach"
# The lesson's two number formats as the phase model names them: FP32 throughout, or a model cast to 2 bytes.
_PRECISION = {"fp32": "fp32", "bf16": "bf16"}


def lesson_device_bytes(device_choice: str) -> int:
    """The memory of the card the lesson's device choice names, as the card reports it: '24' is a 24 GiB
    card (an RTX 4090 or an L4 in data/gpus.csv), 25,769,803,776 bytes."""
    return int(device_choice) * GIB


def lesson_capacity(device_choice: str) -> Capacity:
    """The lesson's card with the CUDA context and the allocator's reserve taken out, as on any whole card."""
    total_bytes = lesson_device_bytes(device_choice)
    return whole_card(capacity_label(total_bytes), total_bytes, context_bytes=cuda_context_bytes())


def graded_step(settings: Mapping[str, Any], *, seq_len: int | None = None) -> StepSetup:
    """The step the lesson's sliders describe (at `seq_len` when given), as the careful count reads it."""
    return StepSetup(
        model=resolve_model("custom", hidden=settings["hidden"], layers=settings["layers"]),
        batch=settings["batch"],
        seq_len=settings["seq_len"] if seq_len is None else seq_len,
        precision=_PRECISION[settings["dtype"]],
        attention=GRADED_ATTENTION,
        recompute=GRADED_RECOMPUTE,
        optimizer=settings["optimizer"],
        optimizer_impl=GRADED_OPTIMIZER_IMPL,
        stack=GRADED_STACK,
    )


@dataclass(frozen=True)
class CarefulOutcomes:
    """The careful count's answers to the sketch's two questions."""

    largest_term: str  # one of the budget's terms, at the step's peak
    largest_gb: float
    optimizer_state_gb: float
    breaks: str  # the first sequence length on the sweep that does not fit, or "never"
    largest_fitting: int | None  # the longest sequence on the sweep that fits, if any


def careful_outcomes(settings: Mapping[str, Any], *, seq_lens: tuple[int, ...]) -> CarefulOutcomes:
    """Which term is largest at the peak of the step the sliders describe, and the first of `seq_lens` at
    which two iterations of it no longer fit the lesson's card."""
    return _careful_outcomes(tuple(settings[name] for name in GRADED_SETTINGS), seq_lens)


# The settings the grade reads, in the order `_careful_outcomes` takes them.
GRADED_SETTINGS = ("hidden", "layers", "dtype", "optimizer", "batch", "seq_len", "device_gb")


@lru_cache(maxsize=STEP_CACHE_SIZE)  # settings in, nothing about a learner: the page asks twice a run
def _careful_outcomes(values: tuple[Any, ...], seq_lens: tuple[int, ...]) -> CarefulOutcomes:
    settings = dict(zip(GRADED_SETTINGS, values, strict=True))
    phases = step_phases(graded_step(settings))
    at_peak = chart_terms(phases.own(phases.peak_phase).terms, overhead_bytes=0.0)
    largest = max(at_peak.shares(), key=lambda share: share.gb)
    capacity = lesson_capacity(settings["device_gb"])
    # The sweep's sixteen timelines bypass step_timeline's shared cache, which they would otherwise fill,
    # pushing out the fixed setups Run A and the phase count show on every run.
    timeline = step_timeline.__wrapped__
    fitting = [
        length
        for length in seq_lens
        if timeline(graded_step(settings, seq_len=length), capacity=capacity).failure is None
    ]
    failing = [length for length in seq_lens if length not in fitting]
    return CarefulOutcomes(
        largest_term=largest.term,
        largest_gb=largest.gb,
        optimizer_state_gb=at_peak.optimizer_state_bytes / 1e9,
        breaks=str(failing[0]) if failing else "never",
        largest_fitting=max((f for f in fitting if not failing or f < failing[0]), default=None),
    )
