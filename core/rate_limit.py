"""A token bucket: how many messages one connection may send, with a burst allowance."""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require


@dataclass
class TokenBucket:
    """`capacity` messages at once, refilled at `per_s` a second; the caller passes the time in."""

    capacity: float
    per_s: float
    tokens: float
    updated_s: float

    @classmethod
    def full(cls, *, capacity: float, per_s: float, now_s: float) -> TokenBucket:
        """A bucket that starts full at time `now_s`."""
        require(
            capacity >= 1 and per_s > 0, "A token bucket needs a capacity of at least 1 and a positive rate."
        )
        return cls(capacity=capacity, per_s=per_s, tokens=capacity, updated_s=now_s)

    def take(self, now_s: float) -> bool:
        """Spend one token if there is one at time `now_s`; False means the message is over the limit."""
        elapsed_s = max(0.0, now_s - self.updated_s)
        self.tokens = min(self.capacity, self.tokens + elapsed_s * self.per_s)
        self.updated_s = now_s
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
