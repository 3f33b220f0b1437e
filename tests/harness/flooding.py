"""What a flooding client does over Streamlit's protocol, for the tests of the message cap and the
reconnect penalty (server/message_rate.py, server/reconnect_penalty.py). Loopback only."""

from __future__ import annotations

import asyncio
import time

from websockets.exceptions import ConnectionClosed

from tests.harness.load_client import LOOPBACK, Session, SessionError


async def flood_until_closed(session: Session, raw: bytes, seconds: float) -> int | None:
    """Send `raw` on the connected `session` as fast as the socket takes it for up to `seconds`; the code
    the server closed it with (None if it did not)."""
    assert session._ws is not None
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            await session._ws.send(raw)
            await asyncio.sleep(0)
        await asyncio.wait_for(session._ws.wait_closed(), 2.0)
    except (TimeoutError, ConnectionClosed):
        pass
    return session._ws.close_code


async def try_connect(
    port: int,
    *,
    marker: str,
    tls: bool = False,
    source: str = LOOPBACK,
    cookies: dict[str, str] | None = None,
) -> str:
    """Open a tab from `source` with `cookies` and close it: "" if it was let in, else why not."""
    session = Session(port=port, marker=marker, tls=tls, timeout_s=60, source=source, cookies=cookies or {})
    try:
        await session.connect("")
        return ""
    except SessionError as error:
        return str(error)
    finally:
        await session.close()
