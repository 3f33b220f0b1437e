"""Memory budget: why training holds more than inference, the terms of a budget, and which one to cut."""

import streamlit as st

from charts.estimate_check import estimate_check_chart
from charts.memory import (
    budget_chart,
    budget_datasets,
    budget_description,
    budget_shape,
    sweep_chart,
    sweep_datasets,
    sweep_description,
    sweep_shape,
)
from core import lessons
from core.estimate_check.view import check_view, config_label
from core.gpus import gpu
from core.memory import BudgetOptimizer, SweepAxis
from core.memory import settings as phase_choices
from core.memory.settings import AttentionKind, LessonDtype, Recomputation, precision_label
from core.memory.view import (
    ESTIMATE_LABELS,
    SECTION,
    BudgetView,
    budget_view,
    bytes_per_parameter,
    device_choice_label,
    lesson_outcomes,
    phase_view,
    reference_rows,
    reference_summary,
    rule_and_count,
    said,
)
from core.models import resolve_model
from core.settings_schema import section
from core.units import capacity_label
from ui import state
from ui.charts import draw as draw_chart
from ui.frame import lesson_page, lesson_section
from ui.links import adopt_once, share_box
from ui.marked import marked_questions
from ui.model_source import chosen_model
from ui.nav import next_link
from ui.prediction import lesson_prediction
from ui.prose import SUBHEADER, TITLE, heading, prose
from ui.settings import persistent
from ui.tables import arrow_rows, table_with_notes
from ui.will_it_fit import will_it_fit

MEASURED_CONFIG = "measured_config"
WORST_OPEN = "memory.worst_open"  # whether the furthest-off table is open
fields = section(SECTION)


def slider(label: str, name: str, **extra) -> None:
    f = fields.field(name)
    st.slider(label, f.min, f.max, step=f.step, **extra, **persistent(SECTION, name))


def choice(widget, label: str, name: str, format_func, **extra) -> None:
    widget(label, fields.field(name).choices, format_func=format_func, **extra, **persistent(SECTION, name))


def budget_and_sweep(view: BudgetView, settings: dict, guessed_break: str | None) -> None:
    """The budget bar, its verdict and sums, the bytes-per-parameter card, then the sweep over the guess
    (None: handed in without one)."""
    verdict = view.verdict
    st.metric("Parameters", f"{view.parameter_count:,}")
    bars = [(ESTIMATE_LABELS[view.estimate], view.terms)]
    draw_chart(
        ("memory.budget", *budget_shape(bars)),
        lambda: budget_chart(
            bars,
            device_gb=verdict.device_gb,
            device_label=view.device_label,
            title=lessons.sentence("memory", "budget_chart_title"),
            gb_legend=True,
        ),
        datasets=budget_datasets(bars, device_gb=verdict.device_gb, device_label=view.device_label),
        description=budget_description(bars, device_gb=verdict.device_gb, device_label=view.device_label),
    )
    st.caption(
        lessons.sentence("memory", "budget_caption", total_gb=verdict.total_gb, device=view.device_label)
    )
    # The verdict, then what grades the sketch: the rule's answers beside the careful count's, in one callout.
    verdict_text = f"{said(view.verdict_line)}\n\n{said(rule_and_count(settings))}"
    if verdict.fits:
        st.success(verdict_text, icon=":material/check_circle:")
    else:
        st.error(verdict_text, icon=":material/error:")
    with st.expander("The sums behind this budget", expanded=True):
        st.markdown("\n".join(f"- {said(line)}" for line in view.assumptions))
    card = bytes_per_parameter()
    with st.container(border=True):
        st.markdown(
            lessons.text(
                "memory",
                "bytes_per_parameter",
                fp32_weights=card.fp32_weights,
                sgd=card.sgd,
                sgd_momentum=card.sgd_momentum,
                adam=card.adam,
                mixed18=card.mixed18,
                mixed20=card.mixed20,
            )
        )
        st.caption(lessons.sentence("memory", "lesson_convention", two_byte_adam=card.lesson_two_byte_adam))
    if view.estimate == "lesson":
        st.caption(lessons.sentence("memory", "try_it"))

    st.header("Where does it break?")
    choice(st.radio, "Grow", "sweep_axis", SweepAxis.label_of, horizontal=True)
    sweep = view.sweep
    # The guess is a sequence length, so it is drawn only on the sequence-length sweep.
    guess = (
        int(guessed_break)
        if guessed_break is not None and guessed_break.isdigit() and settings["sweep_axis"] == "seq_len"
        else None
    )
    draw_chart(
        ("memory.sweep", *sweep_shape(sweep, guessed=guess is not None)),
        lambda: sweep_chart(
            sweep,
            device_label=view.device_label,
            title=f"Peak memory as {sweep.axis_label.lower()} grows",
            guess=guess,
        ),
        datasets=sweep_datasets(sweep, device_label=view.device_label, guess=guess),
        description=sweep_description(sweep, device_label=view.device_label),
    )
    axis = sweep.axis_label.lower()
    if sweep.first_failing is None:
        st.caption(lessons.sentence("memory", "sweep_all_fit", axis=axis, last=sweep.values[-1]))
    elif sweep.largest_fitting is None:
        st.caption(lessons.sentence("memory", "sweep_none_fit", axis=axis, first=sweep.values[0]))
    else:
        st.caption(
            lessons.sentence(
                "memory", "sweep_crosses", axis=axis, fits=sweep.largest_fitting, fails=sweep.first_failing
            )
        )


