"""A session's callbacks reach Streamlit's event loop in their order, on the loop, a wake-up a batch."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from streamlit.runtime import Runtime, RuntimeConfig
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

from ui import loop_wakeups
from ui.run_slots import RunSlots

WAIT_S = 5


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts how often another thread woke it."""

    def __init__(self) -> None:
        super().__init__()
        self.wakeups = 0
        self.thread_id = 0

    def call_soon_threadsafe(  # type: ignore[override]  # the same call, typed loosely
        self, callback: Callable[..., object], *args: Any, context: contextvars.Context | None = None
    ) -> asyncio.Handle:
        self.wakeups += 1
        return super().call_soon_threadsafe(callback, *args, context=context)


@pytest.fixture
def loop() -> Iterator[CountingLoop]:
    loop = CountingLoop()
    started = threading.Event()

    def serve() -> None:
        loop.thread_id = threading.get_ident()
        loop.call_soon(started.set)
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(WAIT_S)
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(WAIT_S)
    loop.close()


class Session:
    """What the batched hand-off uses of an AppSession: its event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._event_loop = loop

    def hand(self, callback: Callable[[], None]) -> None:
        """Hand `callback` to the loop as the app's AppSession does."""
        loop_wakeups._call_soon_batched(cast(AppSession, self), callback)


def _hold(loop: CountingLoop) -> threading.Event:
    """Keep the loop busy, as under a class clicking at once, until the returned event is set."""
    busy, release = threading.Event(), threading.Event()

    def work() -> None:
        busy.set()
        release.wait(WAIT_S)

    loop.call_soon_threadsafe(work)
    assert busy.wait(WAIT_S)
    return release


def _drained(loop: CountingLoop, session: Session) -> None:
    done = threading.Event()
    session.hand(done.set)
    assert done.wait(WAIT_S)


def test_a_runs_callbacks_wake_the_loop_once_and_run_in_order_on_the_loop(loop: CountingLoop) -> None:
    session = Session(loop)
    release = _hold(loop)
    woken_before = loop.wakeups
    ran: list[tuple[int, int]] = []
    for index in range(200):
        session.hand(lambda index=index: ran.append((index, threading.get_ident())))  # type: ignore[misc]
    # Streamlit's own hand-off wakes the loop once for each of the 200.
    assert loop.wakeups - woken_before == 1
    release.set()
    _drained(loop, session)
    assert [index for index, _ in ran] == list(range(200))
    assert {thread for _, thread in ran} == {loop.thread_id}


def test_a_callback_queued_while_its_batch_runs_gets_a_wake_up_of_its_own(loop: CountingLoop) -> None:
    session = Session(loop)
    ran: list[str] = []
    later = threading.Event()

    def then() -> None:
        ran.append("later")
        later.set()

    def first() -> None:
        ran.append("first")
        session.hand(then)

    session.hand(first)
    assert later.wait(WAIT_S)
    assert ran == ["first", "later"]


def test_a_failing_callback_is_reported_and_the_ones_after_it_still_run(loop: CountingLoop) -> None:
    session = Session(loop)
    reported: list[BaseException] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context["exception"]))
    release = _hold(loop)
    ran: list[int] = []

    def fail() -> None:
        raise ValueError("broken callback")

    session.hand(lambda: ran.append(1))
    session.hand(fail)
    session.hand(lambda: ran.append(2))
    release.set()
    _drained(loop, session)
    assert ran == [1, 2]
    assert [type(err) for err in reported] == [ValueError]


def test_a_closed_loop_drops_the_callback_as_streamlit_does() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    session = Session(loop)
    for _ in range(2):  # the second finds no wake-up pending from the first
        session.hand(lambda: pytest.fail("ran on a closed loop"))


def _runtime(loop: CountingLoop) -> tuple[Any, asyncio.Event]:
    need_send_data = asyncio.Event()
    async_objs = SimpleNamespace(eventloop=loop, need_send_data=need_send_data)
    return SimpleNamespace(_get_async_objs=lambda: async_objs), need_send_data


@pytest.mark.parametrize(("slots_held", "wakeups"), [(1, 0), (0, 1)])
def test_the_loop_at_capacity_says_it_has_data_to_send_without_waking_itself(
    loop: CountingLoop, monkeypatch: pytest.MonkeyPatch, slots_held: int, wakeups: int
) -> None:
    # With its one slot taken the process is at capacity; with it free, the loop wakes itself as
    # Streamlit does, which gets one learner's messages out sooner.
    slots = RunSlots(1)
    monkeypatch.setattr(loop_wakeups, "PROCESS_SLOTS", slots)
    runtime, need_send_data = _runtime(loop)
    seen: list[int] = []
    done = threading.Event()

    def on_the_loop() -> None:
        woken_before = loop.wakeups
        loop_wakeups._enqueued_some_message(runtime)
        seen.append(loop.wakeups - woken_before)
        done.set()

    with contextlib.ExitStack() as held:
        for _ in range(slots_held):
            held.enter_context(slots.held())
        loop.call_soon_threadsafe(on_the_loop)
        assert done.wait(WAIT_S)
    assert seen == [wakeups]
    _drained(loop, Session(loop))
    assert need_send_data.is_set()


