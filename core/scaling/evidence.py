"""Locked predictions, evidence snapshots, stale evidence and synthesis readiness, as plain data.

A prediction is locked per part, and the track it was locked on is kept beside it (first one
stands), so a prediction is always graded on the numbers of the track the learner was looking at.
A snapshot is what a learner captured for one part: prediction, inputs, baseline, result and
decision, plus the upstream choices it was computed under. When one of those choices changes (the
track for every part; part A's pool for part B; part A's mode and pool for part E), the snapshot is
stale.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.answers import record_first
from core.datafiles import require
from core.scaling.scenarios import load_scaling
from core.scaling.wording import PARTS
from core.settings_schema import section

PREDICTIONS = "scaling.predictions"
PREDICTION_TRACKS = "scaling.prediction_tracks"
SNAPSHOTS = "scaling.snapshots"
SYNTHESIS = "scaling.synthesis"
SETTINGS_SECTION = "scaling"

# The settings each part's evidence depends on, beyond its own inputs.
UPSTREAM_SETTINGS: dict[str, tuple[str, ...]] = {
    "A": ("track",),
    "B": ("track", "pool"),
    "C": ("track",),
    "D": ("track",),
    "E": ("track", "mode", "pool"),
}
MISSING, STALE, CURRENT = "missing", "stale", "current"
SYNTHESIS_CHOICES = ("plan", "rejected", "trigger", "limitation")


def is_option(value: Any, options: Mapping[str, str]) -> bool:
    """Whether `value` is one of `options`' ids; a list or object from a client is simply not one."""
    return isinstance(value, str) and value in options


def _check_part(part: str) -> None:
    require(part in PARTS, f"There is no part {part!r}; the parts are {', '.join(PARTS)}.")


def lock_prediction(predictions: Mapping[str, str], part: str, option: str) -> tuple[dict[str, str], bool]:
    """Predictions with this one added, and whether it was accepted (a part's first prediction stands)."""
    _check_part(part)
    options = load_scaling().parts[part].options
    require(is_option(option, options), f"Part {part} has no such prediction.")
    return record_first(predictions, part, option)


def record_prediction_track(tracks: Mapping[str, str], part: str, track_key: str) -> dict[str, str]:
    """The prediction tracks with `part`'s added; a part's first recorded track stands."""
    _check_part(part)
    require(track_key in load_scaling().tracks, f"There is no track {track_key!r}.")
    return record_first(tracks, part, track_key)[0]


def prediction_track(tracks: Any, part: str, current: str) -> str:
    """The track `part`'s prediction was locked on; `current` when the record names no known track
    (a prediction locked before the lab kept tracks, or a restored file without them)."""
    found = tracks.get(part) if isinstance(tracks, Mapping) else None
    return found if isinstance(found, str) and found in load_scaling().tracks else current


