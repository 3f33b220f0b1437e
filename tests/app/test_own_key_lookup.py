"""A widget looks up its own key in Session State alone (ui/own_key_lookup.py): the same answers as the
whole `filtered_state` it replaces, for every key a session can hold, and the widgets that ask still act
on them."""

from __future__ import annotations

import importlib
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.runtime import state as streamlit_state
from streamlit.runtime.state.common import WidgetMetadata
from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX, SessionState
from streamlit.testing.v1 import AppTest

from ui import own_key_lookup
from ui.decided_once import DecidedOnce

USER_KEYS = ("a", "b", "marked.c2.choice", "linear.n_in")
VALUES = st.one_of(
    st.none(), st.integers(-3, 3), st.text(max_size=3), st.tuples(st.integers(), st.integers())
)

# What a session goes through: its script sets keys and deletes them, draws widgets with and without a key,
# the browser sends widget values, and a new run moves everything into the old state.
STEPS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(USER_KEYS), VALUES),
    st.tuples(st.just("delete"), st.sampled_from(USER_KEYS), st.none()),
    st.tuples(st.just("keyed_widget"), st.sampled_from(USER_KEYS), st.one_of(st.none(), VALUES)),
    st.tuples(st.just("keyless_widget"), st.sampled_from(("x", "y")), st.one_of(st.none(), VALUES)),
    st.tuples(st.just("new_run"), st.none(), st.none()),
)


def _widget_id(name: str, user_key: str | None) -> str:
    return f"$$ID-{name}-{user_key}"  # the shape Streamlit gives an element's id


def _metadata(widget_id: str) -> WidgetMetadata[Any]:
    return WidgetMetadata(
        id=widget_id, deserializer=lambda v: v, serializer=lambda v: v, value_type="json_value"
    )


def _session_after(steps: list[tuple[str, Any, Any]]) -> SessionState:
    session = SessionState()
    for action, name, value in steps:
        if action == "set":
            session[name] = value
        elif action == "delete" and name in session:
            del session[name]
        elif action in ("keyed_widget", "keyless_widget"):
            user_key = name if action == "keyed_widget" else None
            widget_id = _widget_id(name, user_key)
            session.register_widget(_metadata(widget_id), user_key)
            if value is not None:
                session._new_widget_state.set_from_value(widget_id, value)
        elif action == "new_run":
            session._compact_state()
    return session


@settings(max_examples=300, deadline=None)
@given(st.lists(STEPS, max_size=12))
def test_a_key_is_found_with_the_value_filtered_state_gives_it(steps: list[tuple[str, Any, Any]]) -> None:
    session = SafeSessionState(_session_after(steps), lambda: None)
    whole = session.filtered_state
    alone = own_key_lookup.OwnKeyState(session)
    asked = [
        *USER_KEYS,
        "missing",
        f"{STREAMLIT_INTERNAL_KEY_PREFIX}_x",
        *(_widget_id(n, k) for n in (*USER_KEYS, "x", "y") for k in (n, None)),
    ]
    for key in asked:
        assert (key in alone) == (key in whole), key
        if key in whole:
            assert alone[key] == whole[key], key
    assert dict(alone) == whole  # listing it gives the whole copy


def test_a_lookup_does_not_yield_to_a_waiting_rerun() -> None:
    # SafeSessionState's own `in` calls back to let a rerun interrupt the script; filtered_state never did.
    yields: list[bool] = []
    session = SafeSessionState(_session_after([("set", "a", None)]), lambda: yields.append(True))
    alone = own_key_lookup.OwnKeyState(session)
    assert "a" in alone and alone["a"] is None
    assert not yields


def test_the_pinned_streamlit_has_the_lookups_this_replaces() -> None:
    # A Streamlit upgrade that changes them fails here, where the app would only warn and go slower.
    assert own_key_lookup.install()
    for name in own_key_lookup.WIDGET_READERS:
        assert importlib.import_module(name).get_session_state is own_key_lookup.widget_session_state


WIDGETS_THAT_ASK = """
import streamlit as st

if "seeded" not in st.session_state:
    st.session_state.seeded = True
    st.session_state.pick = None
    st.session_state.box = None
    st.session_state.count = None
    st.session_state.note = None
    st.session_state.span = (2, 5)
st.radio("Pick", ["a", "b"], key="pick")
st.selectbox("Box", ["a", "b"], key="box")
st.number_input("Count", 0, 9, key="count")
st.text_input("Note", key="note")
st.slider("Span", 0, 9, key="span")
st.slider("Level", 0, 9, key="level")
"""


def test_widgets_still_read_a_key_set_to_none_or_to_a_range() -> None:
    assert own_key_lookup.install()
    at = AppTest.from_string(WIDGETS_THAT_ASK).run()
    assert not at.exception
    assert at.radio(key="pick").value is None  # set to None: nothing picked, not the first option
    assert at.selectbox(key="box").value is None
    assert at.number_input(key="count").value is None
    assert at.text_input(key="note").value is None
    assert at.slider(key="span").value == (2, 5)  # a range, because its key holds one
    assert at.slider(key="level").value == 0
    at.radio(key="pick").set_value("b").run()
    assert at.radio(key="pick").value == "b"
    assert at.slider(key="span").value == (2, 5)


def test_a_changed_streamlit_is_left_alone_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    modules = [importlib.import_module(name) for name in own_key_lookup.WIDGET_READERS]
    for module in modules:
        monkeypatch.setattr(module, "get_session_state", streamlit_state.get_session_state)
    # As if the radio had stopped reading filtered_state: its public method never did.
    changed = {**own_key_lookup.WIDGET_READERS, "streamlit.elements.widgets.radio": ("RadioMixin.radio",)}
    monkeypatch.setattr(own_key_lookup, "WIDGET_READERS", changed)
    monkeypatch.setattr(own_key_lookup, "_installed", DecidedOnce(own_key_lookup._replace))
    with caplog.at_level(logging.WARNING, logger=own_key_lookup.__name__):
        assert not own_key_lookup.install()
    assert all(module.get_session_state is streamlit_state.get_session_state for module in modules)
    assert "copies the whole state again" in caplog.text
    assert not own_key_lookup.install()  # decided once
    assert len(caplog.records) == 1
