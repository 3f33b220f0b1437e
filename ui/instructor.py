"""The instructor key: where it is configured, how a typed one is checked, and the sign-in form.

The key comes from `st.secrets["instructor_key"]` or $LAB_INSTRUCTOR_KEY and is compared in
constant time. A session that typed it keeps only a flag saying so, never the key.
"""

from __future__ import annotations

import hmac
import os

import streamlit as st

from core import lessons

SECRET_NAME = "instructor_key"
KEY_ENV = "LAB_INSTRUCTOR_KEY"
SIGNED_IN = "instructor.signed_in"
ROOM = "instructor.room"  # the code of the room this instructor session is looking at


def instructor_key() -> str | None:
    """The configured instructor key (secrets first, then the environment), or None."""
    try:
        secret = st.secrets.get(SECRET_NAME)
    except FileNotFoundError:  # no secrets file at all
        secret = None
    key = secret if isinstance(secret, str) and secret else os.environ.get(KEY_ENV)
    return key or None


def key_matches(typed: str, key: str) -> bool:
    """Whether the typed key is the configured one, in time that does not depend on where they differ."""
    return hmac.compare_digest(typed.encode("utf-8"), key.encode("utf-8"))


def sign_in(key: str) -> None:
    """A form for the key; on a match the session is marked as the instructor's."""
    with st.form("instructor.sign_in"):
        typed = st.text_input("Instructor key", type="password", key="instructor.key_typed")
        if st.form_submit_button("Sign in"):
            if key_matches(typed, key):
                st.session_state[SIGNED_IN] = True
                st.session_state.pop("instructor.key_typed", None)
                st.rerun()
            st.error(lessons.sentence("instructor", "wrong_key"))