def current_settings(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The page's settings: what the learner stored over the schema's defaults."""
    return {**section(SETTINGS_SECTION).defaults(), **stored}


def prediction_of(predictions: Any, part: str) -> str | None:
    """The locked prediction of `part` if the record holds one the part offers (a restored file may not)."""
    option = predictions.get(part) if isinstance(predictions, Mapping) else None
    return option if is_option(option, load_scaling().parts[part].options) else None


def valid_snapshot(part: str, snapshot: Any) -> bool:
    """Whether `snapshot` has the shape `make_snapshot` gives, with options this part offers."""
    text = load_scaling().parts[part]
    return (
        isinstance(snapshot, Mapping)
        and is_option(snapshot.get("prediction"), text.options)
        and is_option(snapshot.get("decision"), text.decisions)
        and isinstance(snapshot.get("upstream"), Mapping)
        and all(isinstance(snapshot.get(key), Mapping) for key in ("inputs", "baseline", "result"))
    )


def saved_synthesis(raw: Any) -> dict[str, str]:
    """The stored synthesis, keeping only choices the lab offers and text for the rationale."""
    if not isinstance(raw, Mapping):
        return {}
    text = load_scaling().synthesis
    allowed = {
        "plan": text.plans,
        "rejected": text.plans,
        "trigger": text.triggers,
        "limitation": text.limitations,
    }
    kept = {name: raw[name] for name, options in allowed.items() if is_option(raw.get(name), options)}
    if isinstance(raw.get("rationale"), str):
        kept["rationale"] = raw["rationale"]
    return kept


def upstream(part: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The upstream choices part `part`'s result depends on, read from the page settings."""
    _check_part(part)
    return {name: settings.get(name) for name in UPSTREAM_SETTINGS[part]}


def make_snapshot(
    *,
    part: str,
    settings: Mapping[str, Any],
    prediction: str,
    inputs: Mapping[str, Any],
    baseline: Mapping[str, Any],
    result: Mapping[str, Any],
    decision: str,
) -> dict[str, Any]:
    """A snapshot as a plain JSON object; the decision must be one the part offers."""
    _check_part(part)
    text = load_scaling().parts[part]
    require(is_option(prediction, text.options), f"Part {part} needs a locked prediction before a snapshot.")
    require(is_option(decision, text.decisions), f"Part {part} has no such decision.")
    return {
        "part": part,
        "upstream": upstream(part, settings),
        "prediction": prediction,
        "inputs": dict(inputs),
        "baseline": dict(baseline),
        "result": dict(result),
        "decision": decision,
    }


def snapshot_status(part: str, snapshots: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """'missing', 'stale' (an upstream choice changed since capture) or 'current'."""
    snapshot = snapshots.get(part)
    if not isinstance(snapshot, Mapping) or not valid_snapshot(part, snapshot):
        return MISSING
    return CURRENT if snapshot.get("upstream") == upstream(part, settings) else STALE


def changed_upstream(part: str, snapshots: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the upstream settings (of UPSTREAM_SETTINGS) that changed since this part's snapshot
    was captured."""
    snapshot = snapshots.get(part)
    if not isinstance(snapshot, Mapping) or not valid_snapshot(part, snapshot):
        return ()
    captured, now = snapshot.get("upstream") or {}, upstream(part, settings)
    return tuple(name for name in now if captured.get(name) != now[name])


def statuses(snapshots: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, str]:
    """Every part's snapshot status, in part order."""
    return {part: snapshot_status(part, snapshots, settings) for part in PARTS}


@dataclass(frozen=True)
class Readiness:
    """What still keeps the synthesis from being ready; ready when nothing does."""

    not_current: tuple[str, ...]  # parts without a current snapshot
    unchosen: tuple[str, ...]  # synthesis choices not made
    same_plan: bool  # the rejected alternative is the recommended plan
    no_rationale: bool
    unquantified: bool  # a rationale without a single number

    @property
    def ready(self) -> bool:
        """Nothing is missing."""
        return not (
            self.not_current or self.unchosen or self.same_plan or self.no_rationale or self.unquantified
        )


def synthesis_readiness(synthesis: Any, part_statuses: Mapping[str, str]) -> Readiness:
    """Ready when all five snapshots are current, every choice is made, the plan differs from the
    rejected alternative and the rationale cites at least one number."""
    synthesis = saved_synthesis(synthesis)
    unchosen = tuple(name for name in SYNTHESIS_CHOICES if name not in synthesis)
    rationale = synthesis.get("rationale", "")
    return Readiness(
        not_current=tuple(part for part in PARTS if part_statuses.get(part) != CURRENT),
        unchosen=unchosen,
        same_plan=not unchosen and synthesis["plan"] == synthesis["rejected"],
        no_rationale=not rationale.strip(),
        unquantified=bool(rationale.strip()) and not re.search(r"\d", rationale),
    )


@dataclass(frozen=True)
class EvidenceSummary:
    """What the report says about the Scaling out lab: evidence, readiness and the plan chosen."""

    parts_current: int
    parts_total: int
    ready: bool
    choices: dict[str, str]  # synthesis choice name -> the label the learner picked
    rationale: str | None


def evidence_summary(
    records: Mapping[str, Any], stored_settings: Mapping[str, Any]
) -> EvidenceSummary | None:
    """The Scaling out lab in a few facts, or None if the learner never captured or wrote anything there."""
    raw_snapshots = records.get(SNAPSHOTS)
    snapshots: Mapping[str, Any] = raw_snapshots if isinstance(raw_snapshots, Mapping) else {}
    synthesis = saved_synthesis(records.get(SYNTHESIS))
    if not snapshots and not synthesis:
        return None
    settings = current_settings(stored_settings)
    part_statuses = statuses(snapshots, settings)
    text = load_scaling().synthesis
    labels = {
        "plan": text.plans,
        "rejected": text.plans,
        "trigger": text.triggers,
        "limitation": text.limitations,
    }
    rationale = synthesis.get("rationale", "").strip()
    return EvidenceSummary(
        parts_current=sum(status == CURRENT for status in part_statuses.values()),
        parts_total=len(PARTS),
        ready=synthesis_readiness(synthesis, part_statuses).ready,
        choices={name: labels[name][synthesis[name]] for name in SYNTHESIS_CHOICES if name in synthesis},
        rationale=rationale or None,
    )
