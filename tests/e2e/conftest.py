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
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Locator,
    Page,
    Response,
    WebSocket,
    expect,
    sync_playwright,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from core import lessons
from core.questions import load_bank

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
INSTRUCTOR_KEY = "9ced80a831aa76c038dd42a4d15ce1033e2a53f999023ab8a3c6b4b3a9143983"  # as $LAB_INSTRUCTOR_KEY
MAX_SCREENSHOT_PX = 12_000  # keeps a capture of a very long page to a reviewable size


def shown(markdown: str) -> str:
    """What a browser shows of a lesson sentence written in Markdown: no icon, no emphasis marks."""
    return re.sub(r":material/\w+:\s*", "", markdown).replace("*", "")


# The words a test finds its way by, read from the lesson text as the app reads them.
LOCK_ANSWER = lessons.sentence("marked", "lock_answer")
LOCK_PREDICTION = lessons.sentence("marked", "lock_prediction")
SAVED = shown(lessons.sentence("identity", "saved"))
# After an action, how long its handlers may take to send their rerun request (a React effect runs
# within a frame or two), and how long the page may take to draw what the finished run sent.
ACTION_SENT_MS = 100
DRAWN_MS = 150
SETTLE_TIMEOUT_S = 30
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
# What Streamlit's frontend draws in an element's place while it fetches the code for that kind of element
# (a table, a radio group, a chart: each its own file, fetched the first time a browser context meets it).
LOADING = '[data-testid="stSkeleton"]'
# Counts, in the page, the app socket's frames that the page's own code has been handed: Playwright sees a
# frame when the browser receives it, and a tab whose main thread is busy drawing can take hundreds of
# milliseconds more to read it, showing the last run's state meanwhile. Counted in a later task, so after
# Streamlit's own listener has run.
FRAMES_READ_SCRIPT = """
(() => {
  const Native = window.WebSocket;
  window.__labFramesRead = 0;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      if (String(args[0]).endsWith("/_stcore/stream")) {
        window.__labFramesRead = 0;
        this.addEventListener("message", () => setTimeout(() => { window.__labFramesRead += 1; }));
      }
    }
  };
})();
"""


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


def start_app(
    port: int,
    env: dict[str, str] | None = None,
    log_name: str = "streamlit.log",
    script: str = "Home.py",
) -> subprocess.Popen:
    """Start `streamlit run Home.py` (or `script`, e.g. serve.py) on a loopback port, with extra
    environment from `env`; returns the process."""
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
    ]
    # Under pytest-xdist each worker runs servers of its own: one log each.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        log_name = f"{Path(log_name).stem}-{worker}.log"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # The server writes through its own copy of the descriptor: the test's copy closes once it started.
    with open(ROOT / "test-artifacts" / log_name, "w") as log:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "LAB_INSTRUCTOR_KEY": INSTRUCTOR_KEY, **(env or {})},
        )


def ready(browser: Browser, url: str, process: subprocess.Popen) -> None:
    """Wait until a started app answers, then pay its first run (see `_warm_up`)."""
    _wait_healthy(url, process)
    _warm_up(browser, url)


def stop_app(process: subprocess.Popen) -> None:
    """Stop an app server the way a host would (SIGTERM), and wait for it."""
    process.terminate()
    process.wait(timeout=20)


@contextmanager
def serving(browser: Browser, script: str = "Home.py", log_name: str = "streamlit.log") -> Iterator[str]:
    """A real app server on a free loopback port, ready for visitors: its base URL."""
    port = _free_port()
    process = start_app(port, log_name=log_name, script=script)
    url = f"http://127.0.0.1:{port}"
    try:
        ready(browser, url, process)
        yield url
    finally:
        stop_app(process)


@pytest.fixture(scope="session")
def app_url(browser: Browser) -> Iterator[str]:
    """The base URL of a real app server started for this test session."""
    with serving(browser) as url:
        yield url


