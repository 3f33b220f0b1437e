"""How many of the process's script runs may work at once: two, and the others wait their turn.

Streamlit gives every session its own script thread. When a class clicks in the same instant, a
hundred of them share one interpreter and take turns every few milliseconds, and each run then costs
more CPU than it does alone. In back-to-back bursts of 100 learners, letting two work at a time and
queueing the rest cut the script CPU per run from 17 to 20 ms to 14 ms, served 2,564 runs in 40 s
instead of 1,850 to 2,151, and brought the p95 wait from 2.6 s to 1.8 s (bench/README.md).

While every slot is held by a run stuck for `STUCK_S` (a store that stops answering), the runs
waiting go in anyway. The slots hold no learner data: they only count threads.

`LAB_SCRIPT_SLOTS` sets the number (0 lets every run work at once, as Streamlit does on its own).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# Two, not one: a run that waits on the store (a PostgreSQL round trip) does not stop the others.
SLOTS = int(os.environ.get("LAB_SCRIPT_SLOTS", "2"))
# A run that has held its slot this long is stuck on something (a store that stops answering waits
# out its 5 s connect timeout); healthy runs take 5 to 50 ms. While every slot is held by a stuck run,
# the runs waiting go in without one, so a dead store never queues the whole class behind two runs.
STUCK_S = 1.0


class RunSlots:
    """A fixed number of slots that script runs take on their way in and give back on the way out.
    A thread that already holds one (a page calling its own fragment in a full run) goes straight in."""

    def __init__(self, slots: int, *, stuck_s: float = STUCK_S) -> None:
        if slots < 0:
            raise ValueError(f"The number of script slots cannot be negative; got {slots}.")
        self.slots = slots
        self.stuck_s = stuck_s
        self._free = threading.BoundedSemaphore(slots) if slots else None
        self._held = threading.local()
        self._taken_at: dict[int, float] = {}  # thread id -> when it took its slot
        self._lock = threading.Lock()

    def _until_all_stuck_s(self) -> float:
        """How long until every slot's holder has been in for `stuck_s` (0 once they have)."""
        now_s = time.monotonic()
        with self._lock:
            held = list(self._taken_at.values())
        if len(held) < self.slots:  # a slot is being given back or taken this instant
            return self.stuck_s
        return max(0.0, max(taken_s + self.stuck_s - now_s for taken_s in held))

    def _take(self, free: threading.BoundedSemaphore) -> bool:
        """Take a slot, waiting if none is free; False when the run goes in without one because every
        holder is stuck."""
        if not free.acquire(blocking=False) and not self._wait(free):
            return False
        with self._lock:
            self._taken_at[threading.get_ident()] = time.monotonic()
        return True

    def _wait(self, free: threading.BoundedSemaphore) -> bool:
        # A waiting run sleeps until a slot is given back, or until the holders could all be stuck: a
        # queue of dozens wakes one run per slot given back, not every run every few milliseconds.
        while True:
            if free.acquire(timeout=max(self._until_all_stuck_s(), 0.001)):
                return True
            if self._until_all_stuck_s() == 0:
                return False

    def _give_back(self, free: threading.BoundedSemaphore) -> None:
        """Give the slot back."""
        with self._lock:
            del self._taken_at[threading.get_ident()]
        free.release()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block, waiting for one if all are taken (unless their holders are stuck);
        released however the block ends."""
        depth = getattr(self._held, "depth", 0)
        # Only the outermost block takes a slot: a run inside a run already holds one.
        free = self._free
        taken = free if free is not None and depth == 0 and self._take(free) else None
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            if taken is not None:
                self._give_back(taken)


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
