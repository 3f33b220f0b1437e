"""Failed attempts and the wait they earn: a few free, then a wait that doubles up to a ceiling.

Used for the instructor key and for room codes. The counts live in three places (a session, a
process, the learner store shared by every replica); each is read with the same `Backoff` and the
longest wait wins. The caller passes the time in, so every rule here is checked by hand in tests.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from core.datafiles import require


@dataclass(frozen=True)
class Failures:
    """How many attempts failed in a row, and when (seconds on the caller's clock) the last one did."""

    count: int = 0
    last_s: float = 0.0


@dataclass(frozen=True)
class Backoff:
    """`free` failures cost nothing; after the next one the caller waits `first_wait_s`, after each one
    after that twice as long, up to `max_wait_s`. A tally whose last failure is `forget_after_s` old
    starts again from nothing."""

    free: int
    first_wait_s: float
    max_wait_s: float
    forget_after_s: float

    def __post_init__(self) -> None:
        require(
            self.free >= 1 and 0 < self.first_wait_s <= self.max_wait_s <= self.forget_after_s,
            "A backoff needs at least one free failure and waits no longer than it remembers.",
        )

    def current(self, failures: Failures, now_s: float) -> Failures:
        """The tally as it stands at `now_s`: forgotten once its last failure is old enough."""
        return Failures() if now_s - failures.last_s >= self.forget_after_s else failures

    def after_failure(self, failures: Failures, now_s: float) -> Failures:
        """The tally once another attempt failed at `now_s`."""
        return Failures(count=self.current(failures, now_s).count + 1, last_s=now_s)

    def wait_s(self, failures: Failures, now_s: float) -> float:
        """Seconds left before another attempt may be made (0 when one may be made now)."""
        count = self.current(failures, now_s).count
        if count <= self.free:
            return 0.0
        wait = min(self.max_wait_s, self.first_wait_s * 2.0 ** min(count - self.free - 1, 64))
        # Elapsed first: last_s + wait - now_s can round past the ceiling when now_s == last_s.
        return max(0.0, wait - (now_s - failures.last_s))


class ProcessTally:
    """Failures counted across every session of this process, under a lock (sessions run on threads).

    One tally per purpose, never per learner: it holds a count and a time, nothing about who failed.
    """

    def __init__(self, backoff: Backoff) -> None:
        self.backoff = backoff
        self._failures = Failures()
        self._lock = threading.Lock()

    def wait_s(self, now_s: float) -> float:
        """Seconds before this process lets anyone try again."""
        with self._lock:
            return self.backoff.wait_s(self._failures, now_s)

    def fail(self, now_s: float) -> Failures:
        """Count a failure at `now_s`; the tally after it."""
        with self._lock:
            self._failures = self.backoff.after_failure(self._failures, now_s)
            return self._failures
