"""A cap on how many messages one client address may send the server, across all its connections.

One client sending ~740 reruns a second stalled every other learner of the process, and HAProxy 2.6
cannot see the messages inside an open websocket. A cap per connection was not enough: twenty
connections from one address got twenty allowances. So every message passes two token buckets before
Streamlit handles it: its connection's (a learner's tab) and its address's (sized for a class behind
one NAT clicking at once). Over either, the message is dropped before the widget-type check or
Streamlit's own handling runs; a connection that goes on sending over the cap (its strikes run out) is
closed, with one log line.

The address is the connection's peer, or, where the peer is a proxy named in `LAB_TRUSTED_PROXIES`
(HAProxy on the same host), the last address of the `X-Forwarded-For` header that proxy adds: a client
can write the header, but not the entry the proxy appends after its own.

The buckets belong to connections and addresses, not learners (no learner data); a connection's go when
it does, and the address table keeps at most `MAX_ADDRESSES`, forgetting the least recently seen.

Under `streamlit run serve.py` the cap is taken by `MessageCap`, ASGI middleware in front of Streamlit's
websocket endpoint, so a dropped frame is never decoded, and a connection out of strikes gets a proper
close; the same middleware refuses the reconnects of a client whose connections keep being closed, before
Streamlit makes a session for them (server/reconnect_penalty.py). Under `streamlit run Home.py` there is
no middleware, and the wrapper of Streamlit's message handler takes the cap after Streamlit has decoded
the message (and nothing refuses a reconnect); that wrapper is the guard `install` puts in, and it lets
through a connection the middleware counted already.
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from core.rate_limit import TokenBucket
from server import streamlit_private as private
from server.reconnect_penalty import ReconnectGuard, set_cookie, standing_cookie

_LOGGER = logging.getLogger(__name__)

NEEDS = (
    "Runtime.handle_backmsg(session_id, msg, client)",
    "SessionClient.client_context",
    "ClientContext.remote_ip",
    "ClientContext.headers",
)


def _rate_env(name: str, default: str) -> float:
    """A rate from the environment; 0 turns that cap off (the benchmark measures floods without it)."""
    return float(os.environ.get(name, default))


# A learner's tab: widgets send one message per change, far below this.
MESSAGES_PER_S = _rate_env("LAB_MESSAGES_PER_S", "10")
BURST = 40
# An address: a class of 100 behind one NAT clicking at once fits in the burst, and thinking learners
# (one change every few seconds each) in the rate; 0 leaves only the connections' caps.
ADDRESS_MESSAGES_PER_S = _rate_env("LAB_ADDRESS_MESSAGES_PER_S", "50")
ADDRESS_BURST = 200
# Each dropped message is a strike; a connection with none left is closed. One a second comes back,
# so a learner who once clicked too fast keeps the tab.
STRIKES = 40
STRIKES_BACK_PER_S = 1.0
MAX_ADDRESSES = 10_000
TRUSTED_PROXIES = frozenset(
    p.strip() for p in os.environ.get("LAB_TRUSTED_PROXIES", "").split(",") if p.strip()
)
# The close code a connection gets for sending too much: 1008, policy violation.
CLOSE_CODE = 1008
# The status a penalised client's websocket upgrade gets (server/reconnect_penalty.py): uvicorn's answer
# to a close before accept.
REFUSED_STATUS = 403
_STREAM = "/_stcore/stream"
# The header MessageCap adds to a connection it counts, with a value made once per process.
_MARK = "x-lab-message-cap"
_MARK_VALUE = secrets.token_hex(16)


@dataclass
class _Connection:
    messages: TokenBucket
    strikes: TokenBucket
    address: str


class MessageRate:
    """The process's buckets: one per connection and one per address, taken in that order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: weakref.WeakKeyDictionary[Any, _Connection] = weakref.WeakKeyDictionary()
        self._addresses: OrderedDict[str, TokenBucket] = OrderedDict()

    def _connection(self, key: Any, address: str, now_s: float) -> _Connection:
        found = self._connections.get(key)
        if found is None:
            found = self._connections[key] = _Connection(
                messages=TokenBucket.full(capacity=BURST, per_s=MESSAGES_PER_S, now_s=now_s),
                strikes=TokenBucket.full(capacity=STRIKES, per_s=STRIKES_BACK_PER_S, now_s=now_s),
                address=address,
            )
        return found

    def _address(self, address: str, now_s: float) -> TokenBucket:
        bucket = self._addresses.get(address)
        if bucket is None:
            bucket = TokenBucket.full(capacity=ADDRESS_BURST, per_s=ADDRESS_MESSAGES_PER_S, now_s=now_s)
            self._addresses[address] = bucket
            if len(self._addresses) > MAX_ADDRESSES:
                self._addresses.popitem(last=False)
        self._addresses.move_to_end(address)
        return bucket

    def admit(self, key: Any, address: str, now_s: float) -> bool | None:
        """True to handle a message of the connection `key` (from `address`), False to drop it, None to
        drop it and close the connection."""
        with self._lock:
            connection = self._connection(key, address, now_s)
            # The address pays only for what its connection may send, so one flooding tab cannot use up
            # its classmates' allowance.
            if connection.messages.take(now_s) and (
                ADDRESS_MESSAGES_PER_S <= 0 or self._address(connection.address, now_s).take(now_s)
            ):
                return True
            return False if connection.strikes.take(now_s) else None


