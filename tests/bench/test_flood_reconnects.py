"""A flood from many connections of one address is closed, the flooder's reconnects are refused (403)
before Streamlit makes a session for them, and a learner on the same address keeps working: straight to
a real `streamlit run serve.py`, and through the workshop proxy (deploy/proxy.sh, Debian's HAProxy)
with the replica trusting its X-Forwarded-For as deploy/start.sh sets it up.

The room is a loopback address of its own, so the penalty it earns touches no other test's clients.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.proxy import workshop_proxy
from server import message_rate
from server.reconnect_penalty import COOKIE
from tests.harness.flooding import flood_until_closed, try_connect
from tests.harness.load_client import Session
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer

FLOOD_CONNECTIONS = 20
REFUSED = f"HTTP {message_rate.REFUSED_STATUS}"


@dataclass
class Outcome:
    """What a flood from the room did, and what its well-behaved learner saw."""

    closed: list[int | None]
    reconnects: list[str]  # how each of the flooder's reconnects ended: "" for let in, else the error
    learner_rerun_exceptions: tuple[str, ...]
    learner_reload_exceptions: tuple[str, ...]


async def _reconnect(port: int, tls: bool, room: str, cookies: dict[str, str]) -> str:
    return await try_connect(port, marker="bench-s950-prot", tls=tls, source=room, cookies=cookies)


async def _flood_from_the_room(port: int, *, tls: bool, room: str) -> Outcome:
    """A learner opens the lab from `room`; twenty connections from `room` flood until closed, then
    reconnect as fresh tabs and with their own cookies; the learner reruns, then reloads its tab."""
    jar: dict[str, str] = {}
    learner = Session(port=port, marker="bench-s951-prot", tls=tls, timeout_s=60, source=room, cookies=jar)
    await learner.connect("")
    assert COOKIE in jar  # handed with the websocket's accept
    flood = [
        Session(port=port, marker=f"bench-s96{i:02d}-prot", tls=tls, timeout_s=60, source=room)
        for i in range(FLOOD_CONNECTIONS)
    ]
    try:
        for session in flood:
            await session.connect("")
        raw = flood[0].model.rerun_message().SerializeToString()
        closed = await asyncio.gather(*(flood_until_closed(session, raw, 10.0) for session in flood))
        reconnects = [await _reconnect(port, tls, room, {}) for _ in range(3)]
        reconnects += [await _reconnect(port, tls, room, dict(session.cookies)) for session in flood[:3]]
        rerun = (await learner.rerun()).exceptions
    finally:
        for session in [*flood, learner]:
            await session.close()
    # The learner's tab reloads: a new websocket, with the browser's cookies.
    reloaded = Session(port=port, marker="bench-s951-prot", tls=tls, timeout_s=60, source=room, cookies=jar)
    try:
        reload = (await reloaded.connect("")).exceptions
    finally:
        await reloaded.close()
    return Outcome(closed, reconnects, rerun, reload)


def _log_lines(log_path: Path, text: str) -> int:
    return sum(text in line for line in log_path.read_text(errors="replace").splitlines())


def _check(outcome: Outcome) -> None:
    # Closed by serve.py's middleware, before Streamlit decoded what was dropped (server/message_rate.py)...
    assert outcome.closed == [message_rate.CLOSE_CODE] * FLOOD_CONNECTIONS
    # ...and every reconnect, as a fresh tab or with the cookies its flooding connection had, answered
    # 403 before the websocket was accepted: no session was made for it.
    assert len(outcome.reconnects) == 6 and all(REFUSED in reconnect for reconnect in outcome.reconnects)
    assert outcome.learner_rerun_exceptions == () and outcome.learner_reload_exceptions == ()


@pytest.fixture(scope="module")
def replica(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """serve.py as deploy/start.sh runs a replica: HAProxy on this host names the client's address."""
    log = tmp_path_factory.mktemp("replica") / "app.log"
    env = {"LAB_TRUSTED_PROXIES": "127.0.0.1"}
    with StreamlitServer(REPO_ROOT / "serve.py", post_script_gc=False, log_path=log, env=env) as running:
        yield running


def test_a_flooders_reconnects_are_refused_and_its_roommate_keeps_working(replica):
    problems = replica.log_problems()
    outcome = asyncio.run(_flood_from_the_room(replica.port, tls=False, room="127.0.0.3"))
    _check(outcome)
    assert _log_lines(replica.log_path, "kept sending more than") == FLOOD_CONNECTIONS
    assert replica.log_problems() == problems


@pytest.mark.timeout(300)
def test_through_the_proxy_the_penalty_keys_on_the_forwarded_address(haproxy, replica, tmp_path):
    with workshop_proxy([replica.port], tmp_path / "proxy.log") as port:
        outcome = asyncio.run(_flood_from_the_room(port, tls=True, room="127.0.0.4"))
        # Another address, the proxy's own among them, is not penalised: a fresh tab from it is let in.
        other = asyncio.run(_reconnect(port, True, "127.0.0.5", {}))
    _check(outcome)
    assert other == ""
