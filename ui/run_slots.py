"""How many of the process's script runs may work at once: two, and the others wait their turn.

Streamlit gives every session its own script thread. When a class clicks in the same instant, a
hundred of them share one interpreter and take turns every few milliseconds, and each run then costs
more CPU than it does alone. In back-to-back bursts of 100 learners, letting two work at a time and
queueing the rest cut the script CPU per run from 17 to 20 ms to 14 ms, served 2,564 runs in 40 s
instead of 1,850 to 2,151, and brought the p95 wait from 2.6 s to 1.8 s (bench/README.md). A run
waits at most `MAX_WAIT_S` for a slot, then goes in anyway. The slots hold no learner data: they
only count threads.

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
# The longest a run waits for a slot before it goes in anyway. A burst of 100 clicks queues for less
# than this; a store that stops answering (its connect timeout is 5 s) would otherwise keep both slots
# and queue the whole class behind it.
MAX_WAIT_S = 2.0


class RunSlots:
    """A fixed number of slots that script runs take on their way in and give back on the way out.
    A thread that already holds one (a page calling its own fragment in a full run) goes straight in."""

    def __init__(self, slots: int, *, max_wait_s: float = MAX_WAIT_S) -> None:
        if slots < 0:
            raise ValueError(f"The number of script slots cannot be negative; got {slots}.")
        self.slots = slots
        self.max_wait_s = max_wait_s
        self._free = threading.BoundedSemaphore(slots) if slots else None
        self._held = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block, waiting up to `max_wait_s` for one if all are taken (then going in
        without one); released however the block ends."""
        depth = getattr(self._held, "depth", 0)
        if self._free is None or depth:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        got = self._free.acquire(timeout=self.max_wait_s)
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            if got:
                self._free.release()


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
