"""A client that writes itself a fresh XSRF cookie for every request, as the review's attack did.

Streamlit's XSRF cookie is not a secret of the server's: the server only checks that the token a
client sends (in the websocket's subprotocol, or an upload's X-Xsrftoken header) decodes to the same
bytes as the cookie, so a client can mint a pair of its own for every request. A proxy that keyed its
limits on that cookie saw a new browser each time. Only loopback.
"""

from __future__ import annotations

import asyncio
import contextlib

import httpx
from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.typing import Origin, Subprotocol

from tests.harness.load_client import LOOPBACK, _loopback_tls
from tests.harness.upload_client import put_file

ACCEPTED = 101  # the websocket was opened


def minted_cookies(keep: dict[str, str] | None = None) -> dict[str, str]:
    """A cookie jar with an XSRF token the client made itself, and any cookies to keep (the proxy's
    affinity cookie, so that an upload reaches the replica holding the session)."""
    return {**(keep or {}), "_streamlit_xsrf": generate_xsrf_token_string()}


async def open_stream(
    port: int, *, tls: bool = True, timeout_s: float = 30.0, source: str = LOOPBACK
) -> tuple[int, ClientConnection | None]:
    """Open a websocket (a new session on a replica) with a freshly minted cookie: (101, the connection)
    when it opened, or (the HTTP status it was refused with, None)."""
    cookies = minted_cookies()
    token = cookies["_streamlit_xsrf"]
    scheme = "s" if tls else ""
    try:
        connection = await connect(
            f"ws{scheme}://{LOOPBACK}:{port}/_stcore/stream",
            subprotocols=[Subprotocol("streamlit"), Subprotocol(token)],
            origin=Origin(f"http{scheme}://{LOOPBACK}:{port}"),
            ssl=_loopback_tls() if tls else None,
            additional_headers={"Cookie": f"_streamlit_xsrf={token}"},
            open_timeout=timeout_s,
            local_addr=(source, 0),
            ping_interval=None,
        )
    except InvalidStatus as refused:
        return refused.response.status_code, None
    return ACCEPTED, connection


async def close_all(connections: list[ClientConnection]) -> None:
    """Close these websockets (their sessions end on the replicas)."""
    for connection in connections:
        with contextlib.suppress(ConnectionClosed, OSError):
            await connection.close()


async def rotate_streams(port: int, attempts: int, *, tls: bool = True, source: str = LOOPBACK) -> list[int]:
    """Open and at once close `attempts` websockets, each with a new cookie; the status of each."""
    statuses = []
    for _ in range(attempts):
        status, connection = await open_stream(port, tls=tls, source=source)
        statuses.append(status)
        if connection is not None:
            await close_all([connection])
    return statuses


async def rotate_uploads(
    port: int,
    session_id: str,
    attempts: int,
    *,
    keep: dict[str, str],
    tls: bool = True,
    data: bytes = b"{}",
    source: str = LOOPBACK,
) -> list[int]:
    """Upload a small file `attempts` times to this session, each time with a new cookie (and the same
    file id, which the server replaces, so its own per-session caps never answer); the status of each,
    0 where the connection closed first (a proxy refusing an upload may close it before the client
    has read the refusal)."""
    statuses = []
    for _ in range(attempts):
        try:
            status, _ = await put_file(
                port, session_id, "rotated-file", data, cookies=minted_cookies(keep), tls=tls, source=source
            )
        except httpx.TransportError:
            status = 0
        statuses.append(status)
    return statuses


async def rotate_for(
    port: int, duration_s: float, *, tls: bool = True, source: str = LOOPBACK
) -> dict[int, int]:
    """Keep opening websockets with new cookies for `duration_s` (an attacker beside the learners):
    how many got each status. Connection errors count as status 0."""
    counts: dict[int, int] = {}
    loop = asyncio.get_running_loop()
    end = loop.time() + duration_s
    while loop.time() < end:
        try:
            [status] = await rotate_streams(port, 1, tls=tls, source=source)
        except (OSError, InvalidHandshake, TimeoutError):
            status = 0
            await asyncio.sleep(0.05)
        counts[status] = counts.get(status, 0) + 1
    return counts
