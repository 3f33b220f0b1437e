"""A rerun that arrives just as a run ends no longer loses the end of that run's page.

Streamlit 1.67 hands each event of a script run (an element, the run's end) to the server's event loop,
which handles it later, and handles an event only while the runner that sent it is the session's current
one. A rerun that arrives after a run has ended, but before the loop has handled that run's last events
(a fragment's rerun, such as the browser's report of its learner id), is turned down by the finished
runner, and Streamlit makes a new one at once: from then on it ignores every event of the last runner
the loop had not handled yet, the end of the page and the message that the run finished among them. In
CI the page then lacked its last tables; the browser kept showing the run as running.

Here the session remembers the runner it replaced that way, and the loop still handles the events that
runner had queued (they come before anything the new runner sends, in the order they were queued) as if
it were current, except its shutdown, which Streamlit ignores as before: the session belongs to the new
runner. Runners Streamlit stops on purpose (a full rerun under `runner.fastReruns`) are not remembered;
their events stay ignored, as Streamlit means them to be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server import streamlit_private as private

NEEDS = (
    "AppSession._scriptrunner",
    "AppSession._create_scriptrunner(initial_rerun_data)",
    "AppSession._handle_scriptrunner_event_on_event_loop(sender, event, ...)",
    "ScriptRunnerEvent.SHUTDOWN",
)
_LAST_ATTR = "_lab_turned_down_runner"  # on an AppSession: the finished runner a new one replaced

# Streamlit's own methods, once replaced.
_streamlits: dict[str, Callable[..., Any]] = {}


def _create_scriptrunner_remembering_the_last(self: Any, initial_rerun_data: Any) -> None:
    """AppSession._create_scriptrunner, remembering the finished runner it replaces (only a runner that
    turned a rerun down is still current when a new one is made)."""
    last = self._scriptrunner
    _streamlits["create"](self, initial_rerun_data)
    if last is not None:
        vars(self)[_LAST_ATTR] = last


def _handle_the_last_runners_events_too(
    self: Any, sender: Any, event: Any, *args: Any, **kwargs: Any
) -> None:
    """AppSession._handle_scriptrunner_event_on_event_loop, which also handles what the replaced runner
    had queued, but not its shutdown."""
    handle = _streamlits["handle"]
    last = vars(self).get(_LAST_ATTR)
    if sender is None or sender is not last or sender is self._scriptrunner:
        handle(self, sender, event, *args, **kwargs)
        return
    if event == private.ScriptRunnerEvent.SHUTDOWN:
        vars(self).pop(_LAST_ATTR, None)  # its last event: nothing more of it to hand over
        return
    current = self._scriptrunner
    self._scriptrunner = sender
    try:
        handle(self, sender, event, *args, **kwargs)
    finally:
        self._scriptrunner = current


def install() -> None:
    """Replace the two methods once per process (later calls do nothing)."""
    if _streamlits:
        return
    session = private.AppSession
    _streamlits.update(
        create=session._create_scriptrunner, handle=session._handle_scriptrunner_event_on_event_loop
    )
    session._create_scriptrunner = _create_scriptrunner_remembering_the_last
    session._handle_scriptrunner_event_on_event_loop = _handle_the_last_runners_events_too
