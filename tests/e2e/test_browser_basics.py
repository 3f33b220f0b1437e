"""What only a browser shows: navigation, URLs, isolation between learners, console errors, the theme each
run carries; and the browser helpers' own promises: a settle waits for what the page draws and for the
page to read what it was sent, a submit for its request to leave, a failure keeps its evidence."""

import re
import tomllib
from types import SimpleNamespace
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Route, WebSocket, expect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NewSession_pb2 import CustomThemeConfig

from core import lessons
from core.settings_schema import section
from core.share_links import read_link
from core.stack import load_stack
from tests.e2e.conftest import ARTIFACTS, LOCK_ANSWER, ROOT, pytest_runtest_makereport
from ui.frame import FAVICON_URL

pytestmark = pytest.mark.e2e

# The file of code Streamlit's frontend fetches the first time a page shows a table, not its late copy.
TABLE_CODE = re.compile(r"/static/js/Table\.[^/?]+\.js$")
LATE_S = 3
# Every message the page sends to the server leaves this late: a browser on a machine too busy to send
# a click's request within the 100 ms a settle first allows for it.
SLOW_SENDS = """() => {
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) { setTimeout(() => send.call(this, data), %d); };
}"""
SLOW_SEND_MS = 1500
RIGHT_R1 = "Resource: the step asks for more memory than the device holds"  # Four runs' first question
# Every message the server sends reaches the page's code this late: a tab whose main thread is too busy
# drawing to read a run's messages before the network has carried the run's end.
SLOW_READS = """(() => {
    const Socket = window.WebSocket;
    window.WebSocket = class extends Socket {
        addEventListener(type, listener, ...options) {
            const late = event => setTimeout(() => listener.call(this, event), %d);
            super.addEventListener(type, type === "message" ? late : listener, ...options);
        }
    };
})();"""
SLOW_READ_MS = 800
# The page's next message to the server leaves this late, and one it sent before goes out again at once:
# a request of the page's own (its report of whose work this is) leaving in the instant of a click.
JUMP_IN = """(() => {
    const Socket = window.WebSocket;
    window.WebSocket = class extends Socket {
        send(data) {
            const earlier = window.__labJumpIn;
            if (earlier === undefined) return super.send(data);
            window.__labJumpIn = undefined;
            super.send(earlier);
            setTimeout(() => super.send(data), %d);
        }
    };
})();"""
HELD_SEND_MS = 1500
# Every message after the first listener's (the helpers' own count of messages read) reaches its listener
# this late: a page that has read a run's end but not yet drawn it.
SLOW_DRAWS = """(() => {
    const Socket = window.WebSocket;
    window.WebSocket = class extends Socket {
        addEventListener(type, listener, ...options) {
            const counted = type === "message" && this.__labCounted;
            if (type === "message") this.__labCounted = true;
            const late = event => setTimeout(() => listener.call(this, event), %d);
            super.addEventListener(type, counted ? late : listener, ...options);
        }
    };
})();"""
SLOW_DRAW_MS = 800


def _late(route: Route) -> None:
    """Answer with a module that waits, then hands on everything the real file exports."""
    real = route.request.url.rsplit("/", 1)[1] + "?late"
    route.fulfill(
        content_type="text/javascript",
        body=(
            f"await new Promise(done => setTimeout(done, {LATE_S * 1000}));\n"
            f'export * from "./{real}";\nexport {{ default }} from "./{real}";\n'
        ),
    )


def test_home_loads_and_the_menu_reaches_the_first_lesson_pages(learner):
    page = learner.open()
    expect(page.get_by_role("heading", name=lessons.sentence("home", "title"))).to_be_visible()
    # The favicon goes out as a data: URL, which the browser shows without asking the server.
    assert page.locator("link[rel~=icon]").first.get_attribute("href") == FAVICON_URL
    learner.nav("Four runs")
    assert "four-runs" in page.url
    learner.nav("Execution stack")
    expect(page.get_by_role("heading", name=lessons.sentence("execution_stack", "title"))).to_be_visible()
    assert learner.exceptions() == []
    assert learner.console_errors == []


