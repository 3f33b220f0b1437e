"""A session's callbacks reach Streamlit's event loop in their order, on the loop, a wake-up a batch; the
batch sends the session's messages on its own turn; and a run can wait for the loop to catch up."""

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
from streamlit.runtime.scriptrunner import ScriptRunner
from streamlit.runtime.session_manager import SessionClientDisconnectedError

from ui import loop_wakeups
from ui.run_slots import PROCESS_SLOTS, RunSlots

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
    """What the batched hand-off uses of an AppSession: its event loop, its id and its queue of messages."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._event_loop = loop
        self.id = "session-1"
        self.queued: list[str] = []
        self.flushes_sent = 0

    def flush(self) -> list[str]:
        """Empty the queue, as AppSession.flush_browser_queue does."""
        taken, self.queued = self.queued, []
        return taken

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


def _caught_up(loop: CountingLoop) -> None:
    """Wait until the loop has run every callback queued on it before this call."""
    done = threading.Event()
    loop.call_soon_threadsafe(done.set)
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


def _streamlits_flush(self: AppSession) -> list[Any]:
    return self._browser_queue.flush()


def _streamlits_flushed(self: AppSession) -> None:
    if self._settled is not None and self._browser_queue.is_empty():
        self._settled.set()


def _streamlits_create(self: AppSession, initial_rerun_data: Any) -> None:
    self._scriptrunner = ScriptRunner.__new__(ScriptRunner)  # never called: only its shape is read


@pytest.fixture
def streamlit_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-ins shaped like Streamlit 1.67's four methods, put back as they were afterwards."""
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", _streamlits_call_soon)
    monkeypatch.setattr(AppSession, "flush_browser_queue", _streamlits_flush)
    monkeypatch.setattr(AppSession, "on_flushed_messages_sent", _streamlits_flushed)
    monkeypatch.setattr(AppSession, "_create_scriptrunner", _streamlits_create)
    monkeypatch.setattr(Runtime, "_enqueued_some_message", _streamlits_enqueued)
    monkeypatch.setattr(loop_wakeups, "_streamlits", {})


def test_the_pinned_streamlit_has_the_hand_off_this_replaces() -> None:
    # A Streamlit upgrade that changes it fails here, where the app would only warn and go slower.
    assert loop_wakeups.install()
    assert AppSession._call_soon_on_event_loop is loop_wakeups._call_soon_batched
    assert AppSession.flush_browser_queue is loop_wakeups._flush_for_the_send_loop
    assert AppSession.on_flushed_messages_sent is loop_wakeups._sent_by_the_send_loop
    assert AppSession._create_scriptrunner is loop_wakeups._create_scriptrunner_after_the_last
    assert Runtime._enqueued_some_message is loop_wakeups._enqueued_some_message
    assert PROCESS_SLOTS.before_handing_on is not None  # waited-for runs let the loop catch up


@pytest.mark.usefixtures("streamlit_methods")
def test_methods_of_the_expected_shape_are_replaced() -> None:
    assert loop_wakeups._replace_methods()
    assert AppSession._call_soon_on_event_loop is loop_wakeups._call_soon_batched
    assert AppSession.flush_browser_queue is loop_wakeups._flush_for_the_send_loop
    assert Runtime._enqueued_some_message is loop_wakeups._enqueued_some_message
    assert AppSession._create_scriptrunner is loop_wakeups._create_scriptrunner_after_the_last
    assert loop_wakeups._streamlits == {
        "flush": _streamlits_flush,
        "flushed": _streamlits_flushed,
        "create": _streamlits_create,
    }


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


class SendingRuntime:
    """What sending on the batch's turn uses of Streamlit's runtime: the session's client and a send."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, *, connected: bool = True, broken: bool = False
    ) -> None:
        self.loop = loop
        self.sent: list[tuple[str, int]] = []  # message, thread it was sent on
        self.disconnected: list[tuple[str, object]] = []
        self.client = object()
        self.broken = broken
        info = SimpleNamespace(client=self.client)
        self._session_mgr = SimpleNamespace(get_active_session_info=lambda _id: info if connected else None)

    def _get_async_objs(self) -> SimpleNamespace:
        return SimpleNamespace(eventloop=self.loop)

    def _send_message(self, info: Any, msg: str) -> None:
        if self.broken:
            raise SessionClientDisconnectedError
        self.sent.append((msg, threading.get_ident()))

    def disconnect_session(self, session_id: str, *, client: object) -> None:
        self.disconnected.append((session_id, client))


@pytest.fixture
def sending(loop: CountingLoop, monkeypatch: pytest.MonkeyPatch) -> Callable[..., SendingRuntime]:
    """Make Streamlit's runtime a stand-in (see SendingRuntime), with Streamlit's flush as a Session's."""

    def make(**options: bool) -> SendingRuntime:
        runtime = SendingRuntime(loop, **options)
        monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
        monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: runtime))
        return runtime

    def flushed(session: Session) -> None:
        session.flushes_sent += 1

    monkeypatch.setattr(loop_wakeups, "_streamlits", {"flush": Session.flush, "flushed": flushed})
    return make


