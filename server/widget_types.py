"""Drop widget values of the wrong kind before Streamlit reads them.

A client can send any value for any widget: text for a number input, a number for a text input, nan
for a whole number. Streamlit 1.67 turns such a value into an exception in its own deserialiser, before
our page code runs, and the session shows an error on every later run. So each widget value whose kind
is not one the widget takes is dropped in front of Streamlit's message handler (after the message cap),
and the widget keeps its last value; one log line says how many a message lost.

What a widget takes is the kind it registered, with one more: Streamlit registers every number input
as `double_value`, but the browser sends a whole-number input's value as `int_value` (its frontend
picks the field by the input's data type). That value is taken when it lies within the input's bounds.
Nan and infinite numbers are dropped whatever the widget.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from typing import Any

from server import streamlit_private as private

_LOGGER = logging.getLogger(__name__)

NEEDS = (
    "Runtime.handle_backmsg(session_id, msg, client)",
    "Runtime._session_mgr",
    "SessionManager.get_active_session_info",
    "AppSession.session_state",
    "SessionState._new_widget_state",
    "WStates.widget_metadata",
    "WidgetMetadata.value_type",
    "WidgetMetadata.deserializer",
    "NumberInputSerde.data_type",
    "NumberInputSerde.min_value",
    "NumberInputSerde.max_value",
    "NumberInputProto.INT",
)


@dataclass(frozen=True)
class Registered:
    """What one widget takes: the kind it registered, and a whole-number input's bounds (its `int_value`)."""

    value_type: str
    whole_bounds: tuple[float, float] | None = None


def registered_widget(meta: Any) -> Registered:
    """What the widget whose Streamlit metadata is `meta` takes."""
    serde = getattr(meta.deserializer, "__self__", None)
    if isinstance(serde, private.NumberInputSerde) and serde.data_type == private.NumberInputProto.INT:
        return Registered(meta.value_type, (serde.min_value, serde.max_value))
    return Registered(meta.value_type)


def _registered(runtime: Any, session_id: str) -> dict[str, Registered] | None:
    """What each widget of the session registered on its last run; None for a session that is gone."""
    info = runtime._session_mgr.get_active_session_info(session_id)
    if info is None:
        return None
    widgets = info.session.session_state._new_widget_state.widget_metadata
    return {widget_id: registered_widget(meta) for widget_id, meta in list(widgets.items())}


def drop_mistyped(msg: Any, registered: dict[str, Registered]) -> int:
    """Remove from a rerun request every widget value its widget does not take (see the module
    docstring); returns how many were removed. Widgets the session never drew are left to Streamlit."""
    if msg.WhichOneof("type") != "rerun_script":
        return 0
    states = msg.rerun_script.widget_states.widgets
    keep = [state for state in states if state.id not in registered or takes(registered[state.id], state)]
    dropped = len(states) - len(keep)
    if dropped:
        del states[:]
        states.extend(keep)
    return dropped


def takes(widget: Registered, state: Any) -> bool:
    """Whether `widget` takes the value `state` carries."""
    kind = state.WhichOneof("value")
    if kind == "int_value" and widget.whole_bounds is not None:
        low, high = widget.whole_bounds
        return bool(low <= state.int_value <= high)
    if kind != widget.value_type:
        return False
    if kind == "double_value":
        return math.isfinite(state.double_value)
    if kind == "double_array_value":
        return all(math.isfinite(v) for v in state.double_array_value.data)
    return True


def install() -> None:
    """Wrap Streamlit's message handler once per process (later calls do nothing)."""
    original = private.Runtime.handle_backmsg
    if getattr(original, "type_checked", False):
        return

    @functools.wraps(original)
    def handle_backmsg(self: Any, session_id: str, msg: Any, *, client: Any = None) -> None:
        registered = _registered(self, session_id)
        if registered is not None:
            dropped = drop_mistyped(msg, registered)
            if dropped:
                _LOGGER.warning("Dropped %d widget value(s) of a kind the widget does not take.", dropped)
        original(self, session_id, msg, client=client)

    handle_backmsg.type_checked = True  # type: ignore[attr-defined]  # marks the wrapper
    private.Runtime.handle_backmsg = handle_backmsg
