"""Your run: read a training log (an example or your own) and get each kind's verdict and evidence."""

import streamlit as st

from core.diagnose.columns import columns_signature, guess_mapping
from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import HEALTHY
from core.diagnose.examples import example
from core.diagnose.formats import read_log
from ui import state
from ui.marked import marked_question
from ui.nav import next_link
from ui.your_run import (
    ask_context,
    ask_mapping,
    example_reading,
    example_table,
    finding_card,
    literal,
    pick_source,
    reading,
    show_run,
)

QUESTION_ID = "y1"
QUESTION_EXAMPLE = "leak.tfevents"


st.title("Your run")
st.markdown(
    "Four runs were simulated. This page reads a real log: one of five the lab ships, made by training small "
    "models with PyTorch on a CPU, or one of your own. For each kind of failure it gives a verdict "
    "(*likely*, *possible* or *no sign*), the evidence it found, and the first thing to measure next."
)

st.header("Classify one first")
quiz = example(QUESTION_EXAMPLE)
quiz_table = example_table(quiz.file)
quiz_reading = example_reading(quiz.file, guess_mapping(quiz_table.columns), RunContext(classes=quiz.classes))
show_run(quiz_reading, title=quiz.title, marked=False)
marked_question(QUESTION_ID)
answered = QUESTION_ID in state.answers()

st.header("Read a log")
source = pick_source()
if source is None:
    st.info("Upload a log to see its diagnosis. Nothing you upload is kept after you leave.")
elif source.example is not None and source.example.file == QUESTION_EXAMPLE and not answered:
    st.info("This is the run from the question above: answer it first, then its diagnosis shows here.")
else:
    try:
        table = example_table(source.example.file) if source.example else read_log(source.data, source.name)
        context = ask_context(source)
    except ValueError as problem:
        st.error(literal(str(problem)))
    else:
        st.caption(
            f"Read as {table.format}: {len(table.rows):,} rows, {len(table.columns)} columns of numbers."
        )
        if table.ignored:
            st.text("Columns that hold text, not numbers, are left out: " + ", ".join(table.ignored))
        with st.expander("Which column is which", expanded=source.example is None):
            st.caption(
                "Each box starts on the column whose name says it holds that quantity. Fix any that is wrong."
            )
            mapping = ask_mapping(
                table.columns, guess_mapping(table.columns), columns_signature(table.columns)
            )
        try:
            read = (
                example_reading(source.example.file, mapping, context)
                if source.example
                else reading(table, mapping, context)
            )
        except ValueError as problem:
            st.error(literal(str(problem)))
        else:
            diagnosis = read.diagnosis
            (st.success if diagnosis.primary == HEALTHY else st.warning)(diagnosis.summary)
            title = source.example.title if source.example else "Your log"
            show_run(read, title=title, marked=True)
            st.caption(
                "Red rules: where the first nan or inf appeared (dashed) and where the loss stopped "
                "improving (dotted). Grey band: within 5% of chance. Solid red line: device memory. "
                "Dashed red line: the straight line a leak follows."
            )
            left, right = st.columns(2)
            for index, finding in enumerate(diagnosis.findings):
                with left if index % 2 == 0 else right:
                    finding_card(finding)

next_link("pages/your_run.py")
