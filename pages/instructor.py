"""Instructor: create a workshop room, watch the class live, reveal answers, export the room."""

import streamlit as st

from store import StoreUnavailable
from ui.instructor import (
    KEY_ENV,
    ROOM,
    SECRET_NAME,
    SIGNED_IN,
    class_view,
    instructor_key,
    room_controls,
    room_header,
    sign_in,
)
from ui.rooms import room_store

st.title("Instructor")
key = instructor_key()
if key is None:
    st.info(
        "This page needs an instructor key, and none is set, so it creates nothing. Put one in "
        f'`.streamlit/secrets.toml` as `{SECRET_NAME} = "..."`, or in the environment variable '
        f"`{KEY_ENV}`, then restart the app. Make one with "
        '`python -c "import secrets; print(secrets.token_urlsafe(24))"`.',
        icon=":material/key:",
    )
    st.stop()
if not st.session_state.get(SIGNED_IN):
    st.caption("Workshop rooms: a live view of your class's answers. Sign in with the instructor key.")
    sign_in(key)
    st.stop()

try:
    room_controls()
    code = st.session_state.get(ROOM)
    room = room_store().room(code) if code else None
except StoreUnavailable:
    st.error("The lab's store cannot be reached right now. Try again in a moment.")
    st.stop()
if room is not None:
    room_header(room)
    class_view(room.code)
