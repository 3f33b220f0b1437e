"""The fixed cases of parts B-D (a capacity case, a layout case and a pipeline case) and the memory
settings they share, checked against what the memory core knows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import validate
from core.datafiles import positive_number, require
from core.gpus import check_dtype
from core.memory import ZERO_STAGES, optimizer_state_values
from core.memory.settings import AttentionKind, Recomputation, precision
from core.models import preset


@dataclass(frozen=True)
class CapacityCase:
    """Part B: a large model made to fit with tensor parallel inside nodes and ZeRO across them."""

    model: str
    seq_len: int
    micro_batch: int


@dataclass(frozen=True)
class LayoutCase:
    """Part C: one model, one batch, the same GPUs arranged three ways."""

    model: str
    global_batch: int
    seq_len: int
    micro_batch_count: int
    zero_stage: int


@dataclass(frozen=True)
class PipelineCase:
    """Part D: fixed-size micro-batches fed into a deep pipeline."""

    model: str
    micro_batch_size: int
    seq_len: int
    stages: int
    tensor_parallel: int
    baseline_micro_batches: int
    zero_stage: int
    recompute: str


@dataclass(frozen=True)
class Cases:
    """The settings parts B-D share, and each part's fixed case."""

    dtype: str
    compute_efficiency: float
    precision: str
    optimizer: str
    attention: str
    capacity: CapacityCase
    layout: LayoutCase
    pipeline: PipelineCase


def parse_cases(raw: Mapping[str, Any]) -> Cases:
    """The validated fixed cases of parts B-D; memory settings must be ones the memory core knows."""
    require(isinstance(raw, dict), "scaling_tracks.json needs a 'cases' object.")
    efficiency = positive_number(raw.get("compute_efficiency"), "compute_efficiency")
    require(efficiency <= 1, "compute_efficiency is a fraction of peak and cannot exceed 1.")
    capacity, layout, pipeline = (raw.get(k) or {} for k in ("capacity", "layout", "pipeline"))
    require(
        layout.get("zero_stage") in ZERO_STAGES and pipeline.get("zero_stage") in ZERO_STAGES,
        "Case ZeRO stages must be 0, 1, 2 or 3.",
    )
    require(
        pipeline.get("recompute") in Recomputation.ids(),
        f"The pipeline case's recompute must be one of {', '.join(Recomputation.ids())}.",
    )
    require(
        raw.get("attention") in AttentionKind.ids(),
        f"attention must be one of {', '.join(AttentionKind.ids())}.",
    )
    precision(validate.text(raw, "precision", "The cases"))
    optimizer_state_values(validate.text(raw, "optimizer", "The cases"))
    for case in (capacity, layout, pipeline):
        # an unknown model preset raises ValueError at load time
        preset(validate.text(case, "model", "A case"))
    return Cases(
        dtype=check_dtype(validate.text(raw, "dtype", "The cases")),
        compute_efficiency=efficiency,
        precision=raw["precision"],
        optimizer=raw["optimizer"],
        attention=raw["attention"],
        capacity=CapacityCase(
            model=capacity["model"],
            **{
                k: validate.whole_number(capacity.get(k), f"The capacity case: '{k}'")
                for k in ("seq_len", "micro_batch")
            },
        ),
        layout=LayoutCase(
            model=layout["model"],
            zero_stage=layout["zero_stage"],
            **{
                k: validate.whole_number(layout.get(k), f"The layout case: '{k}'")
                for k in ("global_batch", "seq_len", "micro_batch_count")
            },
        ),
        pipeline=PipelineCase(
            model=pipeline["model"],
            zero_stage=pipeline["zero_stage"],
            recompute=pipeline["recompute"],
            **{
                k: validate.whole_number(pipeline.get(k), f"The pipeline case: '{k}'")
                for k in (
                    "micro_batch_size",
                    "seq_len",
                    "stages",
                    "tensor_parallel",
                    "baseline_micro_batches",
                )
            },
        ),
    )
