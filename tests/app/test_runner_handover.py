"""A rerun that arrives just as a run ends starts a new script runner; the ending run's last messages
still reach the browser, in order, before the new run's (server/runner_handover.py).

This drives a real Streamlit session on a real event loop. The loop is kept busy while a full run
draws a fragment and the rows after it and ends, as a loaded server's loop is; then the browser's rerun
of the fragment comes in. Streamlit alone drops the whole finished run; with the lab's hand-off the
browser gets it, then the fragment's run.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from streamlit import config
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import Runtime, RuntimeConfig
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

from server import runner_handover

WAIT_S = 10
ROWS = 5
SCRIPT = f"""
import streamlit as st

@st.fragment
def identity():
    st.write("identity")

identity()
for row in range({ROWS}):
    st.write(f"row {{row}}")
"""


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A running event loop in a thread of its own, as Streamlit's server has."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(WAIT_S)
    loop.close()


@pytest.fixture
def session(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[AppSession]:
    """A real AppSession of a small app with one fragment, under a runtime that is built but not serving
    (no browser is connected, so the session's messages stay in its queue for the test to read)."""
    runner_handover.install()
    script = tmp_path / "app.py"
    script.write_text(SCRIPT)
    watcher = config.get_option("server.fileWatcherType")
    config.set_option("server.fileWatcherType", "none")
    assert not Runtime.exists()
    uploads = MemoryUploadedFileManager("/_stcore/upload_file")
    media = MemoryMediaFileStorage("/media")
    Runtime(RuntimeConfig(str(script), media_file_storage=media, uploaded_file_manager=uploads))

    async def opened() -> AppSession:
        return AppSession(ScriptData(str(script)), uploads, ScriptCache(), None, {})

    session = asyncio.run_coroutine_threadsafe(opened(), loop).result(WAIT_S)
    try:
        yield session
    finally:
        _on_loop(loop, session.shutdown)
        Runtime._instance = None
        config.set_option("server.fileWatcherType", watcher)


def _on_loop(loop: asyncio.AbstractEventLoop, work: Callable[[], Any]) -> Any:
    async def run() -> Any:
        return work()

    return asyncio.run_coroutine_threadsafe(run(), loop).result(WAIT_S)


def _rerun_as_the_run_ends(session: AppSession) -> None:
    """On the loop, which handles nothing else meanwhile: start a full run, wait for it to end, then ask
    for its fragment's rerun, as the browser's report of its learner id does."""
    session.request_rerun(None)
    runner = session._scriptrunner
    assert runner is not None
    deadline = time.monotonic() + WAIT_S
    while runner._requests._state is not ScriptRequestType.STOP:  # the run ended and asked for nothing more
        assert time.monotonic() < deadline, "the full run did not end"
        time.sleep(0.01)
    [fragment_id] = cast(Any, session._fragment_storage)._fragments
    session.request_rerun(ClientState(fragment_id=fragment_id))


def _what_the_browser_gets(loop: asyncio.AbstractEventLoop, session: AppSession) -> list[str]:
    """The session's messages until the fragment's run has finished, each as its kind (a delta: its text)."""
    got: list[ForwardMsg] = []
    deadline = time.monotonic() + WAIT_S
    while not any(msg.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY for msg in got):
        assert time.monotonic() < deadline, f"the fragment's run did not finish: {got}"
        got += _on_loop(loop, session._browser_queue.flush)
        time.sleep(0.01)
    return [_kind(msg) for msg in got if _kind(msg)]


def _kind(msg: ForwardMsg) -> str:
    kind = msg.WhichOneof("type")
    if kind == "delta":
        return msg.delta.new_element.markdown.body
    if kind == "script_finished":
        return ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
    return "new_session" if kind == "new_session" else ""


# The full run's own "identity" is not among them: it is still queued when the fragment's run starts, and
# Streamlit drops a queued element of a fragment that is about to draw it again.
FULL_RUN = ["new_session", *(f"row {row}" for row in range(ROWS)), "FINISHED_SUCCESSFULLY"]
FRAGMENT_RUN = ["new_session", "identity", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"]


def test_the_finished_run_reaches_the_browser_before_the_fragments_rerun(
    loop: asyncio.AbstractEventLoop, session: AppSession
):
    _on_loop(loop, lambda: _rerun_as_the_run_ends(session))
    assert _what_the_browser_gets(loop, session) == FULL_RUN + FRAGMENT_RUN


def test_streamlit_alone_drops_the_finished_run(
    loop: asyncio.AbstractEventLoop, session: AppSession, monkeypatch: pytest.MonkeyPatch
):
    # Why the hand-off exists, on the pinned Streamlit; this fails once Streamlit keeps the run itself.
    monkeypatch.setattr(AppSession, "_create_scriptrunner", runner_handover._streamlits["create"])
    monkeypatch.setattr(
        AppSession, "_handle_scriptrunner_event_on_event_loop", runner_handover._streamlits["handle"]
    )
    _on_loop(loop, lambda: _rerun_as_the_run_ends(session))
    assert _what_the_browser_gets(loop, session) == FRAGMENT_RUN
