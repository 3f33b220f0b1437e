"""No page ends its run with `st.stop`: in Streamlit 1.67 a stop throws away the rerun the browser asked
for while the run was going (ui/frame.py). A new browser's report of its learner id is such a rerun,
and on a busy machine it came in while Linear layer cost, waiting for its placements, was stopping:
the tab said "Opening your saved work…" until it was reloaded. Each page here is driven into the state
where it has nothing more to show, and must end that run without asking Streamlit to stop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.runtime.scriptrunner_utils.script_requests import (
    RerunData,
    ScriptRequests,
    ScriptRequestType,
)
from streamlit.testing.v1 import AppTest

from core import lessons
from tests.app.conftest import HOME, headings, open_page
from tests.harness.server import free_port
from ui.instructor import KEY_ENV, ROOM

PAGES = sorted(f"pages/{path.name}" for path in (HOME.parent / "pages").glob("*.py"))
INSTRUCTOR_KEY = "809e718cf8b1f6334eaf218baf72f8d80304e116f36022dac8778fef6d245d99"  # secrets.token_hex(32)


def test_in_streamlit_a_stop_drops_the_rerun_the_browser_asked_for_during_the_run():
    # Why the pages never stop, on the pinned Streamlit: a fragment's rerun (how a lesson's body and
    # the browser's id report ask) waits for the run that is going, and a stop replaces it.
    def requests_after(stop: bool) -> ScriptRequestType:
        requests = ScriptRequests()
        requests.request_rerun(RerunData())
        assert requests.on_scriptrunner_ready().type is ScriptRequestType.RERUN  # the run starts
        assert requests.request_rerun(RerunData(fragment_id="identity"))  # the browser's report
        assert requests.on_scriptrunner_yield() is None  # it does not cut the run short
        if stop:
            requests.request_stop()  # what st.stop() does
        return requests.on_scriptrunner_ready().type  # what runs once this run ends

    assert requests_after(stop=False) is ScriptRequestType.RERUN
    assert requests_after(stop=True) is ScriptRequestType.STOP


@pytest.fixture
def stops(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every stop a script run asks Streamlit for (AppTest runs the scripts in this process)."""
    asked: list[str] = []
    request_stop = ScriptRequests.request_stop

    def recorded(self: ScriptRequests) -> None:
        asked.append("stop")
        request_stop(self)

    monkeypatch.setattr(ScriptRequests, "request_stop", recorded)
    yield asked


@pytest.mark.parametrize("page", PAGES, ids=lambda page: Path(page).stem)
def test_a_first_visit_to_any_page_ends_without_a_stop(stops: list[str], page: str):
    at = open_page(page)
    assert not at.exception
    assert stops == []


def test_linear_layer_cost_waits_for_its_placements_without_a_stop(stops: list[str]):
    at = open_page("pages/linear_layer.py")
    assert not at.exception
    assert lessons.sentence("linear", "locked") in [info.value for info in at.info]
    assert lessons.sentence("linear", "fusion_heading") not in headings(at, 2)  # what it waits to show
    assert stops == []


@pytest.mark.parametrize("state", ["no key", "signed out", "store down"])
def test_the_instructor_page_ends_each_early_state_without_a_stop(
    stops: list[str], monkeypatch: pytest.MonkeyPatch, state: str
):
    monkeypatch.delenv(KEY_ENV, raising=False)
    at = AppTest.from_file(str(HOME), default_timeout=60)
    if state != "no key":
        at.secrets["instructor_key"] = INSTRUCTOR_KEY
    at = at.run().switch_page("pages/instructor.py").run()
    if state == "store down":  # signed in, with a room open, when the store stops answering
        at.text_input(key="instructor.key_typed").input(INSTRUCTOR_KEY)
        next(b for b in at.button if b.label == "Sign in").click()
        at.session_state[ROOM] = "ABCDEF"
        monkeypatch.setenv("LAB_DATABASE_URL", f"postgresql://lab@127.0.0.1:{free_port()}/lab")
        at.run()
    assert not at.exception
    expected = {
        "no key": [info.value for info in at.info if KEY_ENV in info.value],
        "signed out": [b for b in at.button if b.label == "Sign in"],
        "store down": [e for e in at.error if e.value == lessons.sentence("instructor", "store_unavailable")],
    }[state]
    assert expected  # the page says why it shows no more
    assert stops == []


def test_a_weak_signing_key_ends_the_app_s_run_without_a_stop(stops: list[str]):
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.secrets["report_signing_key"] = "workshop2026"
    at.run()
    assert not at.exception and len(at.error) == 1 and not headings(at, 1)
    assert stops == []
