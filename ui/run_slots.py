"""How many of the process's script runs may work at once: a few, the others wait their turn.

Streamlit gives every session its own script thread, and when a class clicks in the same instant a
hundred of them share one interpreter, taking turns every few milliseconds. Each turn resumes a
different learner's page with cold caches, so a run then cost about twice the CPU it costs alone.
Letting two work at a time and queueing the rest served 30% more reruns in the same burst, and the
first learners get their answer in a fraction of the time instead of everyone waiting for the last
(bench/README.md). The slots hold no learner data: they only count threads.

`LAB_SCRIPT_SLOTS` sets the number (0 lets every run work at once, as Streamlit does on its own).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# Two, not one: a run that waits on the store (a PostgreSQL round trip) does not stop the others.
SLOTS = int(os.environ.get("LAB_SCRIPT_SLOTS", "2"))


class RunSlots:
    """A fixed number of slots that script runs take on their way in and give back on the way out.
    A thread that already holds one (a page calling its own fragment in a full run) goes straight in."""

    def __init__(self, slots: int) -> None:
        if slots < 0:
            raise ValueError(f"The number of script slots cannot be negative; got {slots}.")
        self.slots = slots
        self._free = threading.BoundedSemaphore(slots) if slots else None
        self._held = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block, waiting for one if all are taken; released however it ends."""
        depth = getattr(self._held, "depth", 0)
        if self._free is None or depth:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        with self._free:
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0


PROCESS_SLOTS = RunSlots(SLOTS)


def run_slot() -> AbstractContextManager[None]:
    """The process's slot for this script run (see the module docstring)."""
    return PROCESS_SLOTS.held()


def in_a_run_slot(function: Callable[P, R]) -> Callable[P, R]:
    """`function` run in the process's slot: for fragments, which Streamlit reruns without the page."""

    @functools.wraps(function)
    def slotted(*args: P.args, **kwargs: P.kwargs) -> R:
        with run_slot():
            return function(*args, **kwargs)

    return slotted