def phase_section() -> None:
    """Draw the phase-by-phase count with its own controls."""
    prose(heading(lessons.sentence("memory", "phases_heading")), lessons.text("memory", "phases"))
    left, right = st.columns(2)
    with left:
        choice(st.radio, "Implementation stack", "stack", phase_choices.Stack.label_of)
        choice(
            st.selectbox,
            "Model for the phase count",
            "phase_model",
            str,
            help="custom uses the hidden size and layers above.",
        )
        choice(st.selectbox, "Precision", "phase_precision", phase_choices.convention_label)
        choice(st.radio, "Attention", "phase_attention", phase_choices.Attention.label_of)
    with right:
        choice(st.radio, "Recomputation", "phase_recompute", phase_choices.Recompute.label_of)
        choice(st.selectbox, "Optimizer", "phase_optimizer", phase_choices.Optimizer.label_of)
        choice(
            st.selectbox,
            "Optimizer implementation",
            "optimizer_impl",
            phase_choices.OptimizerImpl.label_of,
        )
        choice(st.selectbox, "GPU", "phase_gpu", str)
    settings = state.section_settings(SECTION)
    model = resolve_model(settings["phase_model"], hidden=settings["hidden"], layers=settings["layers"])
    try:
        phases = phase_view(settings, model=model, card=gpu(settings["phase_gpu"]))
    except ValueError as err:
        st.warning(str(err), icon=":material/warning:")
    else:
        draw_chart(
            ("memory.phases", *budget_shape(phases.bars)),
            lambda: budget_chart(
                phases.bars,
                device_gb=phases.capacity.total_gb,
                device_label=phases.capacity.label,
                title="Memory at each phase's peak",
            ),
            datasets=budget_datasets(
                phases.bars, device_gb=phases.capacity.total_gb, device_label=phases.capacity.label
            ),
            description=budget_description(
                phases.bars, device_gb=phases.capacity.total_gb, device_label=phases.capacity.label
            ),
        )
        figures = {
            "need_gb": phases.need_gb,
            "phase": phases.peak_phase,
            "moment": phases.peak_moment,
            "gpu": phases.capacity.label,
            "capacity": capacity_label(phases.capacity.total_bytes),
        }
        if phases.fits:
            st.success(lessons.sentence("memory", "phase_fits", **figures))
        else:
            st.error(lessons.sentence("memory", "phase_oom", **figures))
        table_with_notes(phases.rows, notes="When", alt="Each phase's own peak and when it happens.")
        prose(heading("Three answers", SUBHEADER), lessons.text("memory", "three_answers"))
        table_with_notes(
            phases.answers,
            notes="Why",
            alt="The rough rule, the careful count and the H200 measurement side by side.",
        )


def estimate_check_section() -> None:
    """Pick a measured run; show the estimate next to PyTorch's bytes as a table and a chart, and what the
    gaps are."""
    prose(heading("How close is this estimate?"), lessons.text("memory", "estimate_check"))
    st.selectbox(
        "Measured run",
        fields.field(MEASURED_CONFIG).choices,
        format_func=config_label,
        **persistent(SECTION, MEASURED_CONFIG),
    )
    chosen = state.section_settings(SECTION)[MEASURED_CONFIG]
    view = check_view(chosen)
    st.caption(view.setup_text)
    st.table(arrow_rows(view.table), hide_index=True)
    draw_chart(
        ("estimate_check", chosen),
        lambda: estimate_check_chart(view.check, title=lessons.sentence("memory", "check_chart_title")),
        description=view.chart_description,
    )
    st.caption(view.chart_description)
    st.markdown(view.gap_text)
    st.info(view.summary_text, icon=":material/fact_check:")
    # Built only while open: most reruns of this page are a slider above, and nobody reads it then.
    worst = st.expander(
        "Where the estimate is furthest off, over every measured run", key=WORST_OPEN, on_change="rerun"
    )
    if worst.open:
        with worst:
            table_with_notes(
                view.worst_table,
                notes="Main cause",
                alt="Each term's furthest-off run and its relative error.",
            )
    prose(heading("On a GPU: the phase model against an H200", SUBHEADER), lessons.text("memory", "on_a_gpu"))
    st.table(
        arrow_rows(list(reference_rows())),
        hide_index=True,
        alt="Each H200 reference setup: the estimated and measured peak after each phase.",
    )
    summary = reference_summary()
    st.info(
        lessons.sentence(
            "memory",
            "reference_summary",
            setups=summary.setups,
            worst_percent=summary.worst_percent,
            lowest_ratio=summary.lowest_ratio,
            highest_ratio=summary.highest_ratio,
        ),
        icon=":material/memory:",
    )


