"""Guessing the instructor key and probing room codes over Streamlit's own protocol, against a real
server of its own store.

The review sent 2,400 wrong keys in 24 s through one replica. Here one session sends them as fast as
the server answers: five are compared and refused, the sixth earns a 2 s wait, the right key sent
straight after is refused unread, and of a dozen more only the few that fall after a wait ends
(2 s, then 4 s, 8 s ...) are compared at all. The server logs one line per compared key, with
counts and never what was typed. Room codes: unknown, full and closed codes read the same, and
twenty codes that open nothing earn a wait. (The AppTest suite moves a clock by hand for the exact
waits, a fresh session, another replica and another browser behind the same address.)
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core import lessons
from store import LearnerStore
from store.ids import new_learner_id
from store.rooms import RoomStore
from tests.harness.browser import Browser, identify
from tests.harness.load_client import Session
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer
from tests.harness.workshop import ROOM_BOX, Figures, open_box, submit_form

KEY = secrets.token_hex(32)
WRONG = lessons.sentence("instructor", "wrong_key")
WAIT_START = lessons.sentence("instructor", "wait", seconds=0).split("0 s")[0]


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """A real server with an instructor key and a store of its own, so its counts touch no other test."""
    folder = tmp_path_factory.mktemp("guessing")
    env = {"LAB_INSTRUCTOR_KEY": KEY, "LAB_DATABASE_URL": f"sqlite:///{folder / 'learners.sqlite3'}"}
    with StreamlitServer(
        script=REPO_ROOT / "Home.py", post_script_gc=False, log_path=folder / "server.log", env=env
    ) as running:
        yield running


async def _try_keys(port: int, typed: list[str], marker: str) -> list[list[str]]:
    """The alert texts each sign-in attempt drew, one session for all of `typed`."""
    session = Session(port=port, marker=marker, timeout_s=60)
    shown = []
    try:
        await session.connect("instructor")
        for key in typed:
            session.model.run_texts = []
            await submit_form(session, {"Instructor key": key}, "Sign in", Figures())
            shown.append([t for t in session.model.run_texts if t.startswith((WRONG, WAIT_START))])
    finally:
        await session.close()
    return shown


def test_fast_guesses_are_mostly_refused_unread_and_the_right_key_waits(guarded_server: StreamlitServer):
    first = [secrets.token_hex(32) for _ in range(6)]
    later = [secrets.token_hex(32) for _ in range(12)]
    shown = asyncio.run(_try_keys(guarded_server.port, [*first, KEY, *later], "bench-s904-prot"))
    assert shown[:5] == [[WRONG]] * 5
    assert shown[5][0].startswith(f"{WRONG} {WAIT_START}")  # the sixth is compared and earns 2 s
    assert shown[6][0].startswith(WAIT_START)  # the right key, sent at once: refused unread
    compared_later = sum(texts[0].startswith(WRONG) for texts in shown[7:])
    assert all(texts for texts in shown[7:])
    # Within the 2 + 4 + 8 s of waits a dozen fast guesses take, at most three are compared.
    assert compared_later <= 3

    log = Path(guarded_server.log_path).read_text(encoding="utf-8")
    refused = [line for line in log.splitlines() if "Instructor sign-in refused" in line]
    assert len(refused) == 6 + compared_later  # only compared keys are logged
    assert not any(guess in log for guess in [*first, *later, KEY])


REFUSED = lessons.sentence("rooms", "refused")
JOIN_WAIT_START = lessons.sentence("rooms", "wait", seconds=0).split("0 s")[0]


async def _probe(port: int, codes: list[str]) -> list[list[str]]:
    """The room sentences each join drew, one learner session for all of `codes`."""
    session = Session(port=port, marker="bench-s906-prot", timeout_s=60)
    shown = []
    try:
        await session.connect("")
        await identify(session, Browser())
        await open_box(session, ROOM_BOX)
        for code in codes:
            session.model.run_texts = []
            await submit_form(session, {"Room code": code}, "Join", Figures())
            shown.append([t for t in session.model.run_texts if t.startswith((REFUSED, JOIN_WAIT_START))])
    finally:
        await session.close()
    return shown


def test_room_codes_read_the_same_whatever_the_reason_and_probing_waits(guarded_server: StreamlitServer):
    rooms = RoomStore(LearnerStore.open(guarded_server.env["LAB_DATABASE_URL"]))
    full = rooms.create_room(capacity=1, lifetime=timedelta(hours=1))
    rooms.join(full.code, new_learner_id(), None)
    closed = rooms.create_room(capacity=5, lifetime=timedelta(hours=1))
    rooms.close_room(closed.code)
    unknown = [f"ZZZZ{a}{b}" for a in "2345" for b in "6789A"]  # codes no room was made with
    codes = [full.code, closed.code, *unknown[:18], "ZZZZZZ", full.code]
    shown = asyncio.run(_probe(guarded_server.port, codes))
    assert shown[:21] == [[REFUSED]] * 21  # full, closed and unknown alike, twenty-one looked up
    assert shown[21][0].startswith(JOIN_WAIT_START)  # sent at once after the 21st: not looked up