def test_a_script_thread_still_wakes_the_loop_to_say_it(loop: CountingLoop) -> None:
    runtime, need_send_data = _runtime(loop)
    woken_before = loop.wakeups
    loop_wakeups._enqueued_some_message(runtime)
    assert loop.wakeups - woken_before == 1
    _drained(loop, Session(loop))
    assert need_send_data.is_set()


def _streamlits_call_soon(self: AppSession, callback: Callable[[], None]) -> None:
    self._event_loop.call_soon_threadsafe(callback)


def _streamlits_enqueued(self: Runtime) -> None:
    async_objs = self._get_async_objs()
    async_objs.eventloop.call_soon_threadsafe(async_objs.need_send_data.set)


@pytest.fixture
def streamlit_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-ins shaped like Streamlit 1.67's two methods, put back as they were afterwards."""
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", _streamlits_call_soon)
    monkeypatch.setattr(Runtime, "_enqueued_some_message", _streamlits_enqueued)


def test_the_pinned_streamlit_has_the_hand_off_this_replaces() -> None:
    # A Streamlit upgrade that changes it fails here, where the app would only warn and go slower.
    assert loop_wakeups.install()
    assert AppSession._call_soon_on_event_loop is loop_wakeups._call_soon_batched
    assert Runtime._enqueued_some_message is loop_wakeups._enqueued_some_message


@pytest.mark.usefixtures("streamlit_methods")
def test_methods_of_the_expected_shape_are_replaced() -> None:
    assert loop_wakeups._replace_methods()
    assert AppSession._call_soon_on_event_loop is loop_wakeups._call_soon_batched
    assert Runtime._enqueued_some_message is loop_wakeups._enqueued_some_message


@pytest.mark.usefixtures("streamlit_methods")
def test_a_changed_streamlit_is_left_alone_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def changed(self: AppSession, callback: Callable[[], None], *, urgent: bool = False) -> None:
        self._event_loop.call_soon_threadsafe(callback)

    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", changed)
    with caplog.at_level(logging.WARNING, logger=loop_wakeups.__name__):
        assert not loop_wakeups._replace_methods()
    assert AppSession._call_soon_on_event_loop is changed
    assert "has changed" in caplog.text


@pytest.mark.usefixtures("streamlit_methods")
def test_the_switch_keeps_streamlits_own_hand_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LAB_BATCH_WAKEUPS", "0")
    with caplog.at_level(logging.WARNING, logger=loop_wakeups.__name__):
        assert not loop_wakeups._replace_methods()
    assert AppSession._call_soon_on_event_loop is _streamlits_call_soon
    assert Runtime._enqueued_some_message is _streamlits_enqueued
    assert "LAB_BATCH_WAKEUPS=0" in caplog.text


@pytest.fixture
def live_runtime(streamlit_methods: None) -> Iterator[Runtime]:
    """A real runtime built, as `streamlit run` builds it, before any of our code can run."""
    assert not Runtime.exists()
    runtime = Runtime(
        RuntimeConfig(
            script_path="Home.py",
            media_file_storage=MemoryMediaFileStorage("/media"),
            uploaded_file_manager=MemoryUploadedFileManager("/_stcore/upload_file"),
        )
    )
    try:
        yield runtime
    finally:
        Runtime._instance = None


def test_the_live_runtimes_sessions_get_the_replacement(
    live_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = cast(Any, live_runtime)._session_mgr
    # Sessions take the manager's callback when they open; one opened before the install holds its own.
    opened_before = SimpleNamespace(_message_enqueued_callback=manager._message_enqueued_callback)
    monkeypatch.setattr(manager, "list_sessions", lambda: [SimpleNamespace(session=opened_before)])
    assert manager._message_enqueued_callback.__func__ is _streamlits_enqueued

    assert loop_wakeups._replace_methods()
    for holder in (manager, opened_before):
        callback = holder._message_enqueued_callback
        assert callback.__func__ is loop_wakeups._enqueued_some_message
        assert callback.__self__ is live_runtime


def test_a_runtime_whose_manager_holds_something_else_is_left_with_a_warning(
    live_runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    manager = cast(Any, live_runtime)._session_mgr
    manager._message_enqueued_callback = other = lambda: None
    with caplog.at_level(logging.WARNING, logger=loop_wakeups.__name__):
        assert loop_wakeups._replace_methods()
    assert manager._message_enqueued_callback is other
    assert "no longer holds" in caplog.text
