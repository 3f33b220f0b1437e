"""The one "lock one answer" form: nothing selected, one press locks the choice, the caller stores it.

Marked questions, lesson predictions and the Scaling out predictions all ask through it; each caller
decides where the answer is kept and what the page shows once it is locked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from core import lessons
from ui import state


def _flash_key(key: str) -> str:
    return f"{key}.flash"


def _submit(key: str, option_ids: tuple[str, ...], store: Callable[[str], object], reminder: str) -> None:
    choice = st.session_state.get(key)
    # Type first: a list from a client that bypasses the page must not reach `in`.
    if not isinstance(choice, str) or choice not in option_ids:
        st.session_state[_flash_key(key)] = reminder
        return
    st.session_state.pop(_flash_key(key), None)
    store(choice)


def lock_form(
    key: str,
    prompt: str,
    options: Mapping[str, str],
    store: Callable[[str], object],
    *,
    button: str | None = None,
    reminder: str | None = None,
    scale: bool = False,
    note: str | None = None,
) -> None:
    """A form that asks `prompt` over `options` (id to text) and hands the chosen id to `store`.

    `scale` draws a long ordered set of options as a drop-down menu instead of a list of buttons; like the
    list it starts with nothing chosen, so no starting position can sit near the answer and count as a
    guess, and a phone's finger picks one stop, not four (a slider must start somewhere).
    `reminder` is shown when the button is pressed with nothing chosen; `note`, a caption, heads the form.
    The button and the reminder default to a prediction's words.
    """
    button = lessons.sentence("marked", "lock_prediction") if button is None else button
    reminder = lessons.sentence("marked", "pick_prediction") if reminder is None else reminder
    read_only = state.read_only()  # read once: each read takes the session's lock
    with st.form(key=f"{key}.form"):
        if note is not None:
            st.caption(note)
        if scale:
            st.selectbox(
                prompt,
                list(options),
                index=None,
                format_func=options.__getitem__,
                placeholder="Choose one",
                key=key,
                disabled=read_only,
            )
        else:
            st.radio(
                prompt,
                list(options),
                index=None,
                format_func=options.get,
                key=key,
                disabled=read_only,
            )
        st.form_submit_button(
            button,
            on_click=_submit,
            args=(key, tuple(options), store, reminder),
            key=f"{key}.lock",
            disabled=read_only,
        )
    if flash := st.session_state.get(_flash_key(key)):
        st.info(flash)
