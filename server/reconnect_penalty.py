"""A client whose websockets keep being closed for flooding is refused new ones for a while, before
Streamlit makes a session for them.

Closing a flooding connection (server/message_rate.py) was not enough: the flooder opened another at
once, and each new websocket is a new session whose first run draws a whole page. Through HAProxy on two
replicas, a 20-connection flood that reconnected after every close left another learner's p95 eight
times a quiet run's. So `message_rate.MessageCap` asks this module before it lets an upgrade reach
Streamlit, and a refused one is closed before it is accepted (uvicorn answers the upgrade with 403): no
session, no page run.

Whom to refuse. The address alone will not do: a workshop room shares one address behind its NAT, and
refusing it would lock out sixty learners because one floods. A cookie the client writes will not do
either: a client can mint a fresh one for every attempt. What the flooder cannot mint is *standing*:
every websocket this process accepts is handed a cookie it signed (`lab_standing`, an id and an HMAC
under a key made at start), and a connection closed for flooding revokes the standing it came with and
the one it was handed. While an address is penalised, an upgrade from it is let through only with a
standing this process signed and has not revoked: the learners of a room, whose tabs have been
connected, keep reloading and reconnecting as before (Chromium keeps a cookie set on the upgrade's answer:
tests/e2e/test_standing_in_the_browser.py); a fresh or revoked cookie (every flooder's
reconnect) is a newcomer. Newcomers from a penalised address wait out the penalty and then get in
one at a time (one per `PROBATION_S` while the address's level stays up), so a flooder gets one new
session every so often. The cost falls on a learner who opens the lab for the first time, behind the
flooder's NAT, while the flood goes on: a newcomer like the flooder, it waits out the penalty and then
races the flooder's retries for a slot (and HAProxy, which counts the flooder's retries against the
address's 240 websocket opens a minute, may refuse it first). Tabs that have been connected, the
class's, are not touched.

The penalty grows while the flooding goes on and decays after it stops: each closure for flooding adds
one to the address's level, which halves every `HALF_LIFE_S`, and refuses newcomers for
`BASE_PENALTY_S * 2 ** (level - 1)`, at most `MAX_PENALTY_S`, from the closure. Below level 1 the
address is no longer on probation and newcomers get in as usual.

What it does not stop: standing earned before the flood. A client that opens clean connections first
holds an unrevoked cookie for each; each cost a session of its own, and buys only the connections opened
with it before the first of them is closed for flooding, all under HAProxy's 240 websocket opens a
minute per address. HAProxy cannot help here: its counters key on the address (a room), so counting the
refusals there would lock the room out. The standing is per process (a replica); after a failover a learner
is a newcomer on the other replica, and refused only where that replica penalises its address.

The tables belong to addresses and cookies, not learners: at most `MAX_ADDRESSES` addresses and
`MAX_REVOKED` revoked ids, the least recently seen forgotten first.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

COOKIE = "lab_standing"
BASE_PENALTY_S = 1.0
MAX_PENALTY_S = 120.0
HALF_LIFE_S = 120.0
PROBATION_S = 2.0  # long enough for the message cap to close a newcomer that floods (40 + 40 messages)
MAX_ADDRESSES = 10_000
MAX_REVOKED = 100_000
_ID_BYTES = 12
_TAG_HEX = 32


@dataclass
class Penalty:
    """One address's penalty: a level that decays, and the time before which newcomers are refused."""

    level: float = 0.0
    updated_s: float = 0.0
    until_s: float = 0.0

    def level_at(self, now_s: float) -> float:
        """The level at `now_s`: it halves every `HALF_LIFE_S`."""
        return self.level * 2.0 ** (-max(0.0, now_s - self.updated_s) / HALF_LIFE_S)

    def closed(self, now_s: float) -> None:
        """A connection from this address was closed for flooding at `now_s`."""
        self.level = self.level_at(now_s) + 1.0
        self.updated_s = now_s
        self.until_s = max(self.until_s, now_s + penalty_s(self.level))

    def newcomer(self, now_s: float) -> float:
        """0 to let a newcomer in at `now_s` (taking the probation slot), or the seconds it must wait."""
        if now_s < self.until_s:
            return self.until_s - now_s
        if self.level_at(now_s) >= 1.0:
            self.until_s = now_s + PROBATION_S
        return 0.0


def penalty_s(level: float) -> float:
    """How long newcomers are refused after a closure that brought the address to `level` (at least 1)."""
    return min(MAX_PENALTY_S, BASE_PENALTY_S * 2.0 ** min(level - 1.0, 64.0))  # no overflow at any level


@dataclass(frozen=True)
class Decision:
    """What to do with one websocket upgrade: `retry_after_s` > 0 refuses it; otherwise it goes on to
    Streamlit, and `standing` is the cookie value the connection is handed (and may lose)."""

    retry_after_s: float
    standing: str


class ReconnectGuard:
    """The process's penalties by address and the standing it signed and revoked."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._penalties: OrderedDict[str, Penalty] = OrderedDict()
        self._revoked: OrderedDict[str, None] = OrderedDict()

    def _sign(self, standing_id: str) -> str:
        return hmac.new(self._key, standing_id.encode(), hashlib.sha256).hexdigest()[:_TAG_HEX]

    def mint(self) -> str:
        """A fresh standing, signed by this process."""
        standing_id = secrets.token_hex(_ID_BYTES)
        return f"{standing_id}.{self._sign(standing_id)}"

    def holds(self, standing: str) -> bool:
        """Whether `standing` is one this process signed and has not revoked."""
        standing_id, _, tag = standing.partition(".")
        signed = hmac.compare_digest(tag.encode(), self._sign(standing_id).encode())
        return signed and standing_id not in self._revoked

    def admit(self, address: str, cookie: str, now_s: float) -> Decision:
        """Whether an upgrade from `address` carrying the standing cookie `cookie` ("" for none) goes on."""
        with self._lock:
            if self.holds(cookie):
                return Decision(retry_after_s=0.0, standing=cookie)
            penalty = self._penalties.get(address)
            wait_s = 0.0 if penalty is None else penalty.newcomer(now_s)
            return Decision(retry_after_s=wait_s, standing="" if wait_s > 0 else self.mint())

    def flooded(self, address: str, standings: Iterable[str], now_s: float) -> None:
        """A connection from `address` was closed for flooding: its standings go, the address's penalty
        grows."""
        with self._lock:
            for standing in standings:
                standing_id = standing.partition(".")[0]
                self._revoked[standing_id] = None
                self._revoked.move_to_end(standing_id)
                if len(self._revoked) > MAX_REVOKED:
                    self._revoked.popitem(last=False)
            penalty = self._penalties.setdefault(address, Penalty())
            self._penalties.move_to_end(address)
            if len(self._penalties) > MAX_ADDRESSES:
                self._penalties.popitem(last=False)
            penalty.closed(now_s)


def standing_cookie(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The value of the standing cookie in an ASGI request's headers, or "" where there is none."""
    for name, value in headers:
        if name.lower() != b"cookie":
            continue
        for pair in value.decode("latin-1").split(";"):
            cookie_name, _, cookie_value = pair.strip().partition("=")
            if cookie_name == COOKIE:
                return cookie_value.strip()
    return ""


def set_cookie(standing: str) -> tuple[bytes, bytes]:
    """The header that hands a connection its standing (sent with the websocket's accept)."""
    return (b"set-cookie", f"{COOKIE}={standing}; Path=/; HttpOnly; SameSite=Strict".encode())
