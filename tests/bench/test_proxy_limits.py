"""The workshop proxy's limits key on the client's address, and a class behind one address still works.

Two `streamlit run serve.py` replicas, as deploy/start.sh serves the lab, behind deploy/proxy.sh
(Debian's HAProxy, HTTPS, deploy/haproxy.cfg). Every client here comes from 127.0.0.1, which is what
a workshop room behind one NAT looks like to the proxy. Each test gets a fresh proxy, so its counters
start at zero. The attacks write themselves a fresh XSRF cookie for every request
(tests/harness/cookie_rotation.py): before, 30 of 30 websocket opens and 15 of 15 uploads got through
that way.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection

from bench.proxy import workshop_proxy
from tests.harness.cookie_rotation import ACCEPTED, close_all, open_stream, rotate_streams, rotate_uploads
from tests.harness.load_client import LOOPBACK, Session, SessionError, http_get
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer
from tests.harness.upload_client import new_file_id, put_file

# deploy/haproxy.cfg, sized for a class of up to 60 learners on one address, 2 tabs each.
WEBSOCKETS_A_MINUTE = 240
WEBSOCKETS_AT_ONCE = 150
UPLOADS_A_MINUTE = 90
CONNECTIONS_AT_ONCE = 500
CONNECTIONS_IN_10_S = 600
TOO_MANY = 429
# The self-signed certificate deploy/proxy.sh makes for a trial: trusted on loopback only.
_LOOPBACK_TLS = ssl._create_unverified_context()


@pytest.fixture(scope="module")
def replicas(haproxy: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    logs = tmp_path_factory.mktemp("replicas")
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                StreamlitServer(REPO_ROOT / "serve.py", post_script_gc=False, log_path=logs / f"app{i}.log")
            )
            for i in (1, 2)
        ]
        yield [server.port for server in servers]


@pytest.fixture
def proxy(replicas: list[int], tmp_path: Path) -> Iterator[int]:
    """A fresh proxy in front of both replicas (counters at zero); its HTTPS port."""
    with workshop_proxy(replicas, tmp_path / "proxy.log") as port:
        yield port


def test_websocket_opens_with_a_fresh_cookie_each_are_limited_per_address(proxy: int) -> None:
    statuses = asyncio.run(rotate_streams(proxy, WEBSOCKETS_A_MINUTE + 20))
    assert statuses == [ACCEPTED] * WEBSOCKETS_A_MINUTE + [TOO_MANY] * 20


def test_sessions_open_at_once_are_capped_per_address(proxy: int) -> None:
    async def hold() -> tuple[list[int], int, int]:
        held: list[ClientConnection] = []
        try:
            statuses = []
            for _ in range(WEBSOCKETS_AT_ONCE + 1):
                status, connection = await open_stream(proxy)
                statuses.append(status)
                if connection is not None:
                    held.append(connection)
            await close_all(held[:1])  # one tab closes: its place is free again
            await asyncio.sleep(0.5)
            again, connection = await open_stream(proxy)
            if connection is not None:
                held.append(connection)
            over, connection = await open_stream(proxy)
            if connection is not None:
                held.append(connection)
            return statuses, again, over
        finally:
            await close_all(held)

    statuses, again, over = asyncio.run(hold())
    assert statuses == [ACCEPTED] * WEBSOCKETS_AT_ONCE + [TOO_MANY]
    assert (again, over) == (ACCEPTED, TOO_MANY)


def test_uploads_with_a_fresh_cookie_each_are_limited_per_address(proxy: int) -> None:
    async def attack() -> list[int]:
        session = Session(port=proxy, marker="bench-s1-rotate", tls=True, timeout_s=120)
        await session.connect()
        try:
            # The affinity cookie is kept, so every upload reaches the replica holding the session.
            keep = {"LAB_REPLICA": session.cookies["LAB_REPLICA"]}
            return await rotate_uploads(proxy, session.model.session_id, UPLOADS_A_MINUTE + 10, keep=keep)
        finally:
            await session.close()

    statuses = asyncio.run(attack())
    assert statuses[:UPLOADS_A_MINUTE] == [204] * UPLOADS_A_MINUTE
    # Every one after the limit is refused: HAProxy answers 429 and closes the connection, often before
    # the client has sent the body and read the answer (0: the connection was reset). The replica is
    # still there for anything else.
    assert set(statuses[UPLOADS_A_MINUTE:]) <= {TOO_MANY, 0}
    status, _ = asyncio.run(http_get(proxy, "/_stcore/health", timeout_s=30, tls=True))
    assert status == 200


def _served(port: int) -> bool:
    """Whether a new connection gets as far as a TLS handshake (False: the proxy refused it)."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=10) as raw:
            with _LOOPBACK_TLS.wrap_socket(raw):
                return True
    except (ConnectionResetError, ssl.SSLError):
        return False


def test_connections_at_once_and_in_10_seconds_are_capped_per_address(proxy: int) -> None:
    held = [socket.create_connection((LOOPBACK, proxy), timeout=10) for _ in range(CONNECTIONS_AT_ONCE)]
    # HAProxy's threads take accepted connections from a shared queue, so the next one could be counted
    # before the last of these: let it count them all first.
    time.sleep(1.0)
    try:
        over_at_once = _served(proxy)
    finally:
        for connection in held:
            connection.close()
    time.sleep(0.5)
    # 501 opened so far; up to 600 in 10 seconds are served, one at a time, and no more.
    opened = [_served(proxy) for _ in range(CONNECTIONS_IN_10_S - CONNECTIONS_AT_ONCE + 20)]
    assert not over_at_once
    assert opened[:90] == [True] * 90
    assert opened[-15:] == [False] * 15


@pytest.mark.timeout(600)
def test_a_class_of_30_behind_one_address_works(proxy: int) -> None:
    """30 learners on one address: each opens the lab, reruns, opens a second tab, reloads the first and
    uploads a file, all at about the same time. Nobody is refused."""

    async def learner(index: int) -> list[str]:
        await asyncio.sleep(index * 0.2)
        jar: dict[str, str] = {}  # one browser: both tabs share its cookies
        problems = []
        first = Session(port=proxy, marker=f"bench-s{index}-class", tls=True, cookies=jar, timeout_s=180)
        second = Session(port=proxy, marker=f"bench-s{index}-class", tls=True, cookies=jar, timeout_s=180)
        try:
            await first.connect()
            await first.rerun()
            await second.connect()
            await first.close()
            first = Session(port=proxy, marker=f"bench-s{index}-class", tls=True, cookies=jar, timeout_s=180)
            await first.connect()  # the reload
            status, _ = await put_file(
                proxy, first.model.session_id, new_file_id(), b'{"lab": "progress"}', cookies=jar, tls=True
            )
            if status != 204:
                problems.append(f"upload: {status}")
            await second.rerun()
        except SessionError as error:
            problems.append(str(error))
        finally:
            await first.close()
            await second.close()
        return problems

    async def class_of(learners: int) -> list[str]:
        results = await asyncio.gather(*(learner(i) for i in range(learners)))
        return [problem for problems in results for problem in problems]

    assert asyncio.run(class_of(30)) == []
