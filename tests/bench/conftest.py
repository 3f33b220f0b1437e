"""Helpers shared by the load client's tests."""

from __future__ import annotations

from streamlit.proto.BackMsg_pb2 import BackMsg


def sent_states(msg: BackMsg) -> dict[str, object]:
    """Widget id -> value, as a rerun_script message carries them (arrays as lists)."""
    states = {}
    for state in msg.rerun_script.widget_states.widgets:
        field = state.WhichOneof("value")
        assert field is not None
        value = getattr(state, field)
        states[state.id] = list(value.data) if field.endswith("array_value") else value
    return states
