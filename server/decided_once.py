"""Something decided at most once per process: the first call decides, later ones answer.

`server.changes.install` decides once whether Streamlit's code can be changed, and `server.warm.freeze_once`
freezes what a process loaded once: each runs its work on the first call, under a lock, and keeps the
answer for the process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class DecidedOnce(Generic[T]):
    """Runs `decide` on the first call only, and answers every call with what it returned."""

    def __init__(self, decide: Callable[[], T]) -> None:
        self._decide = decide
        self._lock = threading.Lock()
        self._outcome: tuple[T] | None = None  # a tuple, so that a None outcome counts as decided

    def __call__(self) -> T:
        with self._lock:
            if self._outcome is None:
                self._outcome = (self._decide(),)
            return self._outcome[0]
