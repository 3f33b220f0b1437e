"""A learner's own measurement of a step's memory, phase by phase, against the estimate.

The page hands out `data/snippets/phase_peaks.py.txt`: around each phase of the first two steps it
reads `torch.cuda.max_memory_allocated()` (the peak reset at the start of each step) and prints
`{"step_1": {"forward": B, "backward": B, "optimizer_step": B}, "step_2": {…}}`, bytes as whole
numbers: the figures the H200 reference's memory.csv holds, and that `StepPhases.reported_bytes`
estimates. What is pasted back is checked before anything else reads it: its length first, then JSON
with exactly those keys and whole numbers of bytes in range; a bad paste is one sentence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from core.datafiles import DATA_DIR, require
from core.memory.phases import PHASES, step_phases
from core.memory.setup import StepSetup

SNIPPET_FILE = DATA_DIR / "snippets" / "phase_peaks.py.txt"
MAX_PASTE_CHARS = 2_000  # the snippet prints about 200 characters
MAX_BYTES = 2**50  # a petabyte: far above any device
STEPS = {"step_1": 1, "step_2": 2}


def snippet() -> str:
    """The code a learner copies into their training loop."""
    return SNIPPET_FILE.read_text(encoding="utf-8")


def parse_peaks(text: str) -> dict[int, dict[str, int]]:
    """The pasted output as {step: {phase: bytes}}; a one-sentence ValueError if it is not the snippet's."""
    require(
        len(text) <= MAX_PASTE_CHARS,
        f"That is longer than the snippet prints ({MAX_PASTE_CHARS:,} characters at most).",
    )
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: brackets nested deeper than Python recurses
        raise ValueError("That is not the snippet's output: paste the one line of JSON it printed.") from None
    require(
        isinstance(raw, dict) and bool(raw) and set(raw) <= set(STEPS),
        'The snippet prints an object with "step_1" and "step_2": paste that line.',
    )
    peaks: dict[int, dict[str, int]] = {}
    for key, phases in raw.items():
        require(
            isinstance(phases, dict) and set(phases) == set(PHASES),
            f'{key} needs exactly "forward", "backward" and "optimizer_step".',
        )
        for phase, value in phases.items():
            require(
                isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BYTES,
                f"{key}'s {phase} must be a whole number of bytes.",
            )
        peaks[STEPS[key]] = {phase: phases[phase] for phase in PHASES}
    return dict(sorted(peaks.items()))


@dataclass(frozen=True)
class PhaseCheck:
    """One phase of one step: what the learner measured and what the estimate says (bytes)."""

    step: int
    phase: str
    measured_bytes: int
    estimate_bytes: float

    @property
    def off_by(self) -> float | None:
        """The estimate's relative error (+ too high); None for a phase measured as 0 bytes."""
        return None if self.measured_bytes == 0 else self.estimate_bytes / self.measured_bytes - 1


def compare(peaks: dict[int, dict[str, int]], setup: StepSetup) -> tuple[PhaseCheck, ...]:
    """Each measured phase beside the estimate of the same step (step 1 creates the optimizer state)."""
    checks = []
    for step, phases in peaks.items():
        estimate = step_phases(replace(setup, first_step=step == 1)).reported_bytes
        checks += [PhaseCheck(step, p, phases[p], estimate[p]) for p in PHASES]
    return tuple(checks)
