"""A cap on how many messages one browser connection may send the server each second.

One client sending ~740 reruns a second stalled every other learner of the process, and
HAProxy 2.6 cannot see the messages inside an open websocket. So each connection gets a token
bucket in front of Streamlit's message handler. A connection that goes over it is closed
(code 1008, policy violation): dropping its messages alone still let it cost every other
learner the reruns it was allowed plus reading the rest, and reopening is limited by the proxy
(deploy/haproxy.cfg). A learner never comes near it: widgets send one message per change. The
buckets belong to connections, not learners (no learner data), and go with the connection.
"""

from __future__ import annotations

import asyncio
import functools
import logging
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

POLICY_VIOLATION = 1008
_buckets: weakref.WeakKeyDictionary[Any, TokenBucket] = weakref.WeakKeyDictionary()
_LOGGER = logging.getLogger(__name__)


def _allowed(client: Any) -> bool:
    now_s = time.monotonic()
    bucket = _buckets.get(client)
    if bucket is None:
        bucket = _buckets[client] = TokenBucket.full(capacity=BURST, per_s=MESSAGES_PER_S, now_s=now_s)
    return bucket.take(now_s)


def _close(client: Any) -> None:
    """Close the connection of a client over the limit (once; Streamlit ends its session)."""
    websocket = getattr(client, "_websocket", None)  # Streamlit's Starlette client keeps it here
    if websocket is None or getattr(client, "rate_limit_closed", False):
        return
    client.rate_limit_closed = True
    _LOGGER.warning("Closing a connection that sent more than %s messages a second.", MESSAGES_PER_S)
    asyncio.ensure_future(websocket.close(code=POLICY_VIOLATION))


def install() -> None:
    """Wrap Streamlit's message handler once per process (later calls do nothing)."""
    original = Runtime.handle_backmsg
    if MESSAGES_PER_S <= 0 or getattr(original, "rate_limited", False):
        return

    @functools.wraps(original)
    def handle_backmsg(self: Runtime, session_id: str, msg: Any, *, client: Any = None) -> None:
        if client is not None and not _allowed(client):
            _close(client)
            return
        original(self, session_id, msg, client=client)

    handle_backmsg.rate_limited = True  # type: ignore[attr-defined]  # marks the wrapper
    Runtime.handle_backmsg = handle_backmsg  # type: ignore[method-assign]  # see the module docstring
