"""Real-browser fixtures: one `streamlit run Home.py` on a free loopback port, Debian's Chromium.

These tests never skip: a machine without Chromium or Playwright fails them loudly
(`.ci/run` installs both).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
# Flags for a headless root run on a machine with no network beyond loopback.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_TIMEOUT_S = 60
# On a deep link Streamlit's frontend first probes for its own files under the page's path
# (e.g. /linear-layer/_stcore/health) before finding them at the root; those 404s are expected.
BASE_PATH_PROBE = re.compile(r"/[^/]+/_stcore/(host-config|health)$")
NOT_FOUND = "the server responded with a status of 404"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy within {STARTUP_TIMEOUT_S}s")


@pytest.fixture(scope="session")
def app_url(browser: Browser) -> Iterator[str]:
    """The base URL of a real app server started for this test session."""
    port = _free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", "Home.py",
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
    ]
    log = open(ROOT / "test-artifacts" / "streamlit.log", "w") if _artifacts_ready() else subprocess.DEVNULL
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        _warm_up(browser, url)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def _warm_up(browser: Browser, url: str) -> None:
    # Streamlit runs the very first script of a process in its pages/-directory mode (Home.py
    # turns that off for every later run), so one visit to the root happens before any test.
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
    context.close()


def _artifacts_ready() -> bool:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return True


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Debian Chromium driven by Playwright."""
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Learner:
    """One learner's browser context, with helpers that wait the way a person would."""

    def __init__(self, context: BrowserContext, base_url: str) -> None:
        self.context = context
        self.base_url = base_url
        self.page: Page = context.new_page()
        self._console: list[str] = []
        self._missing: list[str] = []
        self.page.on("console", lambda message: message.type == "error" and self._console.append(message.text))
        self.page.on("pageerror", lambda error: self._console.append(str(error)))
        self.page.on("response", lambda reply: reply.status == 404 and self._missing.append(reply.url))

    @property
    def console_errors(self) -> list[str]:
        """Browser console errors, less the 404s of Streamlit's base-path probe."""
        probes_only = all(BASE_PATH_PROBE.search(url.split("?")[0]) for url in self._missing)
        return [text for text in self._console if not (probes_only and NOT_FOUND in text)]

    def open(self, path: str = "") -> Page:
        """Load a page of the app (e.g. "linear-layer?n_in=1024") and wait for it to settle."""
        self.page.goto(f"{self.base_url}/{path}")
        self.settle()
        return self.page

    def settle(self) -> None:
        """Wait until the app has stopped running its script."""
        # A click reaches the server a moment after it happens; give the rerun time to start.
        self.page.wait_for_timeout(400)
        self.page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=30_000)
        self.page.wait_for_timeout(200)

    def nav(self, title: str) -> None:
        """Follow a link in the navigation menu."""
        self.page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
        self.settle()

    def answer(self, option_text: str) -> None:
        """Pick an option of the first open marked question and lock it in."""
        self.page.get_by_text(option_text, exact=True).first.click()
        self.page.get_by_role("button", name="Lock in my answer").first.click()
        self.settle()

    def exceptions(self) -> list[str]:
        """Streamlit exception boxes on the page."""
        return self.page.locator('[data-testid="stException"]').all_inner_texts()

    def screenshot(self, name: str) -> None:
        """Save a full-page screenshot as a test artifact."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture
def learner(browser: Browser, app_url: str) -> Iterator[Learner]:
    """A fresh learner in their own browser context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    yield Learner(context, app_url)
    context.close()


@pytest.fixture
def second_learner(browser: Browser, app_url: str) -> Iterator[Learner]:
    """Another learner at the same time, in a separate context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield Learner(context, app_url)
    context.close()
