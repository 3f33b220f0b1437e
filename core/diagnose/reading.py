"""A log read through a column mapping and diagnosed, with the shipped examples worked out once.

A shipped example gives every learner the same table, run and diagnosis for the same mapping and
context, so those are kept per process: under a class's burst, reading and diagnosing the example
logs was the largest cost of ours on the busiest page. An upload is never kept.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from core.diagnose.columns import RunLog
from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import Diagnosis, diagnose_log, mapped_run
from core.diagnose.examples import Example, example_bytes
from core.diagnose.formats import Table, read_log


@dataclass(frozen=True)
class Source:
    """The log a learner chose to read: its file name, its bytes and the shipped example it is, if any."""

    name: str
    data: bytes
    example: Example | None
    upload_id: str | None = None  # the uploader's id for this file: the same id is the same bytes


@dataclass(frozen=True)
class Reading:
    """A log read through a mapping: the run and its diagnosis."""

    run: RunLog
    diagnosis: Diagnosis
    # True for a shipped example's reading: the one object every learner with this mapping and
    # context gets, so what is drawn from it may be kept per process too. False for an upload.
    shared: bool = False


def reading(table: Table, mapping: Mapping[str, str | None], context: RunContext) -> Reading:
    """The table read through `mapping` and diagnosed; ValueError when no column the detectors read
    is mapped, or when its numbers overflow the detectors' arithmetic."""
    run = mapped_run(table, mapping, context)
    return Reading(run=run, diagnosis=diagnose_log(run, context))


@functools.lru_cache(maxsize=16)
def example_table(file: str) -> Table:
    """A shipped example log, read once per process."""
    return read_log(example_bytes(file), file)


@functools.lru_cache(maxsize=256)
def _example_reading(file: str, mapping: tuple[tuple[str, str | None], ...], context: RunContext) -> Reading:
    return dataclasses.replace(reading(example_table(file), dict(mapping), context), shared=True)


def example_reading(file: str, mapping: Mapping[str, str | None], context: RunContext) -> Reading:
    """`reading` of a shipped example, shared by every learner who picks the same mapping and context."""
    return _example_reading(file, tuple(sorted(mapping.items())), context)
