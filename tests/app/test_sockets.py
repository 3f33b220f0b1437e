"""TCP_NODELAY on the server's sockets: set through /proc/self/fd, inherited by later connections.

The listener here is made the way Streamlit 1.67 makes its own (protocol number 0), and served by
asyncio the way uvicorn serves it, so the test sees what the app server sees.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from server import sockets
from server.sockets import set_nodelay_on_port


def _nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET)  # protocol 0, as Streamlit binds it
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_listener_made_like_streamlits_gives_asyncio_connections_without_nodelay() -> None:
    # The cause, pinned: if asyncio ever sets the option itself, this fails and the fix can go.
    async def accepted_nodelay() -> int:
        listener = _listener()
        seen: list[int] = []

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(_nodelay(writer.get_extra_info("socket")))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname())
        while not seen:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        return seen[0]

    assert asyncio.run(accepted_nodelay()) == 0


def test_setting_it_on_the_listener_reaches_every_later_asyncio_connection() -> None:
    async def accepted_nodelay() -> list[int]:
        listener = _listener()
        port = listener.getsockname()[1]
        seen: list[int] = []

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(_nodelay(writer.get_extra_info("socket")))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listener)
        found = set_nodelay_on_port(port)
        assert (found.listeners, found.connections) == (1, 0)
        for _ in range(3):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
        while len(seen) < 3:
            await asyncio.sleep(0.01)
        server.close()
        return seen

    assert asyncio.run(accepted_nodelay()) == [1, 1, 1]


def test_connections_already_open_are_changed_and_other_ports_are_left_alone() -> None:
    with _listener() as listener, _listener() as other:
        port = listener.getsockname()[1]
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        with client, accepted:
            assert _nodelay(accepted) == 0
            found = set_nodelay_on_port(port)
            assert (found.listeners, found.connections) == (1, 1)
            assert found.other_listeners >= 1
            assert _nodelay(accepted) == 1
            assert _nodelay(client) == 0  # the client's end is bound to another port
            assert _nodelay(other) == 0


def test_lab_tcp_nodelay_0_leaves_the_servers_sockets_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def record(port: int) -> sockets.Nodelay:
        calls.append(port)
        return sockets.Nodelay(listeners=1)

    monkeypatch.setattr(sockets, "set_nodelay_on_port", record)
    for switch, expected in (("0", []), ("1", [8501])):
        monkeypatch.setattr(sockets, "_done", False)
        monkeypatch.setenv("LAB_TCP_NODELAY", switch)
        monkeypatch.setattr(sockets.st, "get_option", lambda name: 8501)
        calls.clear()
        sockets.disable_nagle_once()
        assert calls == expected
