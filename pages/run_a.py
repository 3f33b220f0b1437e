"""Run A experiment: from the brief of the out-of-memory run to a first experiment that rules something
out."""

import streamlit as st

from charts.run_a import iterations_chart, outcome_map_chart, timeline_chart
from core.memory.settings import CONVENTIONS, Attention, Optimizer
from core.memory.view import three_answers_rows
from core.run_a import (
    DECISION_RECORD,
    EXPERIMENTS,
    FIRST_EXPERIMENTS,
    MAX_TEXT_CHARS,
    REFLECTION_RECORD,
    brief_figures,
    budget_series,
    decision_record,
    feedback,
    leak,
    load_content,
    map_agreement,
    measure_rows,
    outcome_map,
    outcome_rows,
    pair_label,
    pairs,
    phase_rows,
    reflection_record,
    run_a_timeline,
    run_experiment,
    run_pair,
    saved_choice_index,
    short_label,
    stored_text,
)
from core.settings_schema import section
from ui import state
from ui.charts import draw
from ui.links import share_box
from ui.nav import next_link
from ui.settings import persistent
from ui.tables import arrow_rows, shared_table

content, brief, run_a = load_content(), brief_figures(), run_a_timeline()
setup, locked = run_a.setup, state.read_only()


def submit(name: str, build, **fields) -> None:
    """Store a form's record, or say what is missing (the message comes from core)."""
    try:
        state.store_record(name, build(**fields))
    except ValueError as err:
        st.warning(str(err), icon=":material/edit_note:")


st.title("Run A, properly")
st.markdown("Back to the first run of the lab, now with a memory budget to read it by.")
with st.container(border=True):
    st.markdown(
        f"**The brief.** A {brief.device_gib:g} GiB device ({brief.device_gb:.2f} GB) and "
        f"{brief.weights_gb:.2f} GB of weights. Forward finishes on every attempt. Then `CUDA out of memory` "
        "inside `loss.backward()`: same point, first iteration, every launch."
    )
st.caption(
    f"Behind it: a Hugging Face GPT-2 of {brief.parameter_count:,} parameters ({setup.model.hidden:,} wide, "
    f"{setup.model.layers} blocks), {CONVENTIONS[setup.precision].label}, "
    f"{Optimizer.label_of(setup.optimizer)}, {Attention.label_of(setup.attention).split(':')[0]} attention, "
    f"batch {setup.batch} × {setup.seq_len:,} tokens. Every figure on this page comes from the memory page's "
    "phase model; this exact run was also run on an H200 capped at the same memory, and the tables show what "
    "it did."
)

st.header("What the brief already tells you")
st.markdown(
    f"- **{brief.weights_gb:.2f} GB of weights cannot explain a failure at {brief.device_gb:.2f} GB.** "
    f"The other {brief.other_gb:.2f} GB went to something else.\n"
    f"- **Forward completed.** Its peak, {brief.forward_peak_gb:.2f} GB, fitted, so what forward "
    "needs is not "
    "the problem. What breaks is what only training adds: the saved activations "
    f"({brief.activations_gb:.2f} GB) are all still held when backward starts, and backward begins by adding "
    f"the loss's two FP32 gradients, each as large as the logits ({brief.loss_gb:.2f} GB for the loss in "
    f"all): {brief.backward_peak_gb:.2f} GB asked of a {brief.device_gb:.2f} GB device, counting the "
    f"{brief.overhead_gb:.2f} GB the allocator holds but cannot hand out.\n\n"
    "That is a hypothesis, not yet a diagnosis. Watch one step, then choose an experiment and say beforehand "
    "what each result would mean."
)

st.subheader("Three answers to the same question")
st.table(
    shared_table("run_a.three_answers", lambda: three_answers_rows(setup, capacity=run_a.capacity)),
    hide_index=True,
    alt="The lesson's rough rule, the careful count and the H200 measurement of Run A, side by side.",
)

