"""The lesson's first-order memory budget, reproduced exactly: five terms from the shape and the run.

Parameters are about 12·H² per transformer block; weights and gradients take the chosen dtype;
optimizer state stays in FP32; each block keeps about four B·S·H tensors for backward; workspace
is a flat 1 GB. Rough, but enough to tell which term is the largest, and that is all the
lesson uses it for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from core.memory.budget import (
    WORKSPACE_BYTES,
    MemorySweep,
    MemoryTerms,
    check_whole,
    model_state_terms,
    sweep_totals,
)
from core.memory.setup import LessonSetup

PARAMETERS_PER_HIDDEN_SQUARED = 12  # attention 4·H² + MLP 8·H² per block
SAVED_TENSORS_PER_LAYER = 4  # the lesson's rough count of B·S·H tensors a block keeps for backward


def lesson_parameter_count(*, hidden: int, layers: int) -> int:
    """The lesson's parameter count: 12·H² per block times the number of blocks."""
    return (
        PARAMETERS_PER_HIDDEN_SQUARED
        * check_whole(hidden, "Hidden size") ** 2
        * check_whole(layers, "Layers")
    )


def lesson_activation_bytes(
    setup: LessonSetup, *, batch: int | np.ndarray, seq_len: int | np.ndarray
) -> float | np.ndarray:
    """B·S·H·layers·4 tensors·dtype bytes; `batch` or `seq_len` may be arrays (for sweeps)."""
    return (
        batch
        * seq_len
        * setup.hidden
        * setup.layers
        * SAVED_TENSORS_PER_LAYER
        * setup.precision.activation_bytes
    )


def lesson_terms(setup: LessonSetup) -> MemoryTerms:
    """The lesson's five terms: parameters, gradients, optimizer state, activations, workspace."""
    state = model_state_terms(
        parameters=lesson_parameter_count(hidden=setup.hidden, layers=setup.layers),
        precision=setup.precision,
        optimizer=setup.optimizer,
    )
    return replace(
        state,
        activations_bytes=float(lesson_activation_bytes(setup, batch=setup.batch, seq_len=setup.seq_len)),
        workspace_bytes=WORKSPACE_BYTES,
    )


def lesson_sweep(setup: LessonSetup, *, axis: str, values: Sequence[int], device_gb: float) -> MemorySweep:
    """The lesson's total as batch or sequence length takes each of `values`, the rest held fixed."""
    grid = np.asarray(values)
    activations = lesson_activation_bytes(
        setup,
        batch=grid if axis == "batch" else setup.batch,
        seq_len=grid if axis == "seq_len" else setup.seq_len,
    )
    return sweep_totals(
        lesson_terms(setup),
        axis=axis,
        values=values,
        activations_bytes=np.asarray(activations),
        device_gb=device_gb,
    )
