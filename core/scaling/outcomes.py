"""Which prediction option comes true in each part for a learner's own settings.

The instructor's class view sets the class's predictions beside these computed answers; it uses
the same contrasts the Scaling out page draws, so the two always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.scaling import capacity, layout, pipeline, quality, throughput
from core.scaling.evidence import current_settings
from core.scaling.scenarios import load_scaling, track


def computed_outcomes(stored: Mapping[str, Any]) -> dict[str, str]:
    """Part key to the option that comes true under these Scaling out settings (defaults fill gaps)."""
    settings = current_settings(stored)
    chosen, cases = track(settings["track"]), load_scaling().cases
    fleet = chosen.fleet
    part_a = throughput.scaling_contrast(
        chosen,
        mode=settings["mode"],
        pool=settings["pool"],
        efficiency=cases.compute_efficiency,
        dtype=cases.dtype,
    )
    step = part_a.result.step
    return {
        "A": part_a.outcome,
        "B": capacity.capacity_contrast(
            fleet=fleet, cases=cases, zero_stage=settings["zero_stage"], recompute=settings["recompute"]
        ).outcome,
        "C": layout.layout_contrast(
            fleet=fleet,
            case=cases.layout,
            alternative=settings["layout"],
            efficiency=cases.compute_efficiency,
            dtype=cases.dtype,
        ).outcome,
        "D": pipeline.pipeline_contrast(
            fleet=fleet, cases=cases, microbatches=settings["microbatches"]
        ).outcome,
        "E": quality.compare_policies(
            step_ms=step.step_ms,
            global_batch=step.global_batch,
            convergence=chosen.convergence,
            straggler=chosen.straggler,
        ).winner,
    }
