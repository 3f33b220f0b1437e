"""Home: what the lab is for, what you will be able to do, and how far you have got."""

import streamlit as st

from core.progress import checks_score, overall_score, part_statuses, quiz_score
from core.questions import load_bank
from core.run_a import brief_figures
from ui import state
from ui.nav import next_link, title_of
from ui.tables import arrow_rows

bank = load_bank()
answers = state.answers()
statuses = part_statuses(bank, answers, state.snapshot()[state.RECORDS])

st.title("Reading a Training Run")
brief = brief_figures()
st.markdown(
    f"A job on a {brief.device_gib:g} GiB GPU ({brief.device_gb:.2f} GB) holds {brief.weights_gb:.2f} GB of "
    "weights. The forward pass finishes, then `loss.backward()` stops with `CUDA out of memory`. The error "
    f"does not say where the other {brief.other_gb:.2f} GB went. This lab teaches you to find out, and to "
    "design the experiment that proves it."
)
st.info(
    'The question behind it all: *"My training job is slow and keeps dying with out-of-memory '
    'errors. Which number should I look at first?"*',
    icon=":material/help:",
)

st.subheader("Before we start")
st.markdown(
    "Healthy-looking is not the same as healthy. A job that stays up, keeps utilisation high and shows a "
    "falling loss could still be any of these:\n"
    "- a run that uses an eighth of the card you are paying for;\n"
    "- a run 200 tokens of sequence length away from running out of memory;\n"
    "- a run whose gradients are about to overflow FP16;\n"
    "- a run that is learning nothing at all.\n\n"
    "None of them says so. Each turns up weeks later as a vague complaint, and the job is to get from "
    "that complaint to one number you can measure."
)

left, right = st.columns([3, 2])
with left:
    st.subheader("After this lab you can")
    st.markdown(
        "1. Sort a failing run into a resource, throughput, numerical or correctness problem.\n"
        "2. Trace a symptom through the execution stack to a hypothesis about one layer.\n"
        "3. Count the MACs and FLOPs of a layer, and explain why they do not predict its runtime.\n"
        "4. Split training memory into five terms and name the one that dominates.\n"
        "5. Design an out-of-memory experiment that rules something out whatever the result."
    )
    st.caption("About 45 minutes. Marked questions take one answer each, then lock.")
with right:
    st.subheader("Your progress")
    a, b, c = st.columns(3)
    a.metric("Checks", checks_score(bank, answers).label)
    b.metric("Quiz", quiz_score(bank, answers).label)
    c.metric("Overall", overall_score(bank, answers).label)
    st.dataframe(
        arrow_rows(
            {
                "Part": s.title,
                "Marked questions": f"{s.questions_answered}/{s.questions_total}"
                if s.questions_total
                else "none",
                "Done": s.complete,
            }
            for s in statuses
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Start here")
for part in bank.parts:
    if part.page:
        st.page_link(part.page, label=title_of(part.page), icon=":material/arrow_forward:")

st.subheader("Then, a second lab")
st.page_link("pages/scaling.py", label=title_of("pages/scaling.py"), icon=":material/hub:")
st.caption(
    "When do more GPUs stop helping? It stands on its own: predictions, evidence and a plan, "
    "not marked like the questions above."
)
next_link("pages/home.py")