def _warm_up(browser: Browser, url: str) -> None:
    # Streamlit runs the very first script of a process in its pages/-directory mode (st.navigation
    # in Home.py turns that off for every later run), so one visit to the root happens before any test.
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=60_000)
    context.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Debian Chromium driven by Playwright."""
    assert Path(CHROMIUM).exists(), (
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)"
    )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class RunWatch:
    """Which of the page's rerun requests have been answered, read off its websocket to the app.

    Events are numbered as Playwright hands them over, in the order the socket carried them; a run
    cut short by a newer request (FINISHED_EARLY_FOR_RERUN) answers nothing, and requests that the
    server merged into one run are all answered by that run's end.
    """

    def __init__(self) -> None:
        self._events = 0
        self.asked = 0
        self.finished = 0
        self.frames = 0  # every frame the socket carried to the page
        self.presses = 0  # requests that carry a button's press, a form's submit among them
        self.fragments: list[str] = []  # the fragment each request named, "" for the whole app
        # Each run the server started, asked for or not: the fragments it ran (none for the whole app),
        # and the elements and blocks it sent.
        self.started: list[tuple[tuple[str, ...], int]] = []

    def sent(self, payload: str | bytes) -> None:
        """Note a rerun request (a widget change, a page switch, a fragment)."""
        if not isinstance(payload, bytes):
            return
        message = BackMsg.FromString(payload)
        if message.WhichOneof("type") == "rerun_script":
            self._events += 1
            self.asked = self._events
            self.fragments.append(message.rerun_script.fragment_id)
            widgets = message.rerun_script.widget_states.widgets
            self.presses += any(
                widget.WhichOneof("value") == "trigger_value" and widget.trigger_value for widget in widgets
            )

    def received(self, payload: str | bytes) -> None:
        """Note the start of a run, what it sent, and the end of a run that ran to its end."""
        if not isinstance(payload, bytes):
            return
        self.frames += 1
        message = ForwardMsg.FromString(payload)
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.started.append((tuple(message.metadata.run.fragment_ids), 0))
        elif kind in ("delta", "ref_hash") and self.started:  # an element, or a reference to one cached
            fragments, deltas = self.started[-1]
            self.started[-1] = (fragments, deltas + 1)
        elif kind == "script_finished" and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self._events += 1
            self.finished = self._events

    @property
    def whole_runs(self) -> int:
        """Runs of the whole app the server started, asked for or not."""
        return sum(not fragments for fragments, _ in self.started)

    @property
    def answered(self) -> bool:
        """Whether every request sent so far has been followed by a finished run."""
        return self.finished >= self.asked


class Learner:
    """One learner's browser context, with helpers that wait the way a person would."""

    def __init__(self, context: BrowserContext, base_url: str) -> None:
        self.context = context
        self.base_url = base_url
        self._console: list[str] = []
        self._missing: list[str] = []
        self._runs = RunWatch()
        context.add_init_script(FRAMES_READ_SCRIPT)
        self.page = context.new_page()

    @property
    def runs(self) -> RunWatch:
        """The rerun requests and finished runs of the page's current websocket."""
        return self._runs

    @property
    def page(self) -> Page:
        """The tab the helpers act on; another tab of the same context can take its place."""
        return self._page

    @page.setter
    def page(self, page: Page) -> None:
        self._page = page
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self._console.append(str(error)))
        page.on("response", self._on_response)
        page.on("websocket", self._on_websocket)

    def _on_websocket(self, socket: WebSocket) -> None:
        if socket.url.endswith("/_stcore/stream"):
            self._runs = watch = RunWatch()  # a load or reload opens a new socket: its own requests
            socket.on("framesent", watch.sent)
            socket.on("framereceived", watch.received)

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self._console.append(message.text)

    def _on_response(self, reply: Response) -> None:
        if reply.status == 404:
            self._missing.append(reply.url)

    @property
    def console_errors(self) -> list[str]:
        """Browser console errors, less the 404s of Streamlit's base-path probe."""
        probes_only = all(BASE_PATH_PROBE.search(url.split("?")[0]) for url in self._missing)
        return [text for text in self._console if not (probes_only and NOT_FOUND in text)]

    def open(self, path: str = "") -> Page:
        """Load a page of the app (e.g. "linear-layer?n_in=1024") and wait for it to settle."""
        self.page.goto(f"{self.base_url}/{path}")
        self.settle_loaded()
        return self.page

    def settle_loaded(self) -> None:
        """Wait until the browser has told the app whose work this is and the record is loaded."""
        self.settle()
        try:
            self.saved_note().filter(has_text=SAVED).wait_for(timeout=60_000)
        except PlaywrightTimeoutError as error:  # say what the page shows instead, for a flake read later
            note = self.saved_note().all_inner_texts()
            raise AssertionError(
                f"no {SAVED!r} within 60 s; the saved note shows {note}; runs asked for "
                f"{self._runs.asked}, finished {self._runs.finished}; exceptions {self.exceptions()}; "
                f"console {self.console_errors}"
            ) from error
        self.settle()

    def saved_note(self) -> Locator:
        """The sidebar's saved indicator."""
        return self.page.locator(".st-key-lab-saved")

    def settle(self) -> None:
        """Wait until every run the page asked for has finished, the page has read all it was sent, and it
        has drawn it, every element's code included: a test that counts or clicks elements right after would
        otherwise race their arrival or their loading."""
        self.page.wait_for_timeout(ACTION_SENT_MS)
        self._wait_until(
            lambda: (
                self._runs.answered
                and self._frames_read() >= self._runs.frames
                and self.page.locator(IDLE).count() > 0
                and self.page.locator(LOADING).count() == 0
            ),
            lambda: (
                f"runs asked for {self._runs.asked}, finished {self._runs.finished}, frames received "
                f"{self._runs.frames}, read by the page {self._frames_read()}, idle "
                f"{self.page.locator(IDLE).count()}, elements loading {self.page.locator(LOADING).count()}"
            ),
        )
        self.page.wait_for_timeout(DRAWN_MS)

    def _frames_read(self) -> int:
        """How many of the app socket's frames the page's code has been handed (`FRAMES_READ_SCRIPT`)."""
        return self.page.evaluate("window.__labFramesRead")

    def submit(self, button: Locator) -> None:
        """Press a button that always asks for a run (a form's submit button), wait until the page has
        sent that press, then settle. On a busy machine the press can leave later than `ACTION_SENT_MS`,
        and a settle that starts before it would find the page idle and return early. Any other request
        will not do: the page sends some of its own (the browser's report of whose work this is), and
        one that left in the same moment would be settled while the press was still to come."""
        before = self._runs.presses
        button.click()
        self._wait_until(lambda: self._runs.presses != before, lambda: "the submit sent no press")
        self.settle()

    def _wait_until(self, done: Callable[[], bool], state: Callable[[], str]) -> None:
        """Poll `done` until it holds; after `SETTLE_TIMEOUT_S`, fail saying `state()`."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"{SETTLE_TIMEOUT_S} s after an action: {state()}")
            self.page.wait_for_timeout(20)  # Playwright hands over the socket's frames while it waits

    def nav(self, title: str) -> None:
        """Follow a link in the navigation menu."""
        self.page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
        self.settle()

    def lock(self, form: Locator, button: str) -> None:
        """Press `form`'s lock button, wait until the lock has taken the form off the page, then settle.
        A settle alone can return between the page's code reading a run's end and the page drawing it,
        with the form the lock replaces still in place for the next helper to count or click."""
        drawn = form.element_handle()
        self.submit(form.get_by_role("button", name=button))
        try:
            drawn.wait_for_element_state("hidden", timeout=SETTLE_TIMEOUT_S * 1000)
        except PlaywrightTimeoutError as error:
            raise AssertionError(
                f"the form was still on the page {SETTLE_TIMEOUT_S} s after its lock"
            ) from error
        self.settle()

    def answer(self, option_text: str) -> None:
        """Pick an option of the first open marked question that offers it and lock it in (a locked one
        still lists its options, greyed out)."""
        option = self.page.get_by_text(option_text, exact=True)
        locks = self.page.get_by_role("button", name=LOCK_ANSWER)
        form = self.page.locator('[data-testid="stForm"]').filter(has=locks).filter(has=option).first
        form.get_by_text(option_text, exact=True).click()
        self.lock(form, LOCK_ANSWER)

    def sort_four_runs(self) -> None:
        """On the Four runs page, sort all four runs rightly, which opens their dashboards."""
        bank = load_bank()
        for question_id in ("r1", "r2", "r3", "r4"):
            question = bank.question(question_id)
            self.answer(question.option_text(question.correct))

    def predict_all(self) -> None:
        """Lock every prediction the page shows (the first option of each list or drop-down menu), one form
        at a time, so what the predictions hide is drawn."""
        for _ in range(10):
            forms = self.page.locator('[data-testid="stForm"]:visible').filter(
                has=self.page.get_by_role("button", name=LOCK_PREDICTION)
            )
            if forms.count() == 0:
                return
            form = forms.first
            options = form.get_by_role("radiogroup").locator("label")  # the inputs hide behind their labels
            if options.count():
                options.first.click()
            else:  # a long ordered scale is a menu that starts with nothing chosen
                form.get_by_role("combobox").first.click()
                self.page.get_by_role("option").first.click()
            self.lock(form, LOCK_PREDICTION)
        raise AssertionError("predictions kept appearing after ten were locked")

    def exceptions(self) -> list[str]:
        """Streamlit exception boxes on the page."""
        return self.page.locator('[data-testid="stException"]').all_inner_texts()

    def screenshot(self, name: str) -> None:
        """Save a full-page screenshot as a test artifact."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def keep_evidence(self, name: str) -> str:
        """Save what a failed test left on screen: a screenshot of the window and, beside it, the runs the
        socket saw, the page's state and the main area's text (a failure that the next run does not
        repeat can then still be read). Returns the same, less the main area's text."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        state = self.page.evaluate(
            """loading => {
                const all = selector => [...document.querySelectorAll(selector)];
                const tables = '[data-testid="stTable"], [data-testid="stDataFrame"]';
                return {
                    scriptState: document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState,
                    staleElements: all('[data-stale="true"]').length,
                    elementsLoading: all(loading).length,
                    tables: all(tables).map(t => (t.checkVisibility() ? 'visible' : 'hidden')),
                    boxes: all('[data-testid="stMain"] details').map(
                        d => (d.open ? 'open: ' : 'closed: ') + d.querySelector('summary').innerText.trim()
                    ),
                };
            }""",
            LOADING,
        )
        runs = self._runs
        lines = [
            f"url: {self.page.url}",
            f"window: {self.page.viewport_size}",
            f"rerun requests: {runs.asked}, presses: {runs.presses}, finished runs: {runs.finished}, "
            f"whole runs: {runs.whole_runs}",
            f"frames received: {runs.frames}, read by the page: {self._frames_read()}",
            f"fragments asked for: {runs.fragments}",
            f"runs started (fragments run, elements sent): {runs.started}",
            *(f"{key}: {value}" for key, value in state.items()),
            f"console errors: {self.console_errors}",
        ]
        (ARTIFACTS / f"{name}.txt").write_text("\n".join([*lines, "main area:", self.main_text()]))
        return "\n".join(lines)

    def nav_titles(self) -> list[str]:
        """The page titles in the navigation menu, in menu order."""
        links = self.page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
        # Each link reads "<icon ligature>\n\n<title>"; the title is its last line.
        return [text.strip().splitlines()[-1].strip() for text in links]

    def slider(self, label: str) -> Locator:
        """A slider's thumb by the slider's label (its accessible name repeats the label)."""
        return self.page.locator(f'input[type=range][aria-label="{label}"]')

    def slide(self, label: str, presses: int = 1, key: str = "ArrowRight") -> None:
        """Move a slider the way a keyboard user does: focus its thumb and press an arrow key."""
        self.slider(label).focus()
        for _ in range(presses):
            self.page.keyboard.press(key)
        self.settle()

    def choose(self, label: str, option: str) -> None:
        """Pick an option of a select box by clicking it open and clicking the option."""
        box = self.page.get_by_role("combobox", name=label, exact=True)
        # A box at the window's bottom edge opens its list off screen unless scrolled up first.
        box.scroll_into_view_if_needed()
        box.click()
        self.page.get_by_role("option", name=option, exact=True).click()
        self.settle()

    def pick(self, group: str, option: str) -> None:
        """Click one option of a radio group (the input itself is hidden behind its label)."""
        self.page.get_by_role("radiogroup", name=group, exact=True).get_by_text(option, exact=True).click()
        self.settle()

    def open_box(self, within: Locator, title: str) -> None:
        """Click a closed box's title and wait for the rerun it asks for: a box built only while open
        is drawn by that run, and a click inside it before the run ends can be lost."""
        within.get_by_text(title, exact=True).click()
        self.settle()

    def shared_link(self) -> str:
        """Open the page's "Share this setup" box and return the link it shows."""
        box = self.page.locator('[data-testid="stExpander"]').filter(has_text="Share this setup")
        code = box.locator('[data-testid="stCode"]')
        if not code.is_visible():
            self.open_box(box, "Share this setup")
        code.wait_for(state="visible")
        return code.inner_text().strip()

    def settings_shown(self) -> dict[str, str]:
        """What the settings widgets show: label -> value (sliders, boxes, radios), leaving out forms
        and marked questions (a locked answer is a radio outside any form)."""
        return self.page.locator('[data-testid="stMain"]').evaluate(
            """main => {
                const shown = {};
                const isSetting = e => !e.closest('[data-testid="stForm"], [class*="st-key-marked-"]');
                const inputs = 'input[type=range], input[role=combobox], [data-testid="stNumberInput"] input';
                for (const e of main.querySelectorAll(inputs)) {
                    if (isSetting(e)) shown[e.getAttribute('aria-label')] = e.value;
                }
                for (const group of main.querySelectorAll('[role=radiogroup]')) {
                    if (!isSetting(group)) continue;
                    const checked = group.querySelector('input[type=radio]:checked');
                    shown[group.getAttribute('aria-label')] =
                        checked ? checked.closest('label').innerText.trim() : '';
                }
                return shown;
            }"""
        )

    def main_forms(self) -> Locator:
        """The page's own forms, in page order (the sidebar's room form is not one of them)."""
        return self.page.locator('[data-testid="stMain"] [data-testid="stForm"]')

    def screenshot_whole(self, name: str) -> None:
        """Save a screenshot of the whole page, below the fold too.

        Streamlit scrolls inside its main area, so a browser's full-page capture stops at the
        window; for one shot the window is made as tall as that area.
        """
        size = self.page.viewport_size
        assert size is not None, "the context is created with a viewport"
        height = self.page.locator('[data-testid="stMain"]').evaluate("main => main.scrollHeight")
        self.page.set_viewport_size(
            {"width": size["width"], "height": max(size["height"], min(height, MAX_SCREENSHOT_PX))}
        )
        self.page.wait_for_timeout(300)  # charts redraw for the new size
        self.screenshot(name)
        self.page.set_viewport_size(size)

    def submit_form(self, index: int, text: str, option: str | None = None) -> None:
        """Fill in the page's index-th form (page order): pick `option`, type `text`, submit it."""
        form = self.main_forms().nth(index)
        if option is not None:
            form.get_by_text(option, exact=True).click()
        form.locator("textarea").fill(text)
        self.submit(form.get_by_test_id("stFormSubmitButton").locator("button"))

    def main_text(self) -> str:
        """All the text of the page's main area."""
        return self.page.locator('[data-testid="stMain"]').inner_text()

    def create_room(self) -> str:
        """Sign in on the Instructor page with the test key, create a room, and return its join link."""
        self.open("instructor")
        self.page.get_by_label("Instructor key").fill(INSTRUCTOR_KEY)
        self.page.get_by_role("button", name="Sign in").click()
        self.settle()
        self.page.get_by_role("button", name="Create a room").click()
        self.settle()
        link = self.page.get_by_test_id("stCode").filter(has_text="?room=").inner_text().strip()
        assert link.startswith(f"{self.base_url}/?room=")
        return link

    def join_room(self, link: str, name: str = "") -> None:
        """Follow a room's join link and join it from the sidebar, under `name` if one is given."""
        self.page.goto(link)
        self.settle()
        expect(self.page.get_by_text(SAVED)).to_be_visible(timeout=30_000)
        sidebar = self.page.get_by_test_id("stSidebar")
        # The link opens the "Workshop room" box by itself. A click on its header here would race the
        # box's first drawing, and a click on an open box closes it, form and all.
        expect(sidebar.get_by_label("Room code")).to_be_visible()
        expect(sidebar.get_by_label("Room code")).to_have_value(link.rsplit("=", 1)[1])
        if name:
            sidebar.get_by_label("Display name", exact=False).fill(name)
        sidebar.get_by_role("button", name="Join").click()
        self.settle()
        expect(sidebar.get_by_text(lessons.sentence("rooms", "joined"))).to_be_visible()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A browser test that fails keeps its learners' evidence (`Learner.keep_evidence`) in test-artifacts/,
    taken before the fixtures close their browser contexts, and prints it with the failure (CI shows
    only what pytest prints)."""
    report = yield
    if report.when == "call" and report.failed:
        funcargs = getattr(item, "funcargs", {})
        # Duck-typed: a test module that imports this conftest holds a second copy of the class.
        learners = {name: funcargs.get(name) for name in ("learner", "second_learner")}
        made = getattr(funcargs.get("new_learner"), "made", [])
        learners.update({f"learner{index}": each for index, each in enumerate(made, start=1)})
        test = re.sub(r"[^\w.-]+", "_", item.name)
        for name, each in learners.items():
            keep = getattr(each, "keep_evidence", None)
            if keep is None:
                continue
            try:
                report.sections.append((f"evidence: {name}", keep(f"failed-{test}-{name}")))
            except Exception as error:  # the browser itself may be what failed: say so, keep the report
                report.sections.append(("evidence", f"could not keep {name}'s evidence: {error}"))
    return report


class LearnerMaker:
    """Makes learners, each in a browser context of its own, on any server; closes them all after the
    test, so a failed test's evidence can still be taken from them."""

    def __init__(self, browser: Browser) -> None:
        self._browser = browser
        self.made: list[Learner] = []

    def __call__(self, base_url: str) -> Learner:
        made = Learner(self._browser.new_context(viewport={"width": 1400, "height": 1000}), base_url)
        self.made.append(made)
        return made

    def close(self) -> None:
        for made in self.made:
            made.context.close()


@pytest.fixture
def new_learner(browser: Browser) -> Iterator[LearnerMaker]:
    """`new_learner(url)`: another learner in a fresh browser context, for a test that needs several or
    its own server."""
    maker = LearnerMaker(browser)
    yield maker
    maker.close()


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