def address_of(peer: str | None, headers: Iterable[tuple[str, str]]) -> str:
    """The address a connection's messages are counted under (see the module docstring)."""
    peer = str(peer or "")
    if peer not in TRUSTED_PROXIES:
        return peer
    forwarded = [value for name, value in headers if name.lower() == "x-forwarded-for"]
    entries = [entry.strip() for entry in ",".join(forwarded).split(",") if entry.strip()]
    return entries[-1] if entries else peer


def client_address(client: Any) -> str:
    """The address Streamlit's connection `client` is counted under."""
    context = client.client_context
    return address_of(context.remote_ip, context.headers)


def _capped_in_front(client: Any) -> bool:
    """Whether `MessageCap` counted this connection's frames already (it marks the connection's headers
    with a value only this process knows, so a client cannot mark itself)."""
    return (_MARK, _MARK_VALUE) in client.client_context.headers


def _closing_line(address: str) -> None:
    _LOGGER.warning(
        "Closed a connection from %s that kept sending more than %s messages a second.",
        address,
        MESSAGES_PER_S,
    )


class MessageCap:
    """ASGI middleware for `st.App` (serve.py): the cap on the frames of Streamlit's websocket, taken
    before Streamlit decodes them. A dropped frame never reaches Streamlit; a connection out of strikes
    is closed with 1008, and the reconnects of its client are refused for a while before Streamlit sees
    them (server/reconnect_penalty.py)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass everything through; refuse a penalised client's upgrade; count the frames of Streamlit's
        websocket."""
        if scope["type"] != "websocket" or not scope["path"].endswith(_STREAM) or MESSAGES_PER_S <= 0:
            await self.app(scope, receive, send)
            return
        headers = [(name, value) for name, value in scope["headers"] if name.lower() != _MARK.encode()]
        peer = (scope.get("client") or (None,))[0]
        address = address_of(
            peer, [(name.decode("latin-1"), value.decode("latin-1")) for name, value in headers]
        )
        cookie = standing_cookie(headers)
        decision = RECONNECTS.admit(address, cookie, time.monotonic())
        if decision.retry_after_s > 0:
            await _refuse(receive, send)
            return
        connection = _Key()

        async def capped() -> Message:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                admitted = RATES.admit(connection, address, time.monotonic())
                if admitted:
                    return message
                if admitted is None:
                    _closing_line(address)
                    RECONNECTS.flooded(address, {cookie, decision.standing} - {""}, time.monotonic())
                    await send({"type": "websocket.close", "code": CLOSE_CODE})
                    return {"type": "websocket.disconnect", "code": CLOSE_CODE}

        async def handing_standing(message: Message) -> None:
            if message["type"] == "websocket.accept" and decision.standing != cookie:
                message = {**message, "headers": [*message.get("headers", []), set_cookie(decision.standing)]}
            await send(message)

        marked = [*headers, (_MARK.encode(), _MARK_VALUE.encode())]
        await self.app({**scope, "headers": marked}, capped, handing_standing)


async def _refuse(receive: Receive, send: Send) -> None:
    """Close an upgrade before accepting it: uvicorn answers 403 and logs nothing above info. (An HTTP 429
    through ASGI's denial-response extension would say more, but uvicorn's websockets-sansio logs an error
    line for each, and a refused client retries many times a second; a browser cannot read the status.)"""
    await receive()  # the websocket.connect that opens every ASGI websocket
    await send({"type": "websocket.close", "code": CLOSE_CODE})


class _Key:
    """One websocket's key in the connection buckets (it goes when the connection does)."""


RATES = MessageRate()
RECONNECTS = ReconnectGuard()


def install() -> None:
    """Wrap Streamlit's message handler once per process (later calls do nothing). Installed after the
    widget-type check, so it wraps it and runs first."""
    original = private.Runtime.handle_backmsg
    if MESSAGES_PER_S <= 0 or getattr(original, "rate_limited", False):
        return

    @functools.wraps(original)
    def handle_backmsg(self: Any, session_id: str, msg: Any, *, client: Any = None) -> None:
        if client is not None and not _capped_in_front(client):
            address = client_address(client)
            admitted = RATES.admit(client, address, time.monotonic())
            if admitted is None:
                _closing_line(address)
                # Streamlit's websocket endpoint ends the connection on this, as when the browser goes.
                raise WebSocketDisconnect(code=CLOSE_CODE)
            if not admitted:
                return
        original(self, session_id, msg, client=client)

    handle_backmsg.rate_limited = True  # type: ignore[attr-defined]  # marks the wrapper
    private.Runtime.handle_backmsg = handle_backmsg
