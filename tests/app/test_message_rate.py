"""The message cap holds per client address across connections, closes a connection that keeps sending
over it, and runs before the widget-type check (server/message_rate.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime import Runtime

from server import changes, message_rate, widget_types
from server.message_rate import ADDRESS_BURST, BURST, STRIKES, MessageCap, MessageRate, client_address
from server.reconnect_penalty import ReconnectGuard


@pytest.fixture(autouse=True)
def _no_penalties(monkeypatch):
    """Each test starts with no address penalised for connections an earlier one closed."""
    monkeypatch.setattr(message_rate, "RECONNECTS", ReconnectGuard())


class _Client:
    """A connection as Streamlit's handler sees it: its context holds the peer address and the headers."""

    def __init__(self, ip: str, forwarded: str | None) -> None:
        headers = [("X-Forwarded-For", forwarded)] if forwarded is not None else []
        self.client_context = SimpleNamespace(remote_ip=ip, headers=headers)


def _client(ip: str, forwarded: str | None = None) -> _Client:
    return _Client(ip, forwarded)


def _admit(rates: MessageRate, client: _Client, now_s: float = 0.0) -> bool | None:
    return rates.admit(client, client_address(client), now_s)


def _admitted(rates: MessageRate, clients: list[_Client], rounds: int, now_s: float = 0.0) -> int:
    """Send `rounds` messages from each client at the same instant; how many were let through."""
    return sum(_admit(rates, client, now_s) is True for _ in range(rounds) for client in clients)


def test_one_connection_gets_its_burst_and_no_more():
    rates = MessageRate()
    assert _admitted(rates, [_client("192.0.2.1")], BURST + 10) == BURST


def test_many_connections_from_one_address_share_the_address_cap():
    rates = MessageRate()
    # Twenty tabs of one address, each within its own cap: together they get the address's burst only.
    flood = [_client("192.0.2.1") for _ in range(20)]
    assert _admitted(rates, flood, BURST) == ADDRESS_BURST
    # Another address is not touched by it.
    assert _admitted(rates, [_client("192.0.2.2")], BURST) == BURST


def test_the_allowance_comes_back_with_time():
    rates = MessageRate()
    client = _client("192.0.2.1")
    assert _admitted(rates, [client], BURST) == BURST
    assert _admit(rates, client, 0.0) is False
    assert _admit(rates, client, 1.0) is True  # ten a second: a tenth of a second buys one


def test_a_connection_that_keeps_sending_over_the_cap_is_told_to_close():
    rates = MessageRate()
    client = _client("192.0.2.1")
    answers = [_admit(rates, client, 0.0) for _ in range(BURST + STRIKES + 1)]
    assert answers[:BURST] == [True] * BURST
    assert answers[BURST : BURST + STRIKES] == [False] * STRIKES
    assert answers[-1] is None


def test_a_forwarded_address_counts_only_behind_a_trusted_proxy(monkeypatch):
    assert client_address(_client("192.0.2.1", "198.51.100.9")) == "192.0.2.1"  # a client wrote the header
    monkeypatch.setattr(message_rate, "TRUSTED_PROXIES", frozenset({"127.0.0.1"}))
    # The proxy appends the peer it saw after whatever the client wrote: the last entry is the real one.
    assert client_address(_client("127.0.0.1", "203.0.113.5, 198.51.100.9")) == "198.51.100.9"
    assert client_address(_client("127.0.0.1")) == "127.0.0.1"


def test_the_address_table_forgets_the_least_recently_seen(monkeypatch):
    monkeypatch.setattr(message_rate, "MAX_ADDRESSES", 3)
    rates = MessageRate()
    for last in range(5):
        _admit(rates, _client(f"192.0.2.{last}"))
    assert list(rates._addresses) == ["192.0.2.2", "192.0.2.3", "192.0.2.4"]


def _handle(client: _Client) -> None:
    """One message through the installed handler, on a runtime where Streamlit's own finds no session."""
    runtime = SimpleNamespace(
        _state=None, _session_mgr=SimpleNamespace(get_active_session_info=lambda _id: None)
    )
    handle: Any = Runtime.handle_backmsg
    handle(runtime, "s", BackMsg(), client=client)


