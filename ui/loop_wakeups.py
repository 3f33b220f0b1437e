"""Wake Streamlit's event loop once for a batch of a session's messages, not twice for every element.

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

Streamlit has no hook for this. The two methods are replaced once per process, and only when they
still have the shape this was written against; otherwise nothing changes and one warning says why.
`LAB_BATCH_WAKEUPS=0` keeps Streamlit's own behaviour, so the benchmark can compare the two.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession

from ui.run_slots import PROCESS_SLOTS

_LOGGER = logging.getLogger(__name__)
_SWITCH_ENV = "LAB_BATCH_WAKEUPS"
_BATCH_ATTR = "_lab_wakeup_batch"  # on each AppSession: its callbacks waiting for the loop


class _Batch:
    """One session's callbacks that wait for a single wake-up of the loop, in the order they came."""

    __slots__ = ("_callbacks", "_lock", "_scheduled")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._scheduled = False

    def add(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        """Queue `callback` to run on `loop`; wake the loop only if no wake-up is on its way already.
        RuntimeError if the loop is closed (the callback is dropped)."""
        with self._lock:
            self._callbacks.append(callback)
            if self._scheduled:
                return
            self._scheduled = True
        try:
            loop.call_soon_threadsafe(self._run, loop)
        except RuntimeError:
            with self._lock:
                self._callbacks.clear()
                self._scheduled = False
            raise

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
            # A callback queued from here on needs a wake-up of its own.
            self._scheduled = False
        for callback in callbacks:
            try:
                callback()
            except Exception as err:
                # As asyncio does for a callback of its own: report it, and run the ones after it.
                loop.call_exception_handler({"message": "A session's callback failed", "exception": err})


def _call_soon_batched(self: AppSession, callback: Callable[[], None]) -> None:
    """AppSession._call_soon_on_event_loop, one wake-up a batch; a closed loop drops the callback."""
    state = vars(self)
    batch = state.get(_BATCH_ATTR) or state.setdefault(_BATCH_ATTR, _Batch())
    try:
        batch.add(self._event_loop, callback)
    except RuntimeError:
        if not self._event_loop.is_closed():
            raise
        _LOGGER.debug("Dropped a callback for a closed event loop")


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
    return (
        _has_shape(hand_off, ["self", "callback"], calls="call_soon_threadsafe")
        and _has_shape(say_enqueued, ["self"], calls="call_soon_threadsafe")
        and callable(getattr(Runtime, "_get_async_objs", None))
    )


_install_lock = threading.Lock()
_outcome: list[bool] = []  # process-wide, decided on the first call: the loop belongs to the process


def install() -> bool:
    """Batch the event loop's wake-ups for this process, deciding once (later calls only answer);
    whether they are batched."""
    with _install_lock:
        if not _outcome:
            _outcome.append(_replace_methods())
        return _outcome[0]


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
    AppSession._call_soon_on_event_loop = _call_soon_batched  # type: ignore[method-assign]  # see the docstring
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
