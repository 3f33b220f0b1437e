"""Wake Streamlit's event loop once for a batch of a session's messages, not twice for every element;
send them on that wake-up; and keep the scripts from running ahead of the loop.

Streamlit 1.67 hands each element a script draws to the server's event loop with
`call_soon_threadsafe`, and the loop, on taking it, calls `call_soon_threadsafe` again to say there
is something to send. Each call writes a byte to the loop's wake-up socket and passes the interpreter
lock between threads. A lesson page sends 30 to 90 elements a run, and in a profile of a class
clicking at once these hand-offs were a quarter of the server's samples (bench/README.md).

Here a session's callbacks wait in one list while a wake-up is on its way, and the loop runs them in
the order they came, as Streamlit would have, a wake-up for the lot. When every script slot is taken
(ui/run_slots.py: a class clicking at once) the loop also says "something to send" directly instead of
waking itself; otherwise it wakes itself as Streamlit does, which measured about 4 ms sooner in the
tab for one learner on an idle server (bench/README.md, seventh round).

Streamlit hands the runtime's "something to send" method, bound, to its session manager when the
runtime is built, which is before any of our code runs; so the install also points the live runtime's
manager, and any session already open, at the replacement.

A session's queued callbacks also close a gap in Streamlit. A rerun that arrives just as a run ends
(a fragment's, such as the browser's report of its learner id) is turned down by the finished runner,
and Streamlit starts a new one; from then on it drops every event of the last runner that the loop had
not handled yet: the end of the page and the message that the run finished. In CI the page then
lacked its last tables. Here the new runner is made only after the loop has handled what the last one
queued, in the order it came.

Streamlit has no hook for any of this. Its five methods are replaced once per process, and only when
they still have the shape this was written against; otherwise nothing changes and one warning says why.
`LAB_BATCH_WAKEUPS=0` keeps Streamlit's own behaviour, so the benchmark can compare the two.

The loop also has to keep up. It runs callbacks in turns, each turn running all that were waiting when
it began, and Streamlit's send loop writes a session's messages to its browser three turns after it is
told there are some, then one message a turn. Under a class clicking at once the scripts, which share
the interpreter with the loop, queued callbacks faster than the loop ran them: its turns grew to half a
second, and nobody's answer went out until the burst was over (bench/README.md, seventeenth round).
So, two changes, which alone helped little or not measurably, and together did:

- the batch that puts a session's messages in its queue sends them on the same turn, as Streamlit's
  send loop would have (unless that loop is part-way through sending the session's earlier ones, which
  must go first; it then sends these too);
- a run that others wait for hands its slot on (ui/run_slots.py) only once the loop has run every
  callback queued before it finished, or after `LAB_LOOP_CATCH_UP_S` (0.1 s; 0 turns this off), so
  the scripts never get far ahead of the loop.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.session_manager import SessionClientDisconnectedError

from ui.decided_once import DecidedOnce
from ui.run_slots import PROCESS_SLOTS

_LOGGER = logging.getLogger(__name__)
_SWITCH_ENV = "LAB_BATCH_WAKEUPS"
_BATCH_ATTR = "_lab_wakeup_batch"  # on each AppSession: its callbacks waiting for the loop
_SENDING_ATTR = "_lab_send_loop_sending"  # on an AppSession: Streamlit's send loop is part-way through
_CATCH_UP_ENV = "LAB_LOOP_CATCH_UP_S"
# The longest a run waits for the loop before handing its slot on: about what the loop needs for a
# few dozen sessions' callbacks under load, and short enough that a stalled loop costs little.
CATCH_UP_S = 0.1


class _Batch:
    """One session's callbacks that wait for a single wake-up of the loop, in the order they came."""

    __slots__ = ("_callbacks", "_lock", "_scheduled")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._scheduled = False

    def add(self, session: AppSession, callback: Callable[[], None]) -> None:
        """Queue `callback` to run on the session's loop; wake the loop only if no wake-up is on its way
        already. RuntimeError if the loop is closed (the callback is dropped)."""
        with self._lock:
            self._callbacks.append(callback)
            if self._scheduled:
                return
            self._scheduled = True
        try:
            session._event_loop.call_soon_threadsafe(self.run, session)
        except RuntimeError:
            with self._lock:
                self._callbacks.clear()
                self._scheduled = False
            raise

    def run(self, session: AppSession) -> None:
        """Run the callbacks waiting now, in order, then send what they queued; on the session's loop."""
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
            # A callback queued from here on needs a wake-up of its own.
            self._scheduled = False
        for callback in callbacks:
            try:
                callback()
            except Exception as err:
                # As asyncio does for a callback of its own: report it, and run the ones after it.
                loop = session._event_loop
                loop.call_exception_handler({"message": "A session's callback failed", "exception": err})
        _send_queued(session)


