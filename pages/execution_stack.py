"""The execution stack: five layers between your model and the GPU, and symptoms traced to them."""

import streamlit as st

from core.settings_schema import section
from core.stack import load_stack
from ui.links import share_box
from ui.marked import marked_question
from ui.nav import next_link
from ui.settings import persistent

stack = load_stack()

st.title("The execution stack")
st.markdown(
    "You write a model, but the GPU never sees one. Five layers sit in between, and any training "
    "problem starts in one of them. Errors tend to *appear* at the bottom, at the allocator or the "
    "hardware, while their cause can sit anywhere above."
)

for depth, layer in enumerate(stack.layers, start=1):
    with st.container(border=True):
        name_column, text_column = st.columns([1, 4])
        name_column.markdown(f"**{depth}. {layer.name}**")
        text_column.markdown(f"{layer.holds}  \nFor example: {layer.example}")

st.header("Before you trace one")
marked_question("c1")

st.header("From a symptom to a layer")
st.markdown(
    "Pick a symptom. The layers that could produce it light up, with the one measurement that tells "
    "them apart."
)
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
        st.container(border=True).caption(f"{layer.name}: an unlikely origin for this symptom.")
st.info(f"**Measure first:** {symptom.first_measurement}", icon=":material/straighten:")
if symptom.fork is not None:
    idle, busy = st.columns(2)
    idle.warning(f"**The GPU is idle.** {symptom.fork.idle}", icon=":material/hourglass_empty:")
    busy.warning(f"**The GPU is busy.** {symptom.fork.busy}", icon=":material/speed:")
share_box("stack")
next_link("pages/execution_stack.py")
