"""Drop widget values of the wrong type before Streamlit reads them.

A client can send any value for any widget: text for a number input, a number for a text input,
nan for a whole number.
Streamlit 1.67 turns such a value into an exception in its own deserialiser, before our page
code runs, and the session shows an error on every later run. The browser never sends one, so
we drop each widget value whose type is not the one the widget registered, in front of
Streamlit's message handler, and the widget keeps its last value.

Streamlit has no public hook for this; the widget types live in its session state. The lookup
is isolated here and does nothing (with one warning in the log) if those internals change.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime import Runtime

_LOGGER = logging.getLogger(__name__)
_warned: list[bool] = []


def _registered_types(runtime: Runtime, session_id: str) -> dict[str, str] | None:
    """The value type each widget of the session registered on its last run, or None if unknown."""
    try:
        info = runtime._session_mgr.get_active_session_info(session_id)
        if info is None:
            return None
        widgets = info.session.session_state._new_widget_state.widget_metadata
        return {widget_id: meta.value_type for widget_id, meta in list(widgets.items())}
    except AttributeError:
        if not _warned:
            _warned.append(True)
            _LOGGER.warning("Streamlit's session internals changed: widget values are not type-checked.")
        return None


def drop_mistyped(msg: BackMsg, registered: dict[str, str]) -> int:
    """Remove from a rerun request every widget value whose type differs from the registered one, or
    that is a nan or infinite number; returns how many were removed. Widgets the session never drew
    are left to Streamlit."""
    if msg.WhichOneof("type") != "rerun_script":
        return 0
    states = msg.rerun_script.widget_states.widgets
    keep = [
        state
        for state in states
        if state.id not in registered
        or (state.WhichOneof("value") == registered[state.id] and _finite_numbers(state))
    ]
    dropped = len(states) - len(keep)
    if dropped:
        del states[:]
        states.extend(keep)
    return dropped


def _finite_numbers(state: Any) -> bool:
    """False for a number widget's nan or infinity, which no browser sends and int() cannot take."""
    kind = state.WhichOneof("value")
    if kind == "double_value":
        return math.isfinite(state.double_value)
    if kind == "double_array_value":
        return all(math.isfinite(v) for v in state.double_array_value.data)
    return True


def install() -> None:
    """Wrap Streamlit's message handler once per process (later calls do nothing)."""
    original = Runtime.handle_backmsg
    if getattr(original, "type_checked", False):
        return

    @functools.wraps(original)
    def handle_backmsg(self: Runtime, session_id: str, msg: Any, *, client: Any = None) -> None:
        registered = _registered_types(self, session_id)
        if registered is not None:
            drop_mistyped(msg, registered)
        original(self, session_id, msg, client=client)

    handle_backmsg.type_checked = True  # type: ignore[attr-defined]  # marks the wrapper
    Runtime.handle_backmsg = handle_backmsg  # type: ignore[method-assign]  # see the module docstring
