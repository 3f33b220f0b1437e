"""Chromium keeps the standing cookie the served app (serve.py) hands with the websocket's accept, and
sends it back: after a connection from the same address is closed for flooding, the browser's tab still
reloads and is served, while a newcomer is refused (server/reconnect_penalty.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, BrowserContext

from server import message_rate
from server.reconnect_penalty import COOKIE
from tests.e2e.conftest import IDLE, serving
from tests.harness.flooding import flood_until_closed, try_connect
from tests.harness.load_client import Session

TITLE = '[data-testid="stMain"] h1'
T = TypeVar("T")


@pytest.fixture(scope="module")
def served_url(browser: Browser) -> Iterator[str]:
    """A real server started as hosts start it: `streamlit run serve.py`."""
    with serving(browser, script="serve.py", log_name="serve-standing.log") as url:
        yield url


def _standing(context: BrowserContext) -> str:
    return next((cookie["value"] for cookie in context.cookies() if cookie["name"] == COOKIE), "")


def _in_a_thread(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run the protocol client on a thread of its own: Playwright's sync API holds this one's loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _flood_once(port: int) -> int | None:
    """One protocol-client tab from the browser's address that floods until the server closes it."""
    session = Session(port=port, marker="bench-s970-prot", timeout_s=60)
    await session.connect("")
    try:
        return await flood_until_closed(session, session.model.rerun_message().SerializeToString(), 10.0)
    finally:
        await session.close()


def test_a_tab_keeps_its_standing_and_reloads_while_its_address_is_penalised(
    browser: Browser, served_url: str
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(served_url)
        page.wait_for_selector(TITLE, timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        standing = _standing(context)
        assert standing  # kept from the 101 answer
        port = int(served_url.rsplit(":", 1)[1].rstrip("/"))
        assert _in_a_thread(_flood_once(port)) == message_rate.CLOSE_CODE
        refused = _in_a_thread(try_connect(port, marker="bench-s971-prot"))
        assert f"HTTP {message_rate.REFUSED_STATUS}" in refused
        page.reload()
        page.wait_for_selector(TITLE, timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        # Sent back on the reload's websocket and held: the server handed no other.
        assert _standing(context) == standing
    finally:
        context.close()
