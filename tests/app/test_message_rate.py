"""The message cap holds per client address across connections, closes a connection that keeps sending
over it, and runs before the widget-type check (server/message_rate.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime import Runtime

from server import changes, message_rate, widget_types
from server.message_rate import ADDRESS_BURST, BURST, STRIKES, MessageRate, client_address


class _Client:
    """A connection as Streamlit's handler sees it: its context holds the peer address and the headers."""

    def __init__(self, ip: str, forwarded: str | None) -> None:
        headers = [("X-Forwarded-For", forwarded)] if forwarded is not None else []
        self.client_context = SimpleNamespace(remote_ip=ip, headers=headers)


def _client(ip: str, forwarded: str | None = None) -> _Client:
    return _Client(ip, forwarded)


def _admitted(rates: MessageRate, clients: list[_Client], rounds: int, now_s: float = 0.0) -> int:
    """Send `rounds` messages from each client at the same instant; how many were let through."""
    return sum(rates.admit(client, now_s) is True for _ in range(rounds) for client in clients)


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
    assert rates.admit(client, 0.0) is False
    assert rates.admit(client, 1.0) is True  # ten a second: a tenth of a second buys one


def test_a_connection_that_keeps_sending_over_the_cap_is_told_to_close():
    rates = MessageRate()
    client = _client("192.0.2.1")
    answers = [rates.admit(client, 0.0) for _ in range(BURST + STRIKES + 1)]
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
        rates.admit(_client(f"192.0.2.{last}"), 0.0)
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