st.header("One training step, moment by moment")
draw(
    ("run_a.timeline",),
    lambda: timeline_chart(run_a, title="Run A: memory in use through the first step"),
    description=(
        "Stacked area of memory terms through Run A's first step, rising to the device limit in backward."
    ),
)
st.caption(
    f"Each coloured band is a memory term. The red cross marks the failure in {brief.failure_where}; "
    "the grey "
    "dashed line is what the rest of the step would have needed; the dashed rule is the device."
)
st.table(
    shared_table("run_a.phases", lambda: phase_rows(run_a)),
    hide_index=True,
    alt="Each phase of Run A's first step, what is live at its peak and how it ends.",
)

st.subheader("Where Run A's shape dies: measured and estimated")
draw(
    ("run_a.map",),
    lambda: outcome_map_chart(outcome_map(), title="Run A's shape on a batch × sequence grid"),
    description=(
        "Two grids of coloured squares: where each run stopped on the H200 and where the phase model says."
    ),
)
agree, total = map_agreement()
st.caption(
    f"Each square is one run of Run A's shape with Adam, capped at {brief.device_gib:g} GiB: its left "
    f"half is what the H200 did, its right half what the phase model says; they agree on {agree} of "
    f"{total}. The band where a run dies inside backward is narrow: backward's start adds only the loss's "
    "two logit-sized gradients to "
    f"what forward already held ({brief.backward_peak_gb - brief.forward_peak_gb:.2f} GB here), so a few "
    "hundred tokens separate 'forward does not fit' from 'backward fits, the first optimizer step does not'."
)

st.header("Your first experiment")
st.markdown(
    "Pick the experiment you would run first and write what each result would rule out. This is not marked: "
    "you can change it and submit again as often as you like until you hand in the lab."
)
saved = state.record(DECISION_RECORD)
with st.form("run_a.decision_form"):
    choice = st.radio(
        "Which experiment would you run first?",
        EXPERIMENTS,
        index=saved_choice_index(saved),
        format_func=FIRST_EXPERIMENTS.__getitem__,
        key="run_a.decision.choice",
        disabled=locked,
    )
    why = st.text_area(
        "Your reasoning: what you expect, and what a success or a failure would each rule out",
        value=stored_text(saved, "why"),
        max_chars=MAX_TEXT_CHARS,
        placeholder="For example: my prediction, then what a pass and what a failure would each tell me.",
        key="run_a.decision.why",
        disabled=locked,
    )
    if st.form_submit_button("Save my decision", disabled=locked):
        submit(DECISION_RECORD, decision_record, choice=choice, why=why)

decision = state.record(DECISION_RECORD)
if decision is None:
    st.info(
        "Save a decision to read feedback on it and to run the four experiments.", icon=":material/science:"
    )
else:
    st.markdown(f"**You chose:** {FIRST_EXPERIMENTS[decision['choice']]}. **Your reasoning, as saved:**")
    st.text(decision["why"])
    st.info(feedback(decision["choice"]), icon=":material/lightbulb:")
    st.markdown(f"*{content.principle}*")

    st.header("Now run them")
    st.markdown(
        "Each experiment changes one thing about Run A, and the same budget recomputes the step. "
        "Does iteration 1 "
        "complete now? If not, where does the run fail instead?"
    )
    st.radio(
        "Timeline to show",
        section("run_a").field("experiment").choices,
        format_func=FIRST_EXPERIMENTS.__getitem__,
        horizontal=True,
        **persistent("run_a", "experiment"),
    )
    share_box("run_a")
    outcome = run_experiment(state.section_settings("run_a")["experiment"])
    st.markdown(f"**{outcome.change_title}.** {outcome.summary}")
    draw(
        ("run_a.experiment", outcome.label),
        lambda: timeline_chart(
            outcome.timeline, title=f"{short_label(outcome.experiment)}: memory in use", before=run_a
        ),
        description=f"Memory through two iterations after the experiment: {outcome.label}.",
    )
    st.caption(
        "Coloured bands: the terms after the change. Blue dashed line: Run A as briefed. Red cross "
        "and grey line: the failure and what was never reached."
    )
    st.table(
        shared_table("run_a.experiments", lambda: outcome_rows([run_experiment(e) for e in EXPERIMENTS])),
        hide_index=True,
        alt="The four experiments and where each run gets to.",
    )

    st.subheader("Two changes at once")
    st.markdown(
        "One change at a time shows what each one does. Now put two together: when a change gets the "
        "run past the point where it died, does it meet another wall further on?"
    )
    st.selectbox("Two experiments to combine", pairs(), format_func=pair_label, **persistent("run_a", "pair"))
    pair = run_pair(state.section_settings("run_a")["pair"])
    compared = pair.wall_mover
    compared_note = f"{content.short_names[compared.experiment]} alone" if compared else "Run A as briefed"
    st.markdown(f"**{pair.together.change_title}.** {pair.verdict}")
    draw(
        ("run_a.pair", pair.together.experiment),
        lambda: timeline_chart(
            pair.together.timeline,
            title="Both changes: memory in use",
            before=compared.timeline if compared else run_a,
            before_note=compared_note,
        ),
        description=f"Memory through two iterations with both changes: {pair.together.label}.",
    )
    st.caption(
        f"Coloured bands: both changes together. Blue dashed line: {compared_note}. Below, each experiment "
        "alone and the two together, side by side."
    )
    st.table(
        arrow_rows(outcome_rows([pair.first, pair.second, pair.together])),
        hide_index=True,
        alt="Each of the two experiments alone, then both together, and where each run gets to.",
    )

