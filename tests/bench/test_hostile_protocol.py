"""Values the page never sends, floods and frames no browser sends, over Streamlit's own protocol.

A real `streamlit run serve.py` on a free loopback port, driven by the benchmark's client. Each
page is opened in a fresh session; then, for each kind of hostile value, one rerun carries it
for every widget the page drew (with every button and form pressed) plus a widget id the page
never drew. No run may show an exception, and the progress file the Quiz page then offers
must pass the strict import: nothing outside the schema got into the learner's state. An oversized
message and a text frame each close their connection with one log line. (A flood from many connections
of one address: tests/bench/test_flood_reconnects.py.)
"""

from __future__ import annotations

import asyncio
import math
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from core import lessons
from core.progress_file import restore
from core.questions import load_bank
from core.settings_schema import load_schema
from core.signing import Verdict
from store import LearnerStore
from store.engine import default_url
from store.guards import SIGNING_KEY, GuardStore
from tests.harness.load_client import LOOPBACK, Session, SessionError, menu_paths
from tests.harness.page_model import PageModel, widget_state
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer

# (value field, value): types the widget does not use, options it does not offer, sizes it
# never sends (within Streamlit's 1 MB message limit), numbers no JSON export could hold.
HOSTILE: tuple[tuple[str, Any], ...] = (
    ("string_value", "not-an-option"),
    ("string_value", "x" * 20_000),  # ten times the text cap; every widget at once stays under 1 MB
    ("string_value", "\u202e<b>[link](https://evil.example)</b>"),
    ("int_value", 2**62),
    ("double_value", math.nan),
    ("double_value", 1e308),
    ("bool_value", True),
    ("double_array_value", [-1e300, 1e300, 7.0]),
    ("string_array_value", ["a", "b", "c"]),
    ("trigger_value", True),
)
PROGRESS_BUTTON = lessons.sentence("quiz_report", "download_progress")
EMPTY: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """The served entry point (serve.py, with its middleware), logging to a file the test can check."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    with StreamlitServer(script=REPO_ROOT / "serve.py", post_script_gc=False, log_path=log) as running:
        yield running


class _RecordingModel(PageModel):
    """The benchmark's page model, also noting the file id of the progress download (written on the click)."""

    progress_file_id = ""

    def _on_delta(self, msg: ForwardMsg) -> None:
        button = msg.delta.new_element.download_button
        if msg.delta.new_element.WhichOneof("type") == "download_button" and button.label == PROGRESS_BUTTON:
            self.progress_file_id = button.deferred_file_id
        super()._on_delta(msg)


def _hostile_message(model: PageModel, field: str, value: Any) -> BackMsg:
    msg = BackMsg()
    state = msg.rerun_script
    state.page_script_hash = model.current_page  # the page under attack, not the router (Home)
    ids = [*model.widgets, "$$ID-never-drawn-0123456789abcdef"]
    for widget_id in ids:
        state.widget_states.widgets.append(widget_state(widget_id, field, value))
    return msg


async def _attack(port: int, url_path: str) -> tuple[list[str], bytes]:
    """The exceptions the page's runs showed, and the progress file the Quiz page then hands out."""
    model = _RecordingModel()
    session = Session(port=port, marker="bench-s900-prot", timeout_s=60, model=model)
    exceptions: list[str] = []
    try:
        first = await session.connect(url_path)
        exceptions += first.exceptions
        for field, value in HOSTILE:
            result = await session._request(_hostile_message(model, field, value), 0.0)
            exceptions += [f"{field}={str(value)[:20]}: {e}" for e in result.exceptions]
        if model.progress_file_id == "":
            quiz = model.page("quiz-report")
            exceptions += (await session.rerun(page_hash=quiz.script_hash)).exceptions
        assert model.progress_file_id, f"{url_path}: the Quiz page drew no progress download"
        url = await session.download_url(model.progress_file_id)
        exported = await asyncio.to_thread(_fetch, port, url)
    finally:
        await session.close()
    return exceptions, exported


def _fetch(port: int, url: str) -> bytes:
    with urllib.request.urlopen(f"http://{LOOPBACK}:{port}{url}", timeout=30) as reply:  # noqa: S310 (loopback only)
        return reply.read()


def test_hostile_values_on_every_page_raise_nothing_and_store_nothing_outside_the_schema(server):
    pages = menu_paths(server.port, "bench-s901-prot")
    assert len(pages) >= 8
    key = GuardStore(LearnerStore.open(default_url())).installation_secret(SIGNING_KEY)
    for url_path in pages:
        exceptions, exported = asyncio.run(_attack(server.port, url_path))
        assert exceptions == [], url_path
        # The strict import accepts the export, signed with the key the server made for the store it
        # shares with this test: every stored value is within the schema.
        restored = restore(EMPTY, exported, bank=load_bank(), schema=load_schema(), key=key)
        assert restored.verdict is Verdict.INTACT, url_path
    assert server.log_problems() == 0


def test_a_download_the_page_never_offered_is_refused(server):
    async def ask() -> None:
        session = Session(port=server.port, marker="bench-s902-prot", timeout_s=60)
        try:
            await session.connect("")
            await session.download_url("a-file-id-never-handed-out")
        finally:
            await session.close()

    with pytest.raises(SessionError, match="^download: "):
        asyncio.run(ask())


def _log_lines(log_path: Path, text: str) -> int:
    return sum(text in line for line in log_path.read_text(errors="replace").splitlines())


@pytest.mark.parametrize(
    ("frame", "logged"),
    [
        (
            b"\x00" * 1_500_000,
            "exceeds the limit",
        ),  # over the 1 MB of .streamlit/config.toml: Streamlit's line
        ("not a protobuf", "sent a text frame"),  # server/stream_frames.py
    ],
)
def test_a_frame_the_browser_never_sends_closes_the_connection_with_one_log_line(server, frame, logged):
    async def send() -> int | None:
        session = Session(port=server.port, marker="bench-s940-prot", timeout_s=60)
        await session.connect("")
        assert session._ws is not None
        try:
            await session._ws.send(frame)
            await asyncio.wait_for(session._ws.wait_closed(), 10.0)
        finally:
            await session.close()
        return session._ws.close_code

    before, problems = _log_lines(server.log_path, logged), server.log_problems()
    assert asyncio.run(send()) is not None
    assert _log_lines(server.log_path, logged) == before + 1
    assert server.log_problems() == problems
