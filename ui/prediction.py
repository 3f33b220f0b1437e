"""The one "lock a prediction" form, used by the lesson pages and the Scaling out lab.

A prediction is asked with nothing selected, locked by one press, and from then on the page shows
what it was hiding. The caller decides where the guess is stored; this module only draws the form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from core import predictions
from core.questions import load_bank
from ui import state


def _flash_key(key: str) -> str:
    return f"{key}.flash"


def _submit(key: str, option_ids: tuple[str, ...], store: Callable[[str], None]) -> None:
    choice = st.session_state.get(key)
    # Type first: a list from a client that bypasses the page must not reach `in`.
    if not isinstance(choice, str) or choice not in option_ids:
        st.session_state[_flash_key(key)] = "Pick one of the options first, then lock it."
        return
    st.session_state.pop(_flash_key(key), None)
    store(choice)


def prediction_form(
    key: str,
    prompt: str,
    options: Mapping[str, str],
    store: Callable[[str], None],
    *,
    scale: bool = False,
) -> None:
    """A form that asks `prompt` over `options` (id to text) and hands the chosen id to `store`.

    `scale` draws an ordered set of options as a slider to drag instead of a list to pick from.
    """
    with st.form(key=f"{key}.form"):
        if scale:
            ids = list(options)
            st.select_slider(
                prompt,
                ids,
                value=ids[len(ids) // 2],
                format_func=options.get,
                key=key,
                disabled=state.read_only(),
            )
        else:
            st.radio(
                prompt,
                list(options),
                index=None,
                format_func=options.get,
                key=key,
                disabled=state.read_only(),
            )
        st.form_submit_button(
            "Lock prediction",
            on_click=_submit,
            args=(key, tuple(options), store),
            key=f"{key}.lock",
            disabled=state.read_only(),
        )
    if flash := st.session_state.get(_flash_key(key)):
        st.info(flash)


def lesson_prediction(prediction_id: str, actual: str, *, scale: bool = False) -> tuple[str, str] | None:
    """Ask a lesson prediction whose true answer is `actual` for the current settings.

    Returns (guess, actual at the time it was locked) once locked; until then draws the form and
    returns None, and the caller keeps the result hidden.
    """
    prediction = load_bank().prediction(prediction_id)
    name = predictions.record_name(prediction_id)
    found = predictions.locked(prediction, state.record(name))
    if found is not None:
        guess, then = found
        verdict = "held" if prediction.holds(guess, then) else "missed"
        st.caption(
            f":material/lock: {prediction.label}. You predicted **{prediction.option_text(guess)}**; "
            f"it was **{prediction.option_text(then)}** ({verdict})."
        )
        return found

    def store(choice: str) -> None:
        record = predictions.lock(prediction, state.record(name), choice=choice, actual=actual)
        if record is not None:
            state.store_record(name, record)

    options = {o.id: o.text for o in prediction.options}
    prediction_form(f"predict.{prediction_id}", prediction.prompt, options, store, scale=scale)
    return None
