"""A text frame on Streamlit's websocket ends the connection with one log line, not a traceback.

Streamlit's browser client sends binary frames only, and Streamlit 1.67 means to close a connection that
sends text; but it waits for the `RuntimeError` older Starlette raised there, and Starlette 1.x raises
`KeyError`, so every text frame (a hostile client's, of any size) wrote a full traceback to the server's
log. `StreamFrames` is ASGI middleware for `st.App` (serve.py) that answers a text frame on the stream
itself: it closes the connection with 1003 (a kind of data the endpoint does not take), logs one line,
and tells Streamlit's endpoint that the browser has gone. A binary frame over
`server.maxWidgetStateSize` Streamlit already closes with one line of its own.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_LOGGER = logging.getLogger(__name__)
_STREAM = "/_stcore/stream"
CLOSE_CODE = 1003  # unsupported data


class StreamFrames:
    """ASGI middleware: a text frame on Streamlit's websocket closes it, with one log line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass everything through, watching the frames of Streamlit's websocket."""
        if scope["type"] != "websocket" or not scope["path"].endswith(_STREAM):
            await self.app(scope, receive, send)
            return
        peer = (scope.get("client") or ("unknown",))[0]

        async def binary_only() -> Message:
            message = await receive()
            if message["type"] == "websocket.receive" and message.get("bytes") is None:
                _LOGGER.warning(
                    "Closed a connection from %s that sent a text frame; Streamlit takes binary.", peer
                )
                await send({"type": "websocket.close", "code": CLOSE_CODE})
                return {"type": "websocket.disconnect", "code": CLOSE_CODE}
            return message

        await self.app(scope, binary_only, send)
