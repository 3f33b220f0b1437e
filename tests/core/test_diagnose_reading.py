"""Shipped example logs are read and diagnosed once per process; an upload never is."""

from __future__ import annotations

from core.diagnose.columns import guess_mapping
from core.diagnose.detectors import RunContext
from core.diagnose.reading import example_reading, example_table, reading


def test_a_shipped_example_is_read_and_diagnosed_once_per_process_for_every_learner() -> None:
    table = example_table("leak.tfevents")
    assert example_table("leak.tfevents") is table
    mapping = guess_mapping(table.columns)
    first = example_reading("leak.tfevents", mapping, RunContext(classes=10))
    # The same mapping given in another order is the same reading, not a second copy.
    assert example_reading("leak.tfevents", dict(reversed(mapping.items())), RunContext(classes=10)) is first
    assert example_reading("leak.tfevents", mapping, RunContext(classes=100)) is not first
    fresh = reading(table, mapping, RunContext(classes=10))  # what an upload gets: never shared
    assert fresh is not first
    assert fresh.diagnosis == first.diagnosis
    # Only the shipped example's reading may have what is drawn from it kept per process.
    assert first.shared and not fresh.shared
