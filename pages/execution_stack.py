"""The execution stack: five layers between your model and the GPU, and symptoms traced to them."""

import streamlit as st

from core import lessons
from core.settings_schema import section
from core.stack import load_stack
from ui.frame import lesson_page, lesson_section
from ui.links import share_box
from ui.marked import marked_questions
from ui.nav import next_link
from ui.prose import TITLE, heading, prose
from ui.settings import persistent


def draw() -> None:
    """The page's body: the layers, the check question and the symptom tracer."""
    stack = load_stack()

    prose(
        heading(lessons.sentence("execution_stack", "title"), TITLE), lessons.text("execution_stack", "intro")
    )

    # One card of five paragraphs, not a grid: drawn again on every click on this page, a row of columns
    # per layer cost 30 elements where this costs 2.
    st.container(border=True).markdown(
        "\n\n".join(
            lessons.sentence(
                "execution_stack",
                "layer_text",
                depth=depth,
                name=layer.name,
                holds=layer.holds,
                example=layer.example,
            )
            for depth, layer in enumerate(stack.layers, start=1)
        )
    )

    st.header("Before you trace one")
    marked_questions("c1")

    prose(heading("From a symptom to a layer"), lessons.sentence("execution_stack", "pick_symptom"))
    # A symptom redraws only the trace below it.
    lesson_section(trace_symptom)
    next_link("pages/execution_stack.py")


def trace_symptom() -> None:
    """The symptom picker, the layers it points to, what to measure first, and the share link."""
    stack = load_stack()
    field = section("stack").field("symptom")
    chosen = st.radio(
        "Symptom",
        field.choices,
        format_func=stack.symptom_label,  # a bound method, so session state stays picklable
        horizontal=True,
        **persistent("stack", "symptom"),
    )
    symptom = stack.symptom(chosen)
    causes = {cause.layer_id: cause.how for cause in symptom.causes}
    for layer in stack.places():
        if layer.id in causes:
            st.error(f"**{layer.name}**: {causes[layer.id]}", icon=":material/warning:")
        elif layer in stack.layers:
            st.container(border=True).caption(
                lessons.sentence("execution_stack", "unlikely_origin", layer=layer.name)
            )
    st.info(
        lessons.sentence("execution_stack", "measure_first", measurement=symptom.first_measurement),
        icon=":material/straighten:",
    )
    if symptom.fork is not None:
        idle, busy = st.columns(2)
        idle.warning(
            lessons.sentence("execution_stack", "gpu_idle", where_to_look=symptom.fork.idle),
            icon=":material/hourglass_empty:",
        )
        busy.warning(
            lessons.sentence("execution_stack", "gpu_busy", where_to_look=symptom.fork.busy),
            icon=":material/speed:",
        )
    share_box("stack")


lesson_page(draw)
