"""The workshop benchmark's client parts, without a server: what a browser keeps across reconnects
(cookies, the learner id in localStorage), the page and fragment it reruns, and reading the
instructor's counts. Messages are built by hand as Streamlit 1.67 sends them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.harness.browser import IDENTITY_COOKIE, Browser, identify
from tests.harness.load_client import SessionError, set_cookies
from tests.harness.page_model import PageModel
from tests.harness.workshop import COUNTS_CAPTION
from ui.identity import COOKIE


def _identity(data: dict[str, str | None]) -> bytes:
    msg = ForwardMsg()
    component = msg.delta.new_element.bidi_component
    component.id, component.component_name = "$$ID-identity", "ui.identity.lab_learner_identity"
    component.json = json.dumps(data)
    return msg.SerializeToString()


def _finished() -> bytes:
    msg = ForwardMsg()
    msg.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    return msg.SerializeToString()


@dataclass
class FakeSession:
    """A session whose server reports, on each rerun, the learner id it was last sent (as the app does)."""

    candidate: str
    model: PageModel = field(default_factory=PageModel)
    reruns: int = 0

    def draw(self, known: str | None) -> None:
        self.model.apply(_identity({"known": known, "adopt": None, "candidate": self.candidate}))
        self.model.apply(_finished())

    async def rerun(self, **_: object) -> None:
        self.reruns += 1
        sent = self.model.rerun_message().rerun_script.widget_states.widgets
        (state,) = [s for s in sent if s.id == "$$ID-identity"]
        assert state.WhichOneof("value") == "json_value"
        self.draw(json.loads(state.json_value)["learner_id"])


def _identify(session: FakeSession, browser: Browser) -> str | None:
    asyncio.run(identify(session, browser))  # type: ignore[arg-type]
    return browser.stored_id


def test_a_browser_keeps_its_learner_id_across_sessions_like_local_storage() -> None:
    browser = Browser()
    first = FakeSession(candidate="id-offered-first")
    first.draw(known=None)
    assert _identify(first, browser) == "id-offered-first"
    assert first.reruns == 1  # one report: the browser does not send the same value again
    assert browser.cookies[IDENTITY_COOKIE] == "id-offered-first"  # the component's copy
    # A new session (another replica) offers another id; the browser reports the one it stored.
    second = FakeSession(candidate="id-offered-second")
    second.draw(known=None)
    assert _identify(second, browser) == "id-offered-first"
    assert second.reruns == 1
    # Once the app knows it (from the cookie), nothing is sent.
    third = FakeSession(candidate="id-offered-third")
    third.draw(known="id-offered-first")
    assert _identify(third, browser) == "id-offered-first"
    assert third.reruns == 0


def test_a_browser_with_nothing_stored_keeps_the_id_the_app_knows_from_its_cookie() -> None:
    browser = Browser(cookies={IDENTITY_COOKIE: "id-from-cookie"})
    session = FakeSession(candidate="id-offered")
    session.draw(known="id-from-cookie")
    assert _identify(session, browser) == "id-from-cookie"
    assert session.reruns == 0


def test_the_client_names_the_apps_cookie() -> None:
    assert IDENTITY_COOKIE == COOKIE


def test_a_page_without_the_identity_component_is_an_error() -> None:
    session = FakeSession(candidate="x")
    session.model.apply(_finished())
    with pytest.raises(SessionError, match="identity"):
        asyncio.run(identify(session, Browser()))  # type: ignore[arg-type]


def test_the_page_that_ran_and_the_fragment_to_rerun_come_from_the_server() -> None:
    model = PageModel()
    msg = ForwardMsg()
    msg.new_session.page_script_hash = "main-script"
    model.apply(msg.SerializeToString())
    msg = ForwardMsg()
    msg.navigation.page_script_hash = "instructor-page"
    model.apply(msg.SerializeToString())
    msg = ForwardMsg()
    msg.auto_rerun.interval, msg.auto_rerun.fragment_id = 5.0, "class-view"
    model.apply(msg.SerializeToString())
    assert (model.page_hash, model.current_page, model.auto_rerun_fragment) == (
        "main-script",
        "instructor-page",
        "class-view",
    )
    state = model.rerun_message(page_hash=model.current_page, fragment_id="class-view").rerun_script
    assert (state.page_script_hash, state.fragment_id, state.is_auto_rerun) == (
        "instructor-page",
        "class-view",
        True,
    )
    assert model.rerun_message().rerun_script.fragment_id == ""  # a plain rerun runs the whole page


def test_every_cookie_of_every_set_cookie_header_is_kept() -> None:
    headers = {
        "set-cookie": [
            "_streamlit_xsrf=2|ab|cd|1764; expires=Thu, 31 Dec 2026 00:00:00 GMT; Path=/",
            "LAB_REPLICA=app2; path=/; HttpOnly; Secure",
        ]
    }
    assert set_cookies(headers) == {"_streamlit_xsrf": "2|ab|cd|1764", "LAB_REPLICA": "app2"}
    assert set_cookies({}) == {}


def test_the_instructor_counts_are_read_from_captions_whose_label_has_a_colon() -> None:
    label = "Run A: out of memory in backward"
    match = COUNTS_CAPTION.match(f"{label}: 17 answered, 9 right")
    assert match is not None
    assert (match["label"], match["answered"], match["right"]) == (label, "17", "9")
    assert COUNTS_CAPTION.match("How far each part got") is None
