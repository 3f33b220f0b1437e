"""The changes to Streamlit's server go in when serve.py is imported; a guard or a fix that cannot go in
stops the server with one sentence, a speed change steps aside with one warning."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.testing.v1 import AppTest

import serve
from server import changes, runner_handover, uploads
from server import streamlit_private as private
from server.changes import CHANGES, Change, Kind, Refused

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_importing_serve_puts_every_change_in():
    assert getattr(Runtime.handle_backmsg, "rate_limited", False)
    assert getattr(Runtime.handle_backmsg, "type_checked", False)
    assert AppSession._create_scriptrunner is runner_handover._create_scriptrunner_remembering_the_last
    changes.install()  # a later call only answers


def test_the_startup_hook_warms_then_freezes_then_serves(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(serve, "check_runtime", lambda: calls.append("check"))
    monkeypatch.setattr(serve, "warm_caches", lambda: calls.append("warm"))
    monkeypatch.setattr(serve, "freeze_loaded", lambda: calls.append("freeze"))

    async def start_then_serve() -> None:
        async with serve._warm_first(None):
            calls.append("serving")

    asyncio.run(start_then_serve())  # browser tests, whose event loop would refuse it, run last
    assert calls == ["check", "warm", "freeze", "serving"]


@pytest.mark.parametrize("kept_in", ["memory", "elsewhere"])
def test_the_startup_hook_refuses_a_server_whose_uploads_the_guard_did_not_wrap(monkeypatch, kept_in):
    manager = private.MemoryUploadedFileManager("/upload") if kept_in == "memory" else object()

    class Running:
        uploaded_file_mgr = manager

    class RuntimeNow:
        @staticmethod
        def instance() -> Running:
            return Running()

    monkeypatch.setattr(private, "Runtime", RuntimeNow)
    if kept_in == "memory":
        uploads.check_runtime()
    else:
        with pytest.raises(RuntimeError, match="^The lab will not start: .* object, which server/uploads.py"):
            uploads.check_runtime()


def test_the_pinned_streamlit_has_every_name_each_change_needs():
    for change in CHANGES:
        assert private.missing(change.needs) == [], change.name


def test_every_change_says_its_kind_needs_and_exit():
    assert {change.name: change.kind for change in CHANGES} == {
        "widget_types": Kind.GUARD,
        "uploads": Kind.GUARD,
        "message_rate": Kind.GUARD,
        "runner_handover": Kind.FIX,
    }
    for change in CHANGES:
        assert change.needs and change.until and change.what


@pytest.mark.parametrize(
    ("owner", "name", "change"),
    [
        (Runtime, "handle_backmsg", "message_rate"),
        (private.MemoryUploadedFileManager, "add_file", "uploads"),
        (AppSession, "_create_scriptrunner", "runner_handover"),
        (AppSession, "_handle_scriptrunner_event_on_event_loop", "runner_handover"),
    ],
)
def test_a_guard_or_fix_whose_method_is_gone_refuses_in_one_sentence(monkeypatch, owner, name, change):
    monkeypatch.delattr(owner, name)
    sentence = changes._install_all(CHANGES)
    assert sentence is not None
    assert f"'{change}'" in sentence or "'widget_types'" in sentence  # the first of them that lacks it
    assert private.VERSION in sentence and f"{owner.__name__}.{name}" in sentence
    assert "\n" not in sentence and sentence.count(". ") == 0  # one sentence


def test_a_session_manager_without_its_look_up_stops_the_widget_type_guard(monkeypatch):
    monkeypatch.delattr(private.SessionManager, "get_active_session_info")
    sentence = changes._install_all(CHANGES)
    assert sentence is not None and "guard 'widget_types'" in sentence


def test_a_refusal_replaces_nothing(monkeypatch):
    handler = Runtime.handle_backmsg
    monkeypatch.setattr(private, "_CLASSES", {**private._CLASSES, "ScriptRunnerEvent": None})
    put_in: list[str] = []

    def recorder(name: str) -> Callable[[], None]:
        return lambda: put_in.append(name)

    recorded = tuple(Change(c.name, c.kind, c.what, c.needs, c.until, recorder(c.name)) for c in CHANGES)
    assert "fix 'runner_handover'" in (changes._install_all(recorded) or "")
    assert put_in == [] and Runtime.handle_backmsg is handler


def test_install_raises_the_refusal_on_every_call(monkeypatch):
    monkeypatch.setattr(changes, "_installed", lambda: "The lab will not start: a test.")
    for _ in range(2):
        with pytest.raises(Refused, match="^The lab will not start: a test.$"):
            changes.install()


def test_a_speed_change_that_cannot_go_in_warns_once_and_the_rest_go_in(caplog):
    put_in: list[str] = []
    speed = Change(
        "faster", Kind.SPEED, "a test", ("Runtime.no_such_method",), "never", lambda: put_in.append("x")
    )
    guard = Change(
        "guard", Kind.GUARD, "a test", ("Runtime.handle_backmsg",), "never", lambda: put_in.append("g")
    )
    with caplog.at_level(logging.WARNING, logger=changes.__name__):
        assert changes._install_all((speed, guard)) is None
    assert put_in == ["g"]
    [warning] = caplog.records
    assert "'faster'" in warning.getMessage() and "Runtime.no_such_method" in warning.getMessage()


def test_serve_refuses_to_start_in_one_sentence_where_a_fix_cannot_go_in():
    # A Streamlit without the runner event the hand-over fix needs, as a release that renamed it would be.
    script = (
        "import server.streamlit_private as private\n"
        "private._CLASSES['ScriptRunnerEvent'] = None\n"
        "import serve\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 1
    [line] = ran.stderr.strip().splitlines()
    assert line.startswith("The lab will not start: its fix 'runner_handover'")
    assert "ScriptRunnerEvent.SHUTDOWN" in line and private.VERSION in line


def test_home_shows_only_the_refusal_where_a_guard_cannot_go_in(monkeypatch):
    # `streamlit run Home.py` has no serve.py in front of it: the page itself refuses.
    sentence = "The lab will not start: a test."
    monkeypatch.setattr(changes, "_installed", lambda: sentence)
    app = AppTest.from_file(str(REPO_ROOT / "Home.py"), default_timeout=60).run()
    assert [error.value for error in app.error] == [sentence]
    assert not app.exception and len(app.main.children) == 1
