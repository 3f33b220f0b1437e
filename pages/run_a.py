"""Run A experiment: from the brief of the out-of-memory run to a first experiment that rules something
out."""

import streamlit as st

from charts.run_a import (
    iterations_chart,
    iterations_description,
    map_description,
    outcome_map_chart,
    timeline_chart,
    timeline_description,
)
from core import lessons
from core.memory.settings import CONVENTIONS, Attention, Optimizer
from core.memory.view import three_answers_rows
from core.run_a import (
    DECISION_RECORD,
    EXPERIMENTS,
    FIRST_EXPERIMENTS,
    MAX_TEXT_CHARS,
    PAIR_PREDICTION,
    PREDICTED_PAIR,
    REFLECTION_RECORD,
    ExperimentOutcome,
    brief_figures,
    budget_series,
    change_rows,
    decision_record,
    feedback,
    leak,
    map_agreement,
    outcome_map,
    pair_label,
    pairs,
    phase_rows,
    reach,
    reach_rows,
    reflection_record,
    run_a_timeline,
    run_experiment,
    run_pair,
    saved_choice_index,
    stored_text,
)
from core.settings_schema import section
from ui import state
from ui.charts import draw as draw_chart
from ui.frame import BODY_KEY, after_saving, lesson_page, lesson_section
from ui.links import share_box
from ui.nav import next_link
from ui.prediction import lesson_prediction
from ui.prose import SUBHEADER, TITLE, heading, prose
from ui.run_a_charts import (
    compared_note,
    experiment_chart,
    experiment_description,
    pair_chart,
    pair_description,
)
from ui.settings import persistent
from ui.tables import arrow_rows, shared_table, table_with_notes

brief, run_a = brief_figures(), run_a_timeline()
setup = run_a.setup


def experiment_tables(outcomes: list[ExperimentOutcome], what: str) -> None:
    """Two narrow tables rather than one that a phone would scroll: what each run changes, then where it gets
    to beside what the H200 did."""
    st.table(
        arrow_rows(change_rows(outcomes)),
        hide_index=True,
        alt=f"{what}: what each changes, whether iteration 1 completes and the peak it asks for.",
    )
    st.table(
        arrow_rows(reach_rows(outcomes)),
        hide_index=True,
        alt=f"{what}: where each run first fails, and what the H200 did.",
    )


def _missing_key(name: str) -> str:
    return f"{name}.missing"


def _submit(name: str, build, widget_keys: dict[str, str]) -> None:
    try:
        state.store_record(
            name, build(**{field: st.session_state.get(key) for field, key in widget_keys.items()})
        )
    except ValueError as err:
        st.session_state[_missing_key(name)] = str(err)
        return
    after_saving(BODY_KEY)  # a part of the lab done: the summary counts it


def submit_button(label: str, name: str, build, *, locked: bool, **widget_keys: str) -> None:
    """A form's submit button that stores the record `name` built from the widgets' values in its
    callback, where the progress summary is told to count it, or says what is missing (the message
    comes from core) under the button."""
    st.form_submit_button(label, on_click=_submit, args=(name, build, widget_keys), disabled=locked)
    if missing := st.session_state.pop(_missing_key(name), None):
        st.warning(missing, icon=":material/edit_note:")


