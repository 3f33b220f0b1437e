"""A value the browser still sends for a widget of the work just replaced is not copied into the new work.

Start over (or a resume code) drops every settings widget's key, so that each widget seeds itself from
the new work. A browser that sends a changed setting in the same rerun, as a learner who clicks a
choice and then Start over before the first click is answered does, must neither crash the page nor
store the old choice in the fresh lab. A real `streamlit run Home.py`, driven over Streamlit's own
protocol by the benchmark's client.
"""

from __future__ import annotations

import asyncio

from core import lessons
from tests.harness.browser import Browser, identify, rerun_here
from tests.harness.load_client import Session, open_root_once
from tests.harness.page_model import PageModel, WidgetInfo

SYMPTOM = "Symptom"


def _widget(model: PageModel, kind: str, label: str) -> WidgetInfo:
    [found] = [w for w in model.widgets.values() if w.kind == kind and w.label == label]
    return found


async def _start_over_with_a_late_choice(port: int) -> tuple[list[str], str, str]:
    """Open Execution stack, then send one rerun that presses Start over and changes the symptom."""
    await open_root_once(port, timeout_s=60)
    session = Session(port=port, marker="bench-s907-work", timeout_s=60)
    try:
        await session.connect("execution-stack")
        await identify(session, Browser())
        model = session.model
        model.set_value(_widget(model, "expander", lessons.sentence("identity", "box_title")).id, True)
        await rerun_here(session)
        model.set_value(
            _widget(model, "checkbox", lessons.sentence("identity", "start_over_confirm")).id, True
        )
        await rerun_here(session)
        symptom = _widget(model, "radio", SYMPTOM)
        shown = str(model.values.get(symptom.id, symptom.pushed_value))
        late = next(option for option in symptom.options if option != shown)
        model.values[symptom.id] = late  # changed in the browser, not yet answered by the server
        start_over = _widget(model, "button", lessons.sentence("identity", "start_over_button")).id
        model.click(start_over)
        msg = model.rerun_message(page_hash=model.current_page)
        # Streamlit runs the callbacks in the order the browser lists the widgets: Start over's first.
        states = sorted(msg.rerun_script.widget_states.widgets, key=lambda state: state.id != start_over)
        del msg.rerun_script.widget_states.widgets[:]
        msg.rerun_script.widget_states.widgets.extend(states)
        exceptions = list((await session._request(msg, 0.0)).exceptions)
        exceptions += (await rerun_here(session)).exceptions  # the run the fresh lab is drawn in
        drawn = [w for w in model.widgets.values() if w.kind == "radio" and w.label == SYMPTOM]
        shown_now = ", ".join(str(model.values.get(w.id, w.pushed_value)) for w in drawn)
        return exceptions, late, shown_now
    finally:
        await session.close()


def test_a_late_choice_from_the_replaced_work_neither_crashes_nor_reaches_the_fresh_lab(server) -> None:
    exceptions, late, shown = asyncio.run(_start_over_with_a_late_choice(server.port))
    assert exceptions == []
    assert shown and shown != late  # the fresh lab shows its own default, not the replaced work's choice
    assert server.log_problems() == 0
