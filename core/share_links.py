"""Reading settings out of a share link: keep what the schema accepts, explain what it skips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.settings_schema import Section

MAX_VALUE_CHARS = 64  # longer values are never legitimate settings


@dataclass(frozen=True)
class LinkReading:
    """The settings a link supplies, and one note per value that was not used as given."""

    values: dict[str, Any]
    notes: tuple[str, ...]


def read_link(section: Section, params: Mapping[str, Sequence[str]]) -> LinkReading:
    """Values for this section from URL parameters (name -> every value given for it)."""
    values: dict[str, Any] = {}
    notes: list[str] = []
    for field in section.fields:
        given = list(params.get(field.name, []))
        if not given:
            continue
        if len(given) > 1:
            notes.append(f"The link gives '{field.name}' {len(given)} times, so it was ignored.")
            continue
        text = given[0]
        if len(text) > MAX_VALUE_CHARS:
            notes.append(f"The link's value for '{field.name}' is too long, so it was ignored.")
            continue
        try:
            value = field.from_text(text)
        except ValueError as err:
            notes.append(f"Ignored from the link: {err}")
            continue
        if field.kind in ("int", "float") and value != float(text):
            notes.append(
                f"The link's '{field.name}' was adjusted to {field.to_text(value)}, the nearest "
                "value this page allows."
            )
        values[field.name] = value
    return LinkReading(values=values, notes=tuple(notes))


def link_setup(section: Section, params: Mapping[str, Sequence[str]]) -> LinkReading:
    """The whole setup a link gives this section: what `read_link` takes, and every setting the link leaves
    out at its default. A link that names none of the section's settings (a plain visit) gives nothing."""
    reading = read_link(section, params)
    if not any(field.name in params for field in section.fields):
        return reading
    return LinkReading(values={**section.defaults(), **reading.values}, notes=reading.notes)