def test_the_rate_cap_runs_before_the_type_check(monkeypatch):
    """A flood pays for neither: a message over the cap never reaches the widget-type check."""
    changes.install()  # both guards, in their order
    checked: list[str] = []
    monkeypatch.setattr(widget_types, "_registered", lambda _runtime, session_id: checked.append(session_id))
    monkeypatch.setattr(message_rate, "RATES", MessageRate())
    client = _client("192.0.2.7")
    for _ in range(BURST + 5):
        _handle(client)
    assert len(checked) == BURST


def test_the_handler_ends_a_connection_with_no_strikes_left(monkeypatch):
    changes.install()
    monkeypatch.setattr(message_rate, "RATES", MessageRate())
    client = _client("192.0.2.8")
    for _ in range(BURST + STRIKES):
        _handle(client)
    with pytest.raises(WebSocketDisconnect) as ended:
        _handle(client)
    assert ended.value.code == message_rate.CLOSE_CODE


def _through_the_middleware(
    frames: int, *, client_mark: str | None = None
) -> tuple[list[Message], list[Message], list]:
    """`frames` binary frames sent at once through MessageCap to an app that reads until the socket goes:
    what the app received, what went back to the client, and the headers the app saw."""
    incoming: list[Message] = [{"type": "websocket.receive", "bytes": b"\x00"} for _ in range(frames)]
    incoming.append({"type": "websocket.disconnect", "code": 1000})
    received: list[Message] = []
    sent: list[Message] = []
    seen: list[tuple[bytes, bytes]] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.extend(scope["headers"])
        while (message := await receive())["type"] == "websocket.receive":
            received.append(message)
        received.append(message)

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    headers = [(b"host", b"lab")] + ([(b"x-lab-message-cap", client_mark.encode())] if client_mark else [])
    scope = {
        "type": "websocket",
        "path": "/_stcore/stream",
        "headers": headers,
        "client": ("192.0.2.9", 5000),
    }
    asyncio.run(MessageCap(app)(scope, receive, send))
    return received, sent, seen


def test_the_middleware_drops_frames_over_the_cap_before_streamlit_sees_them(monkeypatch):
    monkeypatch.setattr(message_rate, "RATES", MessageRate())
    received, sent, _ = _through_the_middleware(BURST + 5)
    assert len(received) == BURST + 1  # the burst, then the disconnect
    assert received[-1]["type"] == "websocket.disconnect" and sent == []


def test_the_middleware_closes_a_connection_out_of_strikes(monkeypatch, caplog):
    monkeypatch.setattr(message_rate, "RATES", MessageRate())
    received, sent, _ = _through_the_middleware(BURST + STRIKES + 1)
    assert sent == [{"type": "websocket.close", "code": message_rate.CLOSE_CODE}]
    assert received[-1] == {"type": "websocket.disconnect", "code": message_rate.CLOSE_CODE}
    assert len(received) == BURST + 1
    assert [r.getMessage() for r in caplog.records if "kept sending" in r.getMessage()] != []


def test_a_connection_the_middleware_counted_is_not_counted_again(monkeypatch):
    monkeypatch.setattr(message_rate, "RATES", MessageRate())
    _, _, seen = _through_the_middleware(1, client_mark="forged")
    # The client's own mark is dropped and the process's put in its place.
    marks = [value.decode() for name, value in seen if name == b"x-lab-message-cap"]
    assert marks == [message_rate._MARK_VALUE]
    counted = _Client("192.0.2.9", None)
    counted.client_context.headers.append(("x-lab-message-cap", message_rate._MARK_VALUE))
    forged = _Client("192.0.2.10", None)
    forged.client_context.headers.append(("x-lab-message-cap", "forged"))
    assert message_rate._capped_in_front(counted) and not message_rate._capped_in_front(forged)
    changes.install()
    checked: list[str] = []
    monkeypatch.setattr(widget_types, "_registered", lambda _runtime, session_id: checked.append(session_id))
    for _ in range(BURST + 5):
        _handle(counted)
    assert len(checked) == BURST + 5  # all handled: the middleware took the cap