def test_a_batch_sends_its_sessions_messages_in_order_on_its_own_turn(
    loop: CountingLoop, sending: Callable[..., SendingRuntime]
) -> None:
    runtime = sending()
    session = Session(loop)
    release = _hold(loop)
    for index in range(3):
        session.hand(lambda index=index: session.queued.append(f"delta {index}"))  # type: ignore[misc]
    seen_next_turn: list[list[str]] = []

    def look_next_turn() -> None:
        loop.call_soon(lambda: seen_next_turn.append([m for m, _ in runtime.sent]))

    session.hand(look_next_turn)
    release.set()
    _drained(loop, session)
    # The look is queued for the turn after the batch's, and the test's own wake-up can arrive first, in
    # the batch itself: wait for that turn too.
    _caught_up(loop)
    # Streamlit's send loop would have sent them three turns later at the earliest, one a turn.
    assert seen_next_turn == [["delta 0", "delta 1", "delta 2"]]
    assert {thread for _, thread in runtime.sent} == {loop.thread_id}
    assert session.queued == [] and session.flushes_sent >= 1


def test_messages_the_send_loop_is_part_way_through_go_first(
    loop: CountingLoop, sending: Callable[..., SendingRuntime]
) -> None:
    runtime = sending()
    session = Session(loop)
    session.queued = ["older"]
    assert loop_wakeups._flush_for_the_send_loop(cast(AppSession, session)) == ["older"]
    session.hand(lambda: session.queued.append("newer"))
    _drained(loop, session)
    assert runtime.sent == [] and session.queued == ["newer"]  # left for Streamlit's send loop
    loop_wakeups._sent_by_the_send_loop(cast(AppSession, session))  # it has sent "older"
    session.hand(lambda: None)
    _drained(loop, session)
    assert [m for m, _ in runtime.sent] == ["newer"]


def test_an_empty_flush_by_the_send_loop_leaves_the_batch_free_to_send(
    loop: CountingLoop, sending: Callable[..., SendingRuntime]
) -> None:
    runtime = sending()
    session = Session(loop)
    assert loop_wakeups._flush_for_the_send_loop(cast(AppSession, session)) == []
    session.hand(lambda: session.queued.append("delta"))
    _drained(loop, session)
    assert [m for m, _ in runtime.sent] == ["delta"]


def test_a_session_without_a_browser_keeps_its_queue(
    loop: CountingLoop, sending: Callable[..., SendingRuntime]
) -> None:
    runtime = sending(connected=False)
    session = Session(loop)
    session.hand(lambda: session.queued.append("delta"))
    _drained(loop, session)
    assert runtime.sent == [] and session.queued == ["delta"]


def test_a_browser_gone_mid_send_disconnects_its_session_as_streamlit_does(
    loop: CountingLoop, sending: Callable[..., SendingRuntime]
) -> None:
    runtime = sending(broken=True)
    session = Session(loop)
    session.hand(lambda: session.queued.extend(["a", "b"]))
    _drained(loop, session)
    assert runtime.disconnected == [("session-1", runtime.client)]


def test_waiting_for_the_loop_ends_once_it_has_run_what_came_before(
    loop: CountingLoop, sending: Callable[..., SendingRuntime]
) -> None:
    sending()
    release = _hold(loop)
    ran: list[str] = []
    loop.call_soon_threadsafe(lambda: ran.append("queued before"))
    assert not loop_wakeups.wait_for_loop(0.05)  # the loop is busy: the wait gives up
    release.set()
    assert loop_wakeups.wait_for_loop(WAIT_S)
    assert ran == ["queued before"]


def test_waiting_for_the_loop_without_a_server_returns_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: False))
    assert loop_wakeups.wait_for_loop(WAIT_S)


@pytest.mark.parametrize(
    ("value", "seconds", "warns"),
    [
        (None, loop_wakeups.CATCH_UP_S, False),
        ("0.25", 0.25, False),
        ("0", 0.0, True),
        ("soon", 0.1, True),
        ("5", 0.1, True),
    ],
)
def test_the_catch_up_setting(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    value: str | None,
    seconds: float,
    warns: bool,
) -> None:
    if value is None:
        monkeypatch.delenv("LAB_LOOP_CATCH_UP_S", raising=False)
    else:
        monkeypatch.setenv("LAB_LOOP_CATCH_UP_S", value)
    with caplog.at_level(logging.WARNING, logger=loop_wakeups.__name__):
        assert loop_wakeups._catch_up_s() == seconds
    assert ("LAB_LOOP_CATCH_UP_S" in caplog.text) == warns
    hook = loop_wakeups._catch_up_after(seconds)
    assert (hook is None) == (seconds == 0)
