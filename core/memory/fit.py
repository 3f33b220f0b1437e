"""The longest sequence a run fits on a device: the whole number of tokens L at which both first steps
complete (`core.memory.first_oom`), while L + 1 tokens fail somewhere.

Every term of a step either stays put or grows with the sequence (saved activations, the loss's logits,
attention's scores), so whether a run fits is monotone in its length and a search over whole lengths,
keeping a bracket of a length that fits and one that does not, finds the limit. The search stops at the
model's learned positions, where it has them, and at `MAX_SEQ_LEN` otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from core.datafiles import require
from core.memory.budget import TERM_LABELS, MemoryTerms
from core.memory.first_oom import FirstOom, first_oom
from core.memory.setup import StepSetup
from core.memory.timeline import TimelinePoint, probe_timeline, step_timeline
from core.memory.verdict import Capacity

MAX_SEQ_LEN = 131_072  # the longest context the families we count are published with (Llama 3.1, Qwen2.5)
GUESSES = 12  # guesses on the line before the search falls back to halving the bracket
FIT_CACHE_SIZE = 64  # answers kept per process: settings in, nothing about a learner
# Terms a learner can act on; the context and the allocator's reserve are the device's, not the run's.
_RUN_TERMS = tuple(term for term in TERM_LABELS if term != "runtime_overhead")


@dataclass(frozen=True)
class MemoryAt:
    """One moment of a step: where it is, in words, and the terms live then (the device's overheads too)."""

    where: str
    terms: MemoryTerms

    @property
    def largest_term(self) -> str:
        """The run's largest term at this moment (the first of equals, in the budget's order)."""
        return max(_RUN_TERMS, key=self.terms.term_bytes)

    @property
    def largest_bytes(self) -> float:
        """Bytes of the largest term."""
        return self.terms.term_bytes(self.largest_term)


@dataclass(frozen=True)
class LongestFit:
    """The longest sequence `setup`'s run fits on `capacity`, with the moment of most memory at that
    length and, one token longer, where the run first fails.

    `seq_len` is 0 when not even one token fits (model state alone is too large); `peak` is then None.
    `failure` is None when the search reached `bound` with the run still fitting.
    """

    setup: StepSetup  # the run at `seq_len` tokens (at 1 token when none fits)
    capacity: Capacity
    seq_len: int
    bound: int
    peak: MemoryAt | None
    failure: FirstOom | None
    failure_moment: MemoryAt | None

    @property
    def limited_by(self) -> str:
        """What ends the sequence: `memory`, the model's learned `positions`, or the search's `bound`."""
        if self.failure is not None:
            return "memory"
        return "positions" if self.bound == self.setup.model.positions else "bound"


def search_bound(setup: StepSetup, upper: int = MAX_SEQ_LEN) -> int:
    """The longest sequence the search tries: the model's learned positions if it has them, at most
    `upper`."""
    require(
        isinstance(upper, int) and not isinstance(upper, bool) and upper >= 1,
        f"The longest sequence to try must be a whole number of tokens, 1 or more, not {upper!r}.",
    )
    positions = setup.model.positions
    return min(positions, upper) if positions else upper


def _at(setup: StepSetup, seq_len: int) -> StepSetup:
    return replace(setup, seq_len=seq_len)


def _moment(point: TimelinePoint, where: str) -> MemoryAt:
    return MemoryAt(where=where, terms=point.live)


def _peak(setup: StepSetup, capacity: Capacity) -> MemoryAt:
    """The moment of the first two steps that needs the most memory (the first of equals)."""
    timeline = step_timeline(setup, capacity=capacity)
    point = max(timeline.points, key=lambda p: p.live.total_bytes)
    return _moment(point, point.where(setup.model.layers))


def _failure(setup: StepSetup, capacity: Capacity) -> tuple[FirstOom, MemoryAt] | None:
    failure, point = first_oom(setup, capacity), step_timeline(setup, capacity=capacity).failure
    return None if failure is None or point is None else (failure, _moment(point, failure.where))


def _probe(setup: StepSetup, capacity: Capacity, seq_len: int) -> tuple[bool, float]:
    """Whether `seq_len` tokens fit (both first steps complete) and the most memory they ask for."""
    timeline = probe_timeline(_at(setup, seq_len), capacity=capacity)
    return timeline.failure is None, max(p.live.total_bytes for p in timeline.points)


@dataclass
class _Search:
    """What the search knows: `fits` tokens fit and `fails` tokens do not (the bracket), and the last two
    lengths that failed with the memory each asked for (the line the next guess is read off)."""

    limit_bytes: int
    fits: int
    fails: int
    failed: list[tuple[int, float]]

    @property
    def done(self) -> bool:
        """Whether the limit is found: `fits` and `fails` are one token apart."""
        return self.fails - self.fits <= 1

    def take(self, seq_len: int, fits: bool, need_bytes: float) -> None:
        """Narrow the bracket with what a probe of `seq_len` tokens found."""
        if fits:
            self.fits = seq_len
        else:
            self.fails = seq_len
            self.failed = [*self.failed[-1:], (seq_len, need_bytes)]

    def guess(self, *, interpolate: bool) -> int:
        """A length strictly inside the bracket, so that every probe narrows it: where the line through
        the last two failures meets the limit, or the bracket's middle."""
        middle = (self.fits + self.fails) // 2
        if not interpolate or len(self.failed) < 2:
            return middle
        (a, a_bytes), (b, b_bytes) = self.failed
        if a_bytes == b_bytes:
            return middle
        at = b + math.floor((self.limit_bytes - b_bytes) * (a - b) / (a_bytes - b_bytes))
        return min(max(at, self.fits + 1), self.fails - 1)


def _longest(setup: StepSetup, capacity: Capacity, bound: int) -> int:
    """The longest length from 0 to `bound` that fits.

    Every moment's memory is a sum of terms that stay put or grow in proportion to the length or with
    its square (attention's scores), so the most memory a run asks for is a convex, rising function of
    the length. A line through two lengths that fail then meets the limit at or past the true limit
    (small steps such as the allocator's rounding aside): guesses on it close in from above, in one or
    two probes where memory grows in proportion. After `GUESSES` of them the search halves the bracket
    instead, as a binary search would. Either way each probe lies strictly inside the bracket, so the
    answer is exact whatever the shape.
    """
    fits, need_bytes = _probe(setup, capacity, 1)
    if not fits:
        return 0
    fits, need_bytes = _probe(setup, capacity, bound)
    if fits:
        return bound
    search = _Search(capacity.total_bytes, fits=1, fails=bound, failed=[(bound, need_bytes)])
    guesses = 0
    while not search.done:
        guess = search.guess(interpolate=guesses < GUESSES)
        search.take(guess, *_probe(setup, capacity, guess))
        guesses += 1
    return search.fits


@lru_cache(maxsize=FIT_CACHE_SIZE)
def longest_fit(setup: StepSetup, capacity: Capacity, *, upper: int = MAX_SEQ_LEN) -> LongestFit:
    """The longest whole sequence `setup` (its `seq_len` ignored) fits on `capacity`, searching up to
    `search_bound(setup, upper)` tokens; ValueError if the run cannot be set up at some length."""
    bound = search_bound(setup, upper)
    fits = _longest(setup, capacity, bound)
    at_limit = _at(setup, max(fits, 1))
    failed = None if fits == bound else _failure(_at(setup, fits + 1), capacity)
    return LongestFit(
        setup=at_limit,
        capacity=capacity,
        seq_len=fits,
        bound=bound,
        peak=_peak(at_limit, capacity) if fits else None,
        failure=None if failed is None else failed[0],
        failure_moment=None if failed is None else failed[1],
    )