def _call_soon_batched(self: AppSession, callback: Callable[[], None]) -> None:
    """AppSession._call_soon_on_event_loop, one wake-up a batch; a closed loop drops the callback."""
    state = vars(self)
    batch = state.get(_BATCH_ATTR) or state.setdefault(_BATCH_ATTR, _Batch())
    try:
        batch.add(self, callback)
    except RuntimeError:
        if not self._event_loop.is_closed():
            raise
        _LOGGER.debug("Dropped a callback for a closed event loop")


def _send_queued(session: AppSession) -> None:
    """Send what the session has queued to its browser now, as Streamlit's send loop would on a later turn,
    unless that loop is part-way through the session's earlier messages (it then sends these after)."""
    if vars(session).get(_SENDING_ATTR) or not Runtime.exists() or not _streamlits:
        return
    runtime = Runtime.instance()
    manager = getattr(runtime, "_session_mgr", None)  # absent on AppTest's stand-in runtime
    info = manager.get_active_session_info(session.id) if manager is not None else None
    if info is None:  # no browser connected: Streamlit sends the queue when one is
        return
    for msg in _streamlits["flush"](session):
        try:
            runtime._send_message(info, msg)
        except SessionClientDisconnectedError:
            runtime.disconnect_session(session.id, client=info.client)
            break
    _streamlits["flushed"](session)


def _create_scriptrunner_after_the_last(self: AppSession, initial_rerun_data: RerunData) -> None:
    """AppSession._create_scriptrunner, which first handles what the session's last runner still has
    queued when that runner turned the rerun down (its run had just ended)."""
    if self._scriptrunner is not None and _on_the_loop(self._event_loop):
        batch = vars(self).get(_BATCH_ATTR)
        if batch is not None:
            batch.run(self)  # the last runner is still the current one: its events count
    _streamlits["create"](self, initial_rerun_data)


def _flush_for_the_send_loop(self: AppSession) -> list[ForwardMsg]:
    """AppSession.flush_browser_queue, which only Streamlit's send loop calls: it sends what this returns
    one message a turn, so the session is marked as being sent to until it has."""
    messages = _streamlits["flush"](self)
    if messages:
        vars(self)[_SENDING_ATTR] = True
    return messages


def _sent_by_the_send_loop(self: AppSession) -> None:
    """AppSession.on_flushed_messages_sent, called once the send loop has sent what it flushed."""
    vars(self).pop(_SENDING_ATTR, None)
    _streamlits["flushed"](self)


def _on_the_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop runs in this thread: a script thread
        return False


def _enqueued_some_message(self: Runtime) -> None:
    """Runtime._enqueued_some_message, without a wake-up when the loop itself is the caller and the
    process is at capacity."""
    async_objs = self._get_async_objs()
    if PROCESS_SLOTS.all_taken() and _on_the_loop(async_objs.eventloop):
        async_objs.need_send_data.set()
    else:
        async_objs.eventloop.call_soon_threadsafe(async_objs.need_send_data.set)


def _has_shape(function: Any, parameters: list[str], *, calls: str) -> bool:
    """Whether `function` takes exactly `parameters` and calls `calls`: the code this module replaces."""
    if not inspect.isfunction(function):
        return False
    return list(inspect.signature(function).parameters) == parameters and calls in function.__code__.co_names


def _streamlit_has_shape() -> bool:
    hand_off = getattr(AppSession, "_call_soon_on_event_loop", None)
    say_enqueued = getattr(Runtime, "_enqueued_some_message", None)
    send = getattr(Runtime, "_send_message", None)
    create = getattr(AppSession, "_create_scriptrunner", None)
    return (
        _has_shape(hand_off, ["self", "callback"], calls="call_soon_threadsafe")
        and _has_shape(create, ["self", "initial_rerun_data"], calls="ScriptRunner")
        and _has_shape(say_enqueued, ["self"], calls="call_soon_threadsafe")
        and _has_shape(AppSession.flush_browser_queue, ["self"], calls="_browser_queue")
        and _has_shape(AppSession.on_flushed_messages_sent, ["self"], calls="_settled")
        and _has_shape(send, ["self", "session_info", "msg"], calls="write_forward_msg")
        and callable(getattr(Runtime, "_get_async_objs", None))
        and callable(getattr(Runtime, "disconnect_session", None))
    )


