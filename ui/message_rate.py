"""A cap on how many messages one browser connection may send the server each second.

One client sending ~740 reruns a second stalled every other learner of the process, and
HAProxy 2.6 cannot see the messages inside an open websocket. So each connection gets a token
bucket in front of Streamlit's message handler; messages over the limit are dropped. A learner
never comes near it: widgets send one message per change. The buckets belong to connections,
not learners (no learner data), and go when the connection object goes.
"""

from __future__ import annotations

import functools
import os
import time
import weakref
from typing import Any

from streamlit.runtime import Runtime

from core.rate_limit import TokenBucket

# Sustained messages a second and the burst above it; LAB_MESSAGES_PER_S=0 turns the cap off
# (the benchmark uses that to measure the flood without it).
MESSAGES_PER_S = float(os.environ.get("LAB_MESSAGES_PER_S", "10"))
BURST = 40

_buckets: weakref.WeakKeyDictionary[Any, TokenBucket] = weakref.WeakKeyDictionary()


def _allowed(client: Any) -> bool:
    now_s = time.monotonic()
    bucket = _buckets.get(client)
    if bucket is None:
        bucket = _buckets[client] = TokenBucket.full(capacity=BURST, per_s=MESSAGES_PER_S, now_s=now_s)
    return bucket.take(now_s)


def install() -> None:
    """Wrap Streamlit's message handler once per process (later calls do nothing)."""
    original = Runtime.handle_backmsg
    if MESSAGES_PER_S <= 0 or getattr(original, "rate_limited", False):
        return

    @functools.wraps(original)
    def handle_backmsg(self: Runtime, session_id: str, msg: Any, *, client: Any = None) -> None:
        if client is not None and not _allowed(client):
            return
        original(self, session_id, msg, client=client)

    handle_backmsg.rate_limited = True  # type: ignore[attr-defined]  # marks the wrapper
    Runtime.handle_backmsg = handle_backmsg  # type: ignore[method-assign]  # see the module docstring
