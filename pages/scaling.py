"""Scaling out: five predictions about adding GPUs, five computed results, and one defended plan."""

import streamlit as st

from core.scaling.evidence import current_settings
from core.scaling.scenarios import load_scaling, track, track_label
from core.settings_schema import section
from ui import scaling_parts as parts
from ui import state
from ui.links import share_box
from ui.nav import next_link
from ui.settings import persistent

st.title("Scaling out: when do more GPUs stop helping?")
st.markdown(
    "More GPUs only pay while each one still has enough work to hide the cost of keeping them in step. "
    "Follow one training job through five questions: what to hold fixed, how to make a big model fit, "
    "where each kind of parallelism should run, how to feed a pipeline, and what to do about slow workers. "
    "Predict each result before you see it, capture the evidence, then defend a plan."
)
lab = load_scaling().lab
st.caption(f":material/schedule: {lab.minutes.capitalize()}. After it you can:")
st.markdown("\n".join(f"{number}. {objective}" for number, objective in enumerate(lab.objectives, start=1)))
tracks = section("scaling").field("track").choices
st.selectbox("Training context", tracks, format_func=track_label, **persistent("scaling", "track"))
settings = current_settings(state.section_settings("scaling"))
chosen = track(settings["track"])
parts.context(chosen)
parts.assumptions(chosen)

tab_a, tab_b, tab_c, tab_d, tab_e, tab_synthesis = st.tabs(parts.tab_titles())
with tab_a:
    part_a = parts.strong_vs_weak(chosen, settings)
with tab_b:
    parts.making_it_fit(chosen, settings)
with tab_c:
    parts.parallel_layouts(chosen, settings)
with tab_d:
    parts.pipeline_bubble(chosen, settings)
with tab_e:
    parts.stragglers(chosen, settings, part_a)
with tab_synthesis:
    parts.synthesis(chosen, settings)
share_box("scaling")
st.subheader("Three things to keep")
st.markdown("\n".join(f"- {takeaway}" for takeaway in lab.takeaways))
next_link("pages/scaling.py")