st.header("A budget too small, or a leak?")
st.markdown(
    "Run A dies in its first iteration, at the same moment, on every launch: the budget is too small "
    "for the step. "
    "A run that trains for a while and then dies, with memory a little higher after every step, has "
    "a different "
    "problem: something that should be released is being kept."
)
budget, leaky = budget_series(), leak()
left, right = st.columns(2)
with left:
    draw(
        ("run_a.budget",),
        lambda: iterations_chart(budget, title="Budget too small: Run A, launch after launch"),
        description=(
            "Flat line of the memory Run A asks for on each launch, above the device limit every time."
        ),
    )
    st.caption(f"Every launch asks for {budget.peak_gb[0]:.2f} GB in iteration 1 and dies at the same point.")
with right:
    draw(
        ("run_a.leak",),
        lambda: iterations_chart(leaky.series, title="A leak: a run that fits, then creeps"),
        description=(
            "Rising line of peak memory per iteration, crossing the device limit after many iterations."
        ),
    )
    st.caption(
        f"Start from Run A with {leaky.change}: it fits, with a peak of {leaky.steady_peak_gb:.2f} "
        f"GB. Keeping {content.leak_retained} "
        f"adds {leaky.retained_mb_per_iteration:.0f} MB a step, and the run dies at iteration "
        f"{leaky.series.failed_at}."
    )
st.markdown(
    "The usual ways a training loop keeps what it should let go:\n"
    + "\n".join(f"- {cause}" for cause in content.leak_causes)
)

st.header("Measure rather than guess")
st.table(
    shared_table("run_a.measure", measure_rows),
    hide_index=True,
    alt="Questions to ask of a failing run and the PyTorch calls that answer them.",
)
st.caption(
    f"Sources: {'; '.join(row['source'] for row in content.measure)}. Then put each measurement next "
    "to the term you estimated, and see which one you got wrong."
)

st.header("Closing question: Run B")
saved_reflection = state.record(REFLECTION_RECORD)
with st.form("run_a.reflection_form"):
    text = st.text_area(
        content.reflection_prompt,
        value=stored_text(saved_reflection, "text"),
        max_chars=MAX_TEXT_CHARS,
        placeholder="For example: the metric, the value I might see, and the layer that value implicates.",
        key="run_a.reflection.text",
        disabled=locked,
    )
    if st.form_submit_button("Submit my answer", disabled=locked):
        submit(REFLECTION_RECORD, reflection_record, text=text)
if (reflection := state.record(REFLECTION_RECORD)) is not None:
    st.markdown("**Your answer, as saved:**")
    st.text(reflection["text"])
if locked:
    st.caption("The lab is handed in: the decision and the answer above are final.")
next_link("pages/run_a.py")