def draw() -> None:
    """The page's body: the lessons on training memory, the sketch and its reveal, and the estimate check."""
    prose(
        heading("Memory budget", TITLE),
        lessons.text("memory", "intro"),
        heading("Training keeps what inference throws away"),
    )
    marked_questions("c3")
    prose(lessons.text("memory", "training_keeps"), heading("Where the memory goes"))
    marked_questions("c4")
    st.markdown(lessons.text("memory", "where_memory_goes"))
    # The budget's controls rerun only what they change: the budget, its sketch and its reveal.
    lesson_section(budget_lesson)

    prose(heading("What this still leaves out"), lessons.text("memory", "leaves_out"))

    lesson_section(estimate_check_section)
    next_link("pages/memory_budget.py")


def budget_lesson() -> None:
    """The budget's controls, the share link, the sketch to lock first, then the budget it reveals."""
    # The detailed estimate takes its number format and device from its own controls below, so the
    # lesson's two radios are hidden there rather than left live and ignored. A link's settings are
    # taken first (the first control would take them too late): a link to the detailed estimate opens it.
    adopt_once(SECTION)
    detailed = state.section_settings(SECTION).get("estimate") == "detailed"
    shape, run = st.columns(2)
    with shape:
        slider("Hidden size (H)", "hidden")
        slider("Layers", "layers")
        if not detailed:
            choice(st.radio, "Parameter and activation dtype", "dtype", LessonDtype.label_of)
        choice(st.radio, "Optimizer", "optimizer", BudgetOptimizer.label_of)
    with run:
        slider("Batch (B)", "batch")
        slider("Sequence length (S)", "seq_len")
        if not detailed:
            choice(st.radio, "Device memory", "device_gb", device_choice_label, horizontal=True)
        choice(st.radio, "Estimate", "estimate", ESTIMATE_LABELS.__getitem__, horizontal=True)

    model = None  # the lesson's estimate sizes the sliders' shape only
    if detailed:
        with st.container(border=True):
            st.subheader("Make it realistic")
            st.caption(lessons.sentence("memory", "make_realistic"))
            left, right = st.columns(2)
            with left:
                choice(
                    st.selectbox, "Model", "model", str, help="custom uses the hidden size and layers above."
                )
                choice(st.selectbox, "Mixed precision", "precision", precision_label)
                choice(st.radio, "Activation recomputation", "recompute", Recomputation.label_of)
                choice(st.radio, "Attention", "attention", AttentionKind.label_of)
            with right:
                slider("Gradient accumulation steps", "accumulation")
                slider("ZeRO stage", "zero_stage")
                f = fields.field("gpus")
                st.number_input(
                    "Data-parallel GPUs", f.min, f.max, step=f.step, **persistent(SECTION, "gpus")
                )
                choice(st.selectbox, "GPU", "gpu", str)
                slider("Runtime overhead (GB)", "overhead_gb")
            model = chosen_model(SECTION)
        will_it_fit(model)

    share_box(SECTION)

    settings = state.section_settings(SECTION)
    view = budget_view(settings, model=model)

    prose(heading("Sketch, then see", SUBHEADER), lessons.text("memory", "sketch"))
    dominant, breaks = lesson_outcomes(settings)
    guessed_term = lesson_prediction("memory.dominant", dominant)
    guessed_break = lesson_prediction("memory.breaks", breaks, scale=True)
    if guessed_term is None or guessed_break is None:
        st.info(lessons.sentence("memory", "locked"), icon=":material/lock:")
    else:
        budget_and_sweep(view, settings, guessed_break[0])
        # Its own controls change only the phase count.
        lesson_section(phase_section)


lesson_page(draw)
