"""Per-session markers and the checks that each session only ever gets its own back.

Every simulated learner writes values that identify it: a text marker in text fields and
a session-specific position on every slider it moves. A leak between sessions shows up as
another session's text marker in our messages, or as a widget value coming back that is
not the one this session set.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

# Text markers look like "bench-s007-k3f9": session index plus a per-run token, so a
# stale server from an earlier run cannot produce a false match.
_MARKER_RE = re.compile(rb"bench-s\d{3}-[a-z0-9]{4}")


def text_marker(session_index: int, run_token: str) -> str:
    """The text this session types into text fields."""
    if not 0 <= session_index <= 999:
        raise ValueError(f"Session index must be between 0 and 999, not {session_index}.")
    if not re.fullmatch(r"[a-z0-9]{4}", run_token):
        raise ValueError(f"The run token must be four lowercase letters or digits, not {run_token!r}.")
    return f"bench-s{session_index:03d}-{run_token}"


def foreign_markers(payload: bytes, own_marker: str) -> list[str]:
    """Text markers in a raw message that belong to some other session."""
    own = own_marker.encode()
    return sorted({m.decode() for m in _MARKER_RE.findall(payload) if m != own})


def grid_positions(*, low: float, high: float, step: float) -> int:
    """How many values a slider from `low` to `high` in steps of `step` can take."""
    if step <= 0 or high < low:
        raise ValueError(f"A slider needs step > 0 and high >= low (got {low}..{high} step {step}).")
    return math.floor((high - low) / step + 1e-9) + 1


def marker_position(*, session_index: int, visit: int, positions: int, avoid: int | None) -> int:
    """A slider position that differs between sessions and alternates between visits.

    Spreads sessions over the range with a stride coprime to most range sizes and skips
    the default position when it can, so a value that came back from the default is not
    mistaken for this session's own.
    """
    if positions < 1:
        raise ValueError("A slider needs at least one position.")
    position = (session_index * 7 + visit + 1) % positions
    if position == avoid and positions > 1:
        position = (position + 1) % positions
    return position


def marker_value(
    *, session_index: int, visit: int, low: float, high: float, step: float, default: float | None
) -> float:
    """The value this session sets on a numeric slider on this visit."""
    positions = grid_positions(low=low, high=high, step=step)
    avoid = None if default is None else round((default - low) / step)
    position = marker_position(session_index=session_index, visit=visit, positions=positions, avoid=avoid)
    return low + position * step


def same_value(expected: object, echoed: object) -> bool:
    """Widget values compare equal (floats within a relative 1e-9, lists element by element)."""
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(echoed, Sequence) or isinstance(echoed, str) or len(expected) != len(echoed):
            return False
        return all(same_value(e, g) for e, g in zip(expected, echoed, strict=True))
    if isinstance(expected, float) or isinstance(echoed, float):
        if not isinstance(echoed, (int, float)) or not isinstance(expected, (int, float)):
            return False
        return math.isclose(float(expected), float(echoed), rel_tol=1e-9, abs_tol=1e-12)
    return expected == echoed


@dataclass
class IsolationTally:
    """Counts of checks made and mismatches found, with a few examples for the report."""

    checks: int = 0
    unchecked: int = 0
    mismatches: int = 0
    examples: list[str] = field(default_factory=list)

    def record(self, ok: bool, example: str) -> None:
        """Count one check; keep the first few mismatch descriptions."""
        self.checks += 1
        if not ok:
            self.mismatches += 1
            if len(self.examples) < 5:
                self.examples.append(example)

    def merge(self, other: IsolationTally) -> None:
        """Add another tally into this one."""
        self.checks += other.checks
        self.unchecked += other.unchecked
        self.mismatches += other.mismatches
        self.examples.extend(other.examples[: max(0, 5 - len(self.examples))])
