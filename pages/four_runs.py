"""Four runs: what each dashboard showed, then sort each run into a kind of failure."""

import functools

import streamlit as st

from charts.telemetry import PANELS_PER_ROW, panel_count, telemetry_panel
from core.run_a import brief_sentence
from core.telemetry import device_words, load_runs, recorded
from ui.charts import draw
from ui.marked import marked_question
from ui.nav import next_link

st.title("Four runs, four different problems")
st.markdown(
    "Every run below started, claimed GPU memory, kept the GPU busy for a while and printed numbers. "
    '"It launched" is true of all four, and it tells you nothing. Read each run\'s card and say what kind of '
    "failure it is, one locked answer per run; the dashboards that show what happened come after."
)

runs, device_gb = load_runs()
columns = st.columns(len(runs))
for column, run in zip(columns, runs, strict=True):
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
    f"Simulated telemetry on a {device_words(device_gb)}. The red rules mark "
    "the device limit and the moment things went wrong."
)
for run in runs:
    series = recorded(run.id)
    st.subheader(f"{run.title}: what the dashboard recorded")
    count = panel_count(series)
    for row_start in range(0, count, PANELS_PER_ROW):
        # A new row of columns each time: side by side on a laptop, stacked in order on a phone.
        for index, column in enumerate(st.columns(PANELS_PER_ROW), start=row_start):
            if index < count:
                with column:
                    draw(
                        ("telemetry", run.id, device_gb, index),
                        functools.partial(telemetry_panel, series, index),
                        description=f"{run.title}: one panel of its recorded telemetry.",
                    )
    st.caption(
        f"{run.title}: {series.failure_text or 'no single failure point; look at the level of each line'}."
    )
    if run.id == "A":  # the same run as the Run A page, with the same figures
        st.caption(brief_sentence())

next_link("pages/four_runs.py")
