"""A client whose connections keep being closed for flooding is refused new ones, before Streamlit sees
them, while the learners behind the same address keep reconnecting (server/reconnect_penalty.py)."""

from __future__ import annotations

import asyncio
import time

from hypothesis import given
from hypothesis import strategies as st
from starlette.types import Message, Receive, Scope, Send

from server import message_rate, reconnect_penalty
from server.message_rate import MessageCap
from server.reconnect_penalty import (
    BASE_PENALTY_S,
    HALF_LIFE_S,
    MAX_PENALTY_S,
    PROBATION_S,
    Decision,
    Penalty,
    ReconnectGuard,
    penalty_s,
    standing_cookie,
)

ROOM = "192.0.2.1"


def _closed_at(times_s: list[float]) -> Penalty:
    penalty = Penalty()
    for now_s in times_s:
        penalty.closed(now_s)
    return penalty


def test_each_closure_at_once_doubles_the_wait_up_to_the_cap():
    # Worked by hand: levels 1, 2, 3 wait 1, 2, 4 s; level 8 would be 128 s, over the 120 s cap.
    assert [_closed_at([0.0] * k).newcomer(0.0) for k in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert _closed_at([0.0] * 8).newcomer(0.0) == MAX_PENALTY_S == 120.0


def test_the_level_halves_every_half_life():
    penalty = _closed_at([0.0] * 4)
    assert penalty.level_at(HALF_LIFE_S) == 2.0
    assert penalty.level_at(2 * HALF_LIFE_S) == 1.0


closure_times = st.lists(st.floats(min_value=0, max_value=1_000), min_size=1, max_size=60).map(sorted)


@given(closure_times)
def test_a_newcomer_waits_at_most_the_cap_and_never_longer_as_time_passes(times_s):
    last_s = times_s[-1]
    penalty = _closed_at(times_s)
    waits = [penalty.until_s - now_s for now_s in (last_s, last_s + 1, last_s + 10)]
    assert 0 < waits[0] <= MAX_PENALTY_S
    assert waits == sorted(waits, reverse=True)


@given(closure_times, st.integers(min_value=1, max_value=5))
def test_another_closure_never_shortens_the_wait(times_s, more):
    last_s = times_s[-1]
    before = _closed_at(times_s).until_s
    assert _closed_at(times_s + [last_s] * more).until_s >= before


@given(st.floats(min_value=1, max_value=1e300))
def test_the_wait_is_bounded_at_any_level(level):
    assert BASE_PENALTY_S <= penalty_s(level) <= MAX_PENALTY_S


def test_after_the_wait_newcomers_come_one_at_a_time_until_the_level_decays():
    penalty = _closed_at([0.0, 0.0])  # level 2: 2 s
    assert penalty.newcomer(1.0) == 1.0
    assert penalty.newcomer(2.0) == 0.0  # one gets in...
    assert penalty.newcomer(2.0) == PROBATION_S  # ...the next waits its turn
    # Once the level is below 1 (a little over one half-life from level 2), the address is as any other.
    quiet_s = HALF_LIFE_S + 1
    assert penalty.newcomer(quiet_s) == 0.0 and penalty.newcomer(quiet_s) == 0.0


def test_a_room_keeps_reconnecting_while_its_flooder_is_refused():
    guard = ReconnectGuard()
    learners = [guard.admit(ROOM, "", 0.0).standing for _ in range(60)]  # sixty tabs behind one NAT
    flooder = guard.admit(ROOM, "", 0.0).standing
    for _ in range(20):
        guard.flooded(ROOM, [flooder], 1.0)
    # Every learner's tab reloads (its cookie goes with it) and is let in, and keeps its standing.
    assert all(guard.admit(ROOM, standing, 2.0) == Decision(0.0, standing) for standing in learners)
    # The flooder, with its revoked cookie or a fresh one, is refused; so is a cookie it forged.
    forged = f"{flooder.partition('.')[0][::-1]}.{flooder.partition('.')[2]}"
    for cookie in (flooder, "", "made-up", forged, guard.mint().partition(".")[0] + ".0"):
        assert guard.admit(ROOM, cookie, 2.0).retry_after_s == MAX_PENALTY_S - 1.0
    # Another address is not touched.
    assert guard.admit("192.0.2.2", "", 2.0).retry_after_s == 0.0


def test_a_standing_signed_by_another_process_is_a_newcomer():
    guard = ReconnectGuard()
    guard.flooded(ROOM, [], 0.0)
    assert guard.admit(ROOM, ReconnectGuard().mint(), 0.0).retry_after_s == BASE_PENALTY_S


def test_the_tables_forget_the_least_recently_seen(monkeypatch):
    monkeypatch.setattr(reconnect_penalty, "MAX_ADDRESSES", 3)
    monkeypatch.setattr(reconnect_penalty, "MAX_REVOKED", 2)
    guard = ReconnectGuard()
    standings = [guard.mint() for _ in range(5)]
    for last, standing in enumerate(standings):
        guard.flooded(f"192.0.2.{last}", [standing], 0.0)
    assert list(guard._penalties) == ["192.0.2.2", "192.0.2.3", "192.0.2.4"]
    assert [guard.holds(standing) for standing in standings] == [True, True, True, False, False]


def test_the_standing_cookie_is_read_among_others():
    headers = [(b"host", b"lab"), (b"cookie", b"_streamlit_xsrf=abc; lab_standing=id.tag ; LAB_REPLICA=r1")]
    assert standing_cookie(headers) == "id.tag"
    assert standing_cookie([(b"cookie", b"lab_standingx=1")]) == ""


def _upgrade(cookie: str = "") -> tuple[list[Message], bool]:
    """One websocket upgrade from ROOM through MessageCap to an app that accepts and then sees the
    browser go: what went back to the client, and whether the app ran at all."""
    sent: list[Message] = []
    ran: list[bool] = []
    incoming: list[Message] = [{"type": "websocket.connect"}, {"type": "websocket.disconnect", "code": 1000}]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        ran.append(True)
        await receive()
        await send({"type": "websocket.accept", "subprotocol": "streamlit"})
        await receive()

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {
        "type": "websocket",
        "path": "/_stcore/stream",
        "headers": [(b"cookie", f"lab_standing={cookie}".encode())] if cookie else [],
        "client": (ROOM, 5000),
    }
    asyncio.run(MessageCap(app)(scope, receive, send))
    return sent, bool(ran)


def test_the_middleware_refuses_a_penalised_newcomer_before_streamlit_runs(monkeypatch):
    monkeypatch.setattr(message_rate, "RECONNECTS", ReconnectGuard())
    sent, ran = _upgrade()
    [accept] = sent
    standing = accept["headers"][-1][1].decode().split(";")[0].removeprefix("lab_standing=")
    assert ran and message_rate.RECONNECTS.holds(standing)
    message_rate.RECONNECTS.flooded(ROOM, [], time.monotonic())  # someone else in the room flooded
    # Closed before it is accepted (uvicorn answers the upgrade 403): Streamlit's endpoint never runs.
    assert _upgrade() == ([{"type": "websocket.close", "code": message_rate.CLOSE_CODE}], False)
    # The learner who was handed a standing comes back with it, and is not handed another.
    sent, ran = _upgrade(standing)
    assert ran and sent == [{"type": "websocket.accept", "subprotocol": "streamlit"}]
