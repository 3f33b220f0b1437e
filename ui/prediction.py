"""A lesson prediction: asked through the shared lock form, then shown beside what really happened.

The hand-in locks answers, not tools: a prediction never locked before it opens its result ungraded, so
what it gated (a roofline, a memory budget, a pair of experiments) still works for the learner.
"""

from __future__ import annotations

import streamlit as st

from core import lessons, predictions
from core.questions import load_bank
from ui import state
from ui.lock import lock_form


def lesson_prediction(
    prediction_id: str, actual: str, *, scale: bool = False
) -> tuple[str | None, str] | None:
    """Ask a lesson prediction whose true answer is `actual` for the current settings.

    Returns (guess, actual at the time it was locked) once locked; after a hand-in without one, (None,
    actual): the result shows, ungraded, and nothing is stored. Until then draws the form and returns None,
    and the caller keeps the result hidden.
    """
    prediction = load_bank().prediction(prediction_id)
    name = predictions.record_name(prediction_id)
    found = predictions.locked(prediction, state.record(name))
    if found is not None:
        guess, then = found
        verdict = "held" if prediction.holds(guess, then) else "missed"
        trap = prediction.misconception(guess, then)
        # A grade stands on the settings it was locked with; when they change, say so and give today's answer.
        moved = (
            f" That was for the settings you had when you locked it; with the settings now it is "
            f"**{prediction.option_text(actual)}**."
            if actual != then
            else ""
        )
        st.caption(
            f":material/lock: {prediction.label}. You predicted **{prediction.option_text(guess)}**; "
            f"it was **{prediction.option_text(then)}** ({verdict})."
            + (f" The trap: {trap}" if trap else "")
            + moved
        )
        return found
    if state.read_only():
        st.caption(
            lessons.sentence(
                "marked", "not_predicted", label=prediction.label, answer=prediction.option_text(actual)
            )
        )
        return None, actual

    def store(choice: str) -> None:
        record = predictions.lock(prediction, state.record(name), choice=choice, actual=actual)
        if record is not None:
            state.store_record(name, record)

    options = {o.id: o.text for o in prediction.options}
    lock_form(f"predict.{prediction_id}", prediction.prompt, options, store, scale=scale)
    return None