def run_them() -> None:
    """The experiments the decision leads to: each one's timeline, all four side by side, then two at once."""
    prose(heading("Now run them"), lessons.sentence("run_a", "run_them"))
    st.radio(
        lessons.sentence("run_a", "timeline_pick"),
        section("run_a").field("experiment").choices,
        format_func=FIRST_EXPERIMENTS.__getitem__,
        horizontal=True,
        **persistent("run_a", "experiment"),
    )
    share_box("run_a")
    outcome = run_experiment(state.section_settings("run_a")["experiment"])
    st.markdown(f"**{outcome.change_title}.** {outcome.summary}")
    draw_chart(
        *experiment_chart(outcome),
        description=experiment_description(outcome),
    )
    st.caption(lessons.sentence("run_a", "experiment_caption"))
    experiment_tables([run_experiment(e) for e in EXPERIMENTS], "The four experiments")

    prose(
        heading(lessons.sentence("run_a", "two_changes_heading"), SUBHEADER),
        lessons.sentence("run_a", "two_changes_intro"),
    )
    if lesson_prediction(PAIR_PREDICTION, reach(run_pair(PREDICTED_PAIR).together.timeline)) is not None:
        st.selectbox(
            "Two experiments to combine", pairs(), format_func=pair_label, **persistent("run_a", "pair")
        )
        pair = run_pair(state.section_settings("run_a")["pair"])
        st.markdown(f"**{pair.together.change_title}.** {pair.verdict}")
        draw_chart(
            *pair_chart(pair),
            description=pair_description(pair),
        )
        st.caption(lessons.sentence("run_a", "pair_caption", compared=compared_note(pair)))
        experiment_tables(
            [pair.first, pair.second, pair.together], "Each experiment alone, then both together"
        )


