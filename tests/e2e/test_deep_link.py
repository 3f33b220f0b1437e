"""A link to a lesson, opened on the served app (serve.py), connects to the server's root at once.

Streamlit's frontend, opened on `/four-runs`, first looks for the server under that path: a 404 for
`/four-runs/_stcore/health`, 100 ms of waiting, then the root. serve.py's page names the root
(`server/backend_url.py`), so the browser asks the root first and only.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser

from core import lessons
from tests.e2e.conftest import BASE_PATH_PROBE, IDLE, LearnerMaker, serving

LESSON = "four-runs"
TITLE = '[data-testid="stMain"] h1'


@pytest.fixture(scope="module")
def served_url(browser: Browser) -> Iterator[str]:
    """A real server started as hosts start it: `streamlit run serve.py`."""
    with serving(browser, script="serve.py", log_name="serve.log") as url:
        yield url


def _open_lesson(browser: Browser, base_url: str) -> tuple[list[str], list[str]]:
    """Open the lesson in a new browser; the paths it asked for over HTTP and its sockets' paths."""
    context = browser.new_context()
    asked: list[str] = []
    sockets: list[str] = []
    try:
        page = context.new_page()
        page.on("request", lambda request: asked.append(urlparse(request.url).path))
        page.on("websocket", lambda socket: sockets.append(urlparse(socket.url).path))
        page.goto(f"{base_url}/{LESSON}")
        page.wait_for_selector(TITLE, timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        assert urlparse(page.url).path == f"/{LESSON}"
    finally:
        context.close()
    return asked, sockets


def test_a_link_to_a_lesson_asks_the_root_first_and_only(browser: Browser, served_url: str) -> None:
    asked, sockets = _open_lesson(browser, served_url)
    assert [path for path in asked if BASE_PATH_PROBE.search(path)] == []
    assert asked.count("/_stcore/health") == 1
    assert sockets == ["/_stcore/stream"]


def test_without_the_root_named_the_frontend_probes_the_lessons_path(browser: Browser, app_url: str) -> None:
    # `streamlit run Home.py` serves Streamlit's page as it is: the probe the test above rules out is
    # there, so that test would see it.
    asked, sockets = _open_lesson(browser, app_url)
    assert f"/{LESSON}/_stcore/health" in asked
    assert sockets == ["/_stcore/stream"]


def test_the_menu_and_a_reload_keep_a_lessons_url_on_the_served_app(
    new_learner: LearnerMaker, served_url: str
) -> None:
    # The frontend builds the address bar's URL for each page it switches to: naming the server's root
    # must leave those URLs as they were, and a reload must open the same lesson.
    learner = new_learner(served_url)
    learner.open(LESSON)
    learner.nav("Linear layer cost")
    assert urlparse(learner.page.url).path == "/linear-layer"
    learner.page.reload()
    learner.settle_loaded()
    assert urlparse(learner.page.url).path == "/linear-layer"
    assert learner.page.locator(TITLE).first.inner_text() == lessons.sentence("linear", "title")
    assert learner.exceptions() == [] and learner.console_errors == []