# Streamlit's own flush_browser_queue, on_flushed_messages_sent and _create_scriptrunner, once replaced.
_streamlits: dict[str, Callable[..., Any]] = {}


def install() -> bool:
    """Batch the event loop's wake-ups for this process and have waited-for runs let the loop catch up,
    deciding once (later calls only answer: the loop belongs to the process); whether the wake-ups are
    batched."""
    return _installed()


def _install() -> bool:
    batched = _replace_methods()
    PROCESS_SLOTS.before_handing_on = _catch_up_after(_catch_up_s())
    return batched


def _catch_up_s() -> float:
    """How long a waited-for run lets the loop catch up (`LAB_LOOP_CATCH_UP_S`); 0 when it does not."""
    raw = os.environ.get(_CATCH_UP_ENV, str(CATCH_UP_S))
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 1:
        _LOGGER.warning("%s=%r is not 0 to 1 seconds; using %s.", _CATCH_UP_ENV, raw, CATCH_UP_S)
        return CATCH_UP_S
    if seconds == 0:
        _LOGGER.warning("%s=0: runs hand their slots on without waiting for the event loop.", _CATCH_UP_ENV)
    return seconds


def _catch_up_after(timeout_s: float) -> Callable[[], object] | None:
    """What a run does before handing its slot on: wait up to `timeout_s` for the loop (None for 0)."""
    return functools.partial(wait_for_loop, timeout_s) if timeout_s else None


def wait_for_loop(timeout_s: float) -> bool:
    """Wait until Streamlit's event loop has run every callback handed to it before now, at most
    `timeout_s`; whether it has. True at once without a running Streamlit, or on the loop itself."""
    if not Runtime.exists():
        return True
    try:
        loop = Runtime.instance()._get_async_objs().eventloop
    except (AttributeError, RuntimeError):  # AppTest's stand-in, or a runtime not started yet
        return True
    if _on_the_loop(loop):
        return True
    reached = threading.Event()
    try:
        # Behind every callback already queued, a session's batch among them: the loop runs them in order.
        loop.call_soon_threadsafe(reached.set)
    except RuntimeError:  # the loop is closed: nothing left to wait for
        return True
    return reached.wait(timeout_s)


def _replace_methods() -> bool:
    if os.environ.get(_SWITCH_ENV) == "0":
        _LOGGER.warning("%s=0: the event loop wakes for every element a script sends.", _SWITCH_ENV)
        return False
    if not _streamlit_has_shape():
        _LOGGER.warning(
            "Streamlit's event-loop hand-off has changed; every element wakes the loop (ui/loop_wakeups.py)."
        )
        return False
    streamlits_enqueued = Runtime._enqueued_some_message
    _streamlits.update(
        flush=AppSession.flush_browser_queue,
        flushed=AppSession.on_flushed_messages_sent,
        create=AppSession._create_scriptrunner,
    )
    AppSession._call_soon_on_event_loop = _call_soon_batched  # type: ignore[method-assign]  # see the docstring
    AppSession.flush_browser_queue = _flush_for_the_send_loop  # type: ignore[method-assign]
    AppSession.on_flushed_messages_sent = _sent_by_the_send_loop  # type: ignore[method-assign]
    AppSession._create_scriptrunner = _create_scriptrunner_after_the_last  # type: ignore[method-assign]
    Runtime._enqueued_some_message = _enqueued_some_message  # type: ignore[method-assign]
    if Runtime.exists():
        _repoint_live_runtime(Runtime.instance(), streamlits_enqueued)
    return True


def _repoint_live_runtime(runtime: Runtime, streamlits_enqueued: Callable[[Runtime], None]) -> None:
    """Give the runtime's session manager, and each session already open, the replaced method instead of
    the bound one they were handed when the runtime was built."""
    manager = getattr(runtime, "_session_mgr", None)  # absent on AppTest's stand-in runtime
    if manager is None:
        return
    holders = [manager, *(info.session for info in manager.list_sessions())]
    repointed = 0
    for holder in holders:
        callback = getattr(holder, "_message_enqueued_callback", None)
        bound_to = (getattr(callback, "__func__", None), getattr(callback, "__self__", None))
        if bound_to == (streamlits_enqueued, runtime):
            holder._message_enqueued_callback = runtime._enqueued_some_message
            repointed += 1
    if not repointed:
        _LOGGER.warning(
            "Streamlit's session manager no longer holds the runtime's wake-up; "
            "sessions may wake the loop for every element (ui/loop_wakeups.py)."
        )


_installed = DecidedOnce(_install)
