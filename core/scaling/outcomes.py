"""Every part's contrast for a learner's own settings, and which prediction option comes true in each.

The Scaling out page draws these contrasts and the instructor's class view counts their outcomes, from
this one computation, so the two always agree.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.scaling import capacity, layout, pipeline, quality, throughput
from core.scaling.evidence import current_settings, prediction_track
from core.scaling.scenarios import load_scaling, track
from core.scaling.tracks import Track
from core.scaling.wording import PARTS


@dataclass(frozen=True)
class PartContrasts:
    """The computed result of parts A to E for one set of Scaling out settings."""

    track: Track
    a: throughput.ScalingContrast
    b: capacity.CapacityContrast  # on part A's larger pool
    c: layout.LayoutContrast
    d: pipeline.PipelineContrast
    e: quality.QualityComparison  # from part A's larger pool

    def outcomes(self) -> dict[str, str]:
        """Part key to the option that comes true."""
        return {
            "A": self.a.outcome,
            "B": self.b.outcome,
            "C": self.c.outcome,
            "D": self.d.outcome,
            "E": self.e.winner,
        }


# The settings the contrasts depend on; nothing else of what a learner stored reaches the cache below.
_INPUTS = ("track", "mode", "pool", "zero_stage", "recompute", "layout", "micro_batches")


def part_contrasts(stored: Mapping[str, Any]) -> PartContrasts:
    """Every part's contrast under these Scaling out settings (defaults fill gaps)."""
    settings = current_settings(stored)
    return _contrasts(tuple(settings[name] for name in _INPUTS))  # the schema's values: all hashable


# The same settings give every learner the same contrasts, and working them out is most of the
# Scaling out page's own time: a workshop has a few dozen combinations, so each is worked out once.
@functools.lru_cache(maxsize=512)
def _contrasts(key: tuple[Any, ...]) -> PartContrasts:
    return _compute(dict(zip(_INPUTS, key, strict=True)))


def _compute(settings: Mapping[str, Any]) -> PartContrasts:
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
    return PartContrasts(
        track=chosen,
        a=part_a,
        b=capacity.capacity_contrast(
            fleet=fleet,
            cases=cases,
            zero_stage=settings["zero_stage"],
            recompute=settings["recompute"],
            gpus=part_a.result.workers,  # part A's larger pool: ZeRO shards over its nodes
        ),
        c=layout.layout_contrast(
            fleet=fleet,
            case=cases.layout,
            alternative=settings["layout"],
            efficiency=cases.compute_efficiency,
            dtype=cases.dtype,
        ),
        d=pipeline.pipeline_contrast(fleet=fleet, cases=cases, micro_batches=settings["micro_batches"]),
        e=quality.compare_policies(
            step_ms=step.step_ms,
            global_batch=step.global_batch,
            convergence=chosen.convergence,
            straggler=chosen.straggler,
        ),
    )


def graded_outcomes(stored: Mapping[str, Any], prediction_tracks: Any = None) -> dict[str, str]:
    """Part key to the option that comes true under these settings on the track each part's prediction
    was locked on (the current track where none is recorded), so switching track never regrades one."""
    settings = current_settings(stored)
    by_track: dict[str, PartContrasts] = {}
    graded = {}
    for part in PARTS:
        key = prediction_track(prediction_tracks, part, settings["track"])
        if key not in by_track:
            by_track[key] = part_contrasts({**settings, "track": key})
        graded[part] = by_track[key].outcomes()[part]
    return graded