def draw() -> None:
    """The page's body: the brief, the first step, the learner's experiment and the closing question."""
    locked = state.read_only()
    prose(heading("Run A, properly", TITLE), lessons.sentence("run_a", "intro"))
    with st.container(border=True):
        st.markdown(
            lessons.text(
                "run_a",
                "brief",
                device=brief.device,
                weights_gb=brief.weights_gb,
            )
        )
    st.caption(
        lessons.sentence(
            "run_a",
            "behind_it",
            parameter_count=brief.parameter_count,
            hidden=setup.model.hidden,
            layers=setup.model.layers,
            precision=CONVENTIONS[setup.precision].label,
            optimizer=Optimizer.label_of(setup.optimizer),
            attention=Attention.label_of(setup.attention).split(":")[0],
            batch=setup.batch,
            seq_len=setup.seq_len,
        )
    )

    prose(
        heading("What the brief already tells you"),
        lessons.text(
            "run_a",
            "hypothesis",
            weights_gb=brief.weights_gb,
            device_gb=brief.device_gb,
            other_gb=brief.other_gb,
            forward_peak_gb=brief.forward_peak_gb,
            activations_gb=brief.activations_gb,
            loss_gb=brief.loss_gb,
            backward_peak_gb=brief.backward_peak_gb,
            overhead_gb=brief.overhead_gb,
        ),
        heading("Three answers to the same question", SUBHEADER),
    )
    answers = three_answers_rows(setup, capacity=run_a.capacity)
    table_with_notes(
        answers,
        notes="Why",
        alt="The lesson's rough rule, the careful count and the H200 measurement of Run A, side by side.",
    )

    st.header("One training step, moment by moment")
    draw_chart(
        ("run_a.timeline",),
        lambda: timeline_chart(run_a, title=lessons.sentence("run_a", "timeline_title")),
        description=timeline_description(run_a, lessons.sentence("run_a", "timeline_title")),
    )
    st.caption(lessons.sentence("run_a", "timeline_caption", failure_where=brief.failure_where))
    st.table(
        shared_table("run_a.phases", lambda: phase_rows(run_a)),
        hide_index=True,
        alt="Each phase of Run A's first step, what is live at its peak and how it ends.",
    )
    prose(
        lessons.text("run_a", "phases"),
        heading("Where Run A's shape dies: measured and estimated", SUBHEADER),
    )
    draw_chart(
        ("run_a.map",),
        lambda: outcome_map_chart(outcome_map(), title="Run A's shape on a batch × sequence grid"),
        description=map_description(outcome_map(), "Run A's shape on a batch × sequence grid"),
    )
    agree, total = map_agreement()
    st.caption(
        lessons.sentence(
            "run_a",
            "map_caption",
            device_gib=brief.device_gib,
            agree=agree,
            total=total,
            added_gb=brief.backward_added_gb,
        )
    )

    prose(heading("Your first experiment"), lessons.sentence("run_a", "decision_intro"))
    saved = state.record(DECISION_RECORD)
    with st.form("run_a.decision_form"):
        st.radio(
            "Which experiment would you run first?",
            EXPERIMENTS,
            index=saved_choice_index(saved),
            format_func=FIRST_EXPERIMENTS.__getitem__,
            key="run_a.decision.choice",
            disabled=locked,
        )
        st.text_area(
            "Your reasoning: what you expect, and what a success or a failure would each rule out",
            value=stored_text(saved, "why"),
            max_chars=MAX_TEXT_CHARS,
            placeholder="For example: my prediction, then what a pass and what a failure would each tell me.",
            key="run_a.decision.why",
            disabled=locked,
        )
        submit_button(
            lessons.sentence("run_a", "save_decision"),
            DECISION_RECORD,
            decision_record,
            locked=locked,
            choice="run_a.decision.choice",
            why="run_a.decision.why",
        )

    decision = state.record(DECISION_RECORD)
    if decision is None and state.read_only():
        # Handed in without a decision: the hand-in locks answers, not the experiments.
        st.info(lessons.sentence("run_a", "no_decision_handed_in"), icon=":material/science:")
        lesson_section(run_them)
    elif decision is None:
        st.info(lessons.sentence("run_a", "no_decision"), icon=":material/science:")
    else:
        st.markdown(lessons.sentence("run_a", "you_chose", choice=FIRST_EXPERIMENTS[decision["choice"]]))
        st.text(decision["why"])
        st.info(feedback(decision["choice"]), icon=":material/lightbulb:")
        st.markdown(lessons.sentence("run_a", "principle"))

        # The experiments' controls rerun only the experiments.
        lesson_section(run_them)

    prose(heading("A budget too small, or a leak?"), lessons.sentence("run_a", "budget_intro"))
    budget, leaky = budget_series(), leak()
    left, right = st.columns(2)
    with left:
        draw_chart(
            ("run_a.budget",),
            lambda: iterations_chart(budget, title="Budget too small: Run A, launch after launch"),
            description=iterations_description(budget, "Budget too small: Run A, launch after launch"),
        )
        st.caption(lessons.sentence("run_a", "budget_caption", peak_gb=budget.peak_gb[0]))
    with right:
        draw_chart(
            ("run_a.leak",),
            lambda: iterations_chart(leaky.series, title="A leak: a run that fits, then creeps"),
            description=iterations_description(leaky.series, "A leak: a run that fits, then creeps"),
        )
        st.caption(
            lessons.sentence(
                "run_a",
                "leak_caption",
                change=leaky.change,
                steady_peak_gb=leaky.steady_peak_gb,
                retained_mb=leaky.retained_mb_per_iteration,
                failed_at=leaky.series.failed_at,
            )
        )
    prose(
        lessons.text("run_a", "leak_causes"),
        heading("Measure rather than guess"),
        lessons.text("run_a", "measure"),
    )
    st.caption(lessons.sentence("run_a", "measure_sources"))

    st.header("Closing question: Run B")
    saved_reflection = state.record(REFLECTION_RECORD)
    with st.form("run_a.reflection_form"):
        st.text_area(
            lessons.sentence("run_a", "reflection_prompt"),
            value=stored_text(saved_reflection, "text"),
            max_chars=MAX_TEXT_CHARS,
            placeholder=(
                "For example: the metric, the value I might see, and the layer that value implicates."
            ),
            key="run_a.reflection.text",
            disabled=locked,
        )
        submit_button(
            lessons.sentence("run_a", "submit_answer"),
            REFLECTION_RECORD,
            reflection_record,
            locked=locked,
            text="run_a.reflection.text",
        )
    if (reflection := state.record(REFLECTION_RECORD)) is not None:
        st.markdown(lessons.sentence("run_a", "your_answer"))
        st.text(reflection["text"])
    if locked:
        st.caption(lessons.sentence("run_a", "handed_in"))
    next_link("pages/run_a.py")


lesson_page(draw)
