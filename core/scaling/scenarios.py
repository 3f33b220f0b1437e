"""The scaling data file, `data/scaling_tracks.json`, read and validated once, and lookups of its tracks.

What each entry is and how it is checked lives with its job: fleets and models in `fleets`, tracks in
`tracks`, the fixed cases of parts B-D in `cases`, the questions and choices in `wording`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import read_json, require
from core.scaling.cases import Cases, parse_cases
from core.scaling.fleets import Fleet, parse_fleet, parse_track_model
from core.scaling.tracks import Track, parse_track
from core.scaling.wording import (
    PARTS,
    PartText,
    SynthesisText,
    parse_part,
    parse_synthesis,
)

FILE = "scaling_tracks.json"


@dataclass(frozen=True)
class ScalingData:
    """Everything in the scaling data file, validated."""

    fleets: dict[str, Fleet]
    tracks: dict[str, Track]
    cases: Cases
    parts: dict[str, PartText]
    synthesis: SynthesisText


def _keyed(items: list[Any], what: str) -> dict[str, Any]:
    keys = [item.key for item in items]
    require(len(set(keys)) == len(keys), f"scaling_tracks.json repeats a {what} key.")
    return {item.key: item for item in items}


def parse_scaling(raw: Any) -> ScalingData:
    """Validate the whole scaling data file."""
    require(isinstance(raw, dict), "scaling_tracks.json must hold an object.")
    fleets = _keyed([parse_fleet(f) for f in raw.get("fleets", [])], "fleet")
    models = _keyed([parse_track_model(m) for m in raw.get("track_models", [])], "track model")
    tracks = _keyed([parse_track(t, models, fleets) for t in raw.get("tracks", [])], "track")
    require(bool(tracks), "scaling_tracks.json lists no tracks.")
    parts = _keyed([parse_part(p) for p in raw.get("parts", [])], "part")
    require(
        tuple(parts) == PARTS, f"scaling_tracks.json must describe parts {', '.join(PARTS)} in that order."
    )
    return ScalingData(
        fleets=fleets,
        tracks=tracks,
        cases=parse_cases(raw.get("cases")),
        parts=parts,
        synthesis=parse_synthesis(raw.get("synthesis") or {}),
    )


@lru_cache(maxsize=1)
def load_scaling() -> ScalingData:
    """The scaling data, read and validated once per process."""
    return parse_scaling(read_json(FILE))


def track_keys() -> tuple[str, ...]:
    """Track keys in file order (the choices of the track picker)."""
    return tuple(load_scaling().tracks)


def track(key: str) -> Track:
    """The track with this key; ValueError naming the known ones otherwise."""
    tracks = load_scaling().tracks
    require(key in tracks, f"There is no track {key!r}. Known tracks: {', '.join(tracks)}.")
    return tracks[key]


def track_label(key: str) -> str:
    """The track's name as the training-context picker shows it."""
    return track(key).label