def test_a_locked_answer_survives_moving_away_and_back(learner):
    page = learner.open("four-runs")
    learner.answer(RIGHT_R1)
    expect(page.get_by_text("Right.", exact=False).first).to_be_visible()
    learner.nav("Execution stack")
    learner.nav("Four runs")
    expect(page.get_by_text("Right.", exact=False).first).to_be_visible()
    expect(page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(3)
    learner.screenshot("four-runs-answered")


def test_a_shared_link_opens_with_its_settings_and_a_bad_one_with_a_note(learner, second_learner):
    page = learner.open("execution-stack?symptom=nan")
    expect(page.get_by_role("radio", name=load_stack().symptom_label("nan"))).to_be_checked()
    bad = second_learner.open("execution-stack?symptom=%3Cb%3Ebold%3C%2Fb%3E")
    [ignored] = read_link(section("stack"), {"symptom": ["<b>bold</b>"]}).notes  # core's note on the value
    expect(bad.get_by_text(ignored, exact=False)).to_be_visible()
    expect(bad.get_by_role("radio", name=load_stack().symptom_label("oom"))).to_be_checked()
    assert second_learner.exceptions() == []
    learner.screenshot("execution-stack-linked")


def test_a_settings_page_adds_one_history_entry_for_its_whole_setup(learner):
    page = learner.open()
    learner.nav("Memory budget")
    # Settings at their defaults stay out of the address bar, so Back leaves the page in one press.
    assert urlparse(page.url).query == ""
    page.go_back()
    learner.settle()
    expect(page.get_by_role("heading", name=lessons.sentence("home", "title"))).to_be_visible()
    learner.nav("Memory budget")
    learner.slide("Layers")
    learner.slide("Batch (B)")
    learner.nav("Four runs")
    entries = page.evaluate("history.length")
    learner.nav("Memory budget")
    # The visit, then the learner's two settings written back at once: one entry, not one a setting.
    assert page.evaluate("history.length") == entries + 2
    assert parse_qs(urlparse(page.url).query) == {"layers": ["20"], "batch": ["5"]}
    assert learner.exceptions() == []


def test_a_deep_link_opens_its_page_without_a_not_found_dialog(learner):
    page = learner.open("linear-layer?n_in=1024")
    expect(page.get_by_role("heading", name=lessons.sentence("linear", "title"))).to_be_visible()
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert learner.console_errors == []


def test_a_failed_browser_test_keeps_what_its_learner_saw(learner):
    # The hook pytest calls after each test, handed a failed report as it would be for a failing test.
    learner.open("memory-budget")
    learner.predict_all()
    item = SimpleNamespace(name="test_it[memory-budget]", funcargs={"learner": learner, "other": object()})
    failed = pytest.TestReport("t", ("t", 0, "t"), {}, "failed", None, "call")
    kept = [ARTIFACTS / f"failed-test_it_memory-budget_-learner.{kind}" for kind in ("png", "txt")]
    for path in kept:
        path.unlink(missing_ok=True)
    hook = pytest_runtest_makereport(item, None)  # type: ignore[arg-type]  # what the hook reads of them
    next(hook)
    with pytest.raises(StopIteration) as returned:
        hook.send(failed)
    assert returned.value.value is failed
    assert kept[0].read_bytes().startswith(b"\x89PNG")
    evidence = kept[1].read_text()
    assert "url: http://127.0.0.1:" in evidence and "/memory-budget" in evidence
    frames = learner.runs.frames
    assert f"frames received: {frames}, read by the page: {frames}" in evidence
    assert "scriptState: notRunning" in evidence and "elementsLoading: 0" in evidence
    assert "tables: ['visible'" in evidence and "boxes: [" in evidence
    assert "\nmain area:\nMemory budget" in evidence  # the main area's text, from its title on
    for path in kept:  # nothing failed: leave no evidence of a failure behind
        path.unlink()


def test_settling_waits_for_the_code_of_an_element_as_well_as_for_the_run(learner):
    # A browser meeting a kind of element for the first time fetches its code and draws a placeholder
    # meanwhile; here the code for tables arrives seconds after the run that sent two has finished.
    learner.page.route(TABLE_CODE, _late)
    learner.open("quiz-report")
    assert learner.page.locator('[data-testid="stTable"]:visible').count() == 2
    assert learner.exceptions() == [] and learner.console_errors == []


def _pick_and_submit(learner) -> None:
    """Pick r1's right answer and press its lock button through `submit`, which waits for the press to
    leave and then settles, and for nothing else."""
    learner.page.get_by_text(RIGHT_R1, exact=True).first.click()
    learner.submit(learner.page.get_by_role("button", name=LOCK_ANSWER).first)


def _assert_locked_at_once(learner) -> None:
    """What the lock changed, counted at once, without a retrying assertion, as the next helper would find
    it: one open question fewer, and its verdict."""
    assert learner.page.get_by_role("button", name=LOCK_ANSWER).count() == 3
    assert learner.page.get_by_text("Right.", exact=False).count() == 1
    assert learner.exceptions() == [] and learner.console_errors == []


def test_a_submit_waits_for_its_request_to_leave_before_it_settles(learner):
    page = learner.open("four-runs")
    page.evaluate(SLOW_SENDS % SLOW_SEND_MS)
    _pick_and_submit(learner)
    # Had the settle started before the request left, it would have found the page idle, the question open.
    _assert_locked_at_once(learner)


def test_a_submit_waits_for_its_own_press_not_a_request_the_page_sent_meanwhile(learner):
    learner.context.add_init_script(JUMP_IN % HELD_SEND_MS)
    requests: list[bytes] = []

    def note_request(payload: str | bytes) -> None:
        if isinstance(payload, bytes) and BackMsg.FromString(payload).WhichOneof("type") == "rerun_script":
            requests.append(payload)

    learner.page.on("websocket", lambda socket: socket.on("framesent", note_request))
    page = learner.open("four-runs")
    page.evaluate("bytes => { window.__labJumpIn = new Uint8Array(bytes); }", list(requests[-1]))
    _pick_and_submit(learner)
    assert len(requests) >= 3  # the page's own requests, the one sent again, and the press
    # Had the submit settled the request that jumped in, the question would still be open.
    _assert_locked_at_once(learner)


def test_a_settle_waits_for_the_page_to_read_what_the_server_sent(learner):
    learner.context.add_init_script(SLOW_READS % SLOW_READ_MS)
    learner.open("four-runs")
    _pick_and_submit(learner)
    # Had the settle gone by the network alone, the page would still show the run before the lock.
    _assert_locked_at_once(learner)
    assert learner.page.evaluate("window.__labFramesRead") == learner.runs.frames > 0


def test_a_lock_waits_for_its_form_to_leave_the_page(learner):
    learner.context.add_init_script(SLOW_DRAWS % SLOW_DRAW_MS)
    learner.open("four-runs")
    learner.answer(RIGHT_R1)
    # The page had read the lock's run before it drew it: a settle alone would have gone by.
    _assert_locked_at_once(learner)


def test_every_run_opens_with_the_configured_theme(learner):
    # Streamlit fills each run's opening message with the theme from .streamlit/config.toml.
    themes: list[CustomThemeConfig] = []

    def note_theme(payload: str | bytes) -> None:
        if isinstance(payload, bytes) and (message := ForwardMsg.FromString(payload)).HasField("new_session"):
            themes.append(message.new_session.custom_theme)

    def watch(socket: WebSocket) -> None:
        socket.on("framereceived", note_theme)

    learner.page.on("websocket", watch)
    learner.open("four-runs")
    learner.answer(RIGHT_R1)
    configured = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    assert len(themes) >= 3  # the page, the learner check, the answer's own run
    assert all(theme == themes[0] for theme in themes)
    assert themes[0].primary_color == configured["primaryColor"]
    assert themes[0].base == CustomThemeConfig.BaseTheme.Value(configured["base"].upper())
