"""Four runs: what each dashboard showed, then sort each run into a kind of failure."""

import streamlit as st

from charts.telemetry import telemetry_chart
from core.telemetry import load_runs, recorded
from ui.charts import draw
from ui.marked import marked_question
from ui.nav import next_link

st.title("Four runs, four different problems")
st.markdown(
    "Every run below started, claimed GPU memory, kept the GPU busy for a while and printed numbers. "
    '"It launched" is true of all four, and it tells you nothing. Read each run\'s card and say what kind of failure it is, one locked answer per run; '
    "the dashboards that show what happened come after."
)

runs, device_gb = load_runs()
columns = st.columns(len(runs))
for column, run in zip(columns, runs):
    with column.container(border=True):
        st.subheader(run.title)
        st.markdown("\n".join(f"- {fact}" for fact in run.facts))

st.header("Sort them")
st.markdown(
    "Each run fits exactly one of four kinds: **resource**, **throughput**, **numerical** or **correctness**."
)
for run in runs:
    marked_question(run.question_id)

st.header("What the dashboards recorded")
st.markdown("Now check your sorting against what each run's dashboard recorded.")
st.caption(
    f"Simulated telemetry on a {device_gb:g} GB card. The red rules mark the device limit and the moment things went wrong."
)
for run in runs:
    series = recorded(run.id)
    draw(
        ("telemetry", run.id, device_gb),
        lambda: telemetry_chart(series),
        width="content",
        description=f"{run.title}: GPU memory, utilisation and loss recorded over the run.",
    )
    st.caption(
        f"{run.title}: {series.failure_text or 'no single failure point; look at the level of each line'}."
    )
next_link("pages/four_runs.py")
