"""Four runs: what each dashboard showed, then sort each run into a kind of failure."""

from functools import partial

import streamlit as st

from charts.telemetry import telemetry_chart
from core.run_a import brief_sentence
from core.telemetry import load_runs, recorded
from ui.charts import draw
from ui.marked import marked_question

st.title("Four runs, four different problems")
st.markdown(
    "Every run below started, claimed GPU memory, kept the GPU busy for a while and printed numbers. "
    '"It launched" is true of all four, and it tells you nothing. Read each run\'s card and its '
    "dashboard, then say what kind of failure it is. You get one answer per run."
)

runs, device_gb = load_runs()
columns = st.columns(len(runs))
for column, run in zip(columns, runs, strict=True):
    with column.container(border=True):
        st.subheader(run.title)
        st.markdown("\n".join(f"- {fact}" for fact in run.facts))

st.header("What the dashboards recorded")
st.caption(
    f"Simulated telemetry on a {device_gb * 1e9 / 2**30:g} GiB card ({device_gb:.2f} GB). The red rules mark the device limit and the moment things went wrong."
)
for run in runs:
    series = recorded(run.id)
    draw(
        ("telemetry", run.id, device_gb),
        partial(telemetry_chart, series),
        width="content",
        description=f"{run.title}: GPU memory, utilisation and loss recorded over the run.",
    )
    st.caption(
        f"{run.title}: {series.failure_text or 'no single failure point; look at the level of each line'}."
    )
    if run.id == "A":  # the same run as the Run A page, with the same figures
        st.caption(brief_sentence())

st.header("Sort them")
st.markdown(
    "Each run fits exactly one of four kinds: **resource**, **throughput**, **numerical** or **correctness**."
)
for run in runs:
    marked_question(run.question_id)
