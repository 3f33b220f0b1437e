"""A fix of Streamlit's internals goes in at most once per process: the first call decides, later ones answer.

Each fix (`loop_wakeups`, `theme_once`, `own_key_lookup`) replaces Streamlit's code only while that code
still has the shape it was written against, so whether it went in is decided once, under a lock, and the
answer kept for the process. `ui.warm.freeze_once` freezes what a process loaded the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class DecidedOnce:
    """Runs `decide` on the first call only, and answers every call with what it returned."""

    def __init__(self, decide: Callable[[], bool]) -> None:
        self._decide = decide
        self._lock = threading.Lock()
        self._outcome: bool | None = None

    def __call__(self) -> bool:
        with self._lock:
            if self._outcome is None:
                self._outcome = self._decide()
            return self._outcome
