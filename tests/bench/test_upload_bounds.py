"""What a session may keep of its uploads, through the real server (server/uploads.py).

A real `streamlit run Home.py` on a free loopback port; files go up as the browser sends them (HTTP
PUT with the XSRF header), the uploader's value travels in reruns over the protocol client, and what
the server holds is read from its own metrics (which Streamlit computes at most every 5 s, so the
checks wait for a figure rather than read one). The orphan grace, the sweeper's period and
Streamlit's reconnect window are shortened so the test waits seconds, not minutes; the caps are the
shipped ones (4 files, 24 MB a session).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from server.uploads import BYTES_PER_SESSION, FILES_PER_SESSION
from tests.harness.load_client import Session
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer
from tests.harness.upload_client import held_upload_bytes, new_file_id, put_file, uploader_state

MB = 1_000_000
GRACE_S = 3.0
RECONNECT_WINDOW_S = 15
METRICS_AGE_S = 5.0  # how stale Streamlit's upload figure may be
LOG = REPO_ROOT / "data" / "logs" / "healthy.csv"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    env = {
        "LAB_UPLOAD_ORPHAN_S": str(GRACE_S),
        "LAB_UPLOAD_SWEEP_S": "0.5",
        "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(RECONNECT_WINDOW_S),
    }
    log = tmp_path_factory.mktemp("uploads") / "server.log"
    with StreamlitServer(REPO_ROOT / "Home.py", post_script_gc=False, log_path=log, env=env) as running:
        yield running


def _comes_to(
    server: StreamlitServer, held_bytes: int, within_s: float = GRACE_S + METRICS_AGE_S + 5
) -> bool:
    """Whether the server's uploads come to `held_bytes` within `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if held_upload_bytes(server.port) == held_bytes:
            return True
        time.sleep(0.25)
    return held_upload_bytes(server.port) == held_bytes


async def _session(port: int, url_path: str = "") -> Session:
    session = Session(port=port, marker="bench-s1-uploads", timeout_s=120)
    await session.connect(url_path)
    return session


def test_a_session_keeps_four_files_and_24_mb_and_is_told_why_not_more(server: StreamlitServer) -> None:
    async def attack() -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        many, big = await _session(server.port), await _session(server.port)
        try:
            small = [
                await put_file(server.port, many.model.session_id, new_file_id(), b"{}", cookies=many.cookies)
                for _ in range(30)
            ]
            large = [
                await put_file(
                    server.port, big.model.session_id, new_file_id(), b"x" * (10 * MB), cookies=big.cookies
                )
                for _ in range(3)
            ]
            return small, large
        finally:
            await many.close()
            await big.close()

    small, large = asyncio.run(attack())
    # Before: 30 of 30 stored. Now the fifth file is refused, with a sentence of ours.
    assert FILES_PER_SESSION == 4
    assert [status for status, _ in small] == [204] * 4 + [413] * 26
    assert small[4][1] == "You already have 4 files uploaded here; remove one before uploading another."
    # Two 10 MB logs fit in 24 MB; a third does not (30 x 10 MB held 300 MB before).
    assert BYTES_PER_SESSION == 24 * MB
    assert [status for status, _ in large] == [204, 204, 413]
    assert "more than 24 MB" in large[2][1]


def test_a_learners_log_named_by_its_uploader_stays_while_unclaimed_uploads_go(
    server: StreamlitServer,
) -> None:
    log = LOG.read_bytes()
    assert _comes_to(server, 0)  # what earlier tests uploaded has gone

    async def learner() -> tuple[list[str], bool, bool]:
        session = await _session(server.port, "your-run")
        try:
            model = session.model
            source = next(w for w in model.widgets.values() if w.label == "Which log?")
            model.set_value(source.id, source.options[-1])  # "my own log": the uploader appears
            await session.rerun()
            uploader = next(
                w for w in model.unsupported_widgets.values() if w.kind == "unsupported:file_uploader"
            )
            mine, stray = new_file_id(), new_file_id()
            for file_id, data, name in ((mine, log, LOG.name), (stray, b"x" * MB, "stray.bin")):
                status, _ = await put_file(
                    server.port, model.session_id, file_id, data, cookies=session.cookies, name=name
                )
                assert status == 204
            named = uploader_state(uploader.id, [(mine, LOG.name, len(log))])
            result = await session.rerun_with(named)  # the page reads the log
            # Past the grace the stray file goes; the log the uploader names stays, rerun after rerun.
            deadline = time.monotonic() + GRACE_S + METRICS_AGE_S + 5
            only_the_log = False
            while not only_the_log and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                await session.rerun_with(named)
                only_the_log = held_upload_bytes(server.port) == len(log)
            # The learner moves to another page: no rerun names the log any more, so it goes too.
            await session.rerun(page_hash=model.page("").script_hash)
            gone = await asyncio.to_thread(_comes_to, server, 0)
            return list(result.exceptions), only_the_log, gone
        finally:
            await session.close()

    exceptions, only_the_log, gone = asyncio.run(learner())
    assert exceptions == []
    assert only_the_log
    assert gone


def test_the_files_of_a_closed_session_go_after_its_reconnect_window(server: StreamlitServer) -> None:
    # The review's case: 20 sessions with 4 files each, closed. Two files each are named by a rerun
    # (they wait for a reconnect), two are orphans (they go after the grace, connected or not).
    assert _comes_to(server, 0)  # what earlier tests uploaded has gone

    async def sessions() -> None:
        opened = [await _session(server.port) for _ in range(20)]
        for session in opened:
            ids = [new_file_id() for _ in range(4)]
            for file_id in ids:
                status, _ = await put_file(
                    server.port, session.model.session_id, file_id, b"x" * MB, cookies=session.cookies
                )
                assert status == 204
            await session.rerun_with(uploader_state("any-uploader", [(i, "f", MB) for i in ids[:2]]))
        for session in opened:
            await session.close()

    asyncio.run(sessions())
    closed = time.monotonic()
    # The orphans go; the named files are kept while a reconnect could still ask for them ...
    assert _comes_to(server, 40 * MB, within_s=GRACE_S + METRICS_AGE_S + 2)
    assert time.monotonic() - closed < RECONNECT_WINDOW_S
    # ... and go once Streamlit would have forgotten the session (it never shuts one down then).
    assert _comes_to(server, 0, within_s=RECONNECT_WINDOW_S + METRICS_AGE_S + 3)
