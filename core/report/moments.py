"""When things happened: the stored form of a moment (hand-in, export) and the same moment in words."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_timestamp(now: datetime) -> str:
    """The stored form of a moment (hand-in, export): ISO 8601 in UTC, to the second."""
    if now.tzinfo is None:
        raise ValueError("A timestamp needs a time zone.")
    return now.astimezone(UTC).replace(microsecond=0).isoformat()


def readable_time(iso: str) -> str:
    """An ISO timestamp as words, e.g. `30 November 2026 at 14:05 UTC`."""
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        raise ValueError(f"{str(iso)[:40]!r} is not a date and time.") from None
    if moment.tzinfo is None:
        raise ValueError(f"{iso[:40]!r} has no time zone.")
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 with an offset falls outside the calendar in UTC
        raise ValueError(f"{iso[:40]!r} is not a date and time this lab can read.") from None
    return f"{utc.day} {utc:%B %Y at %H:%M} UTC"
