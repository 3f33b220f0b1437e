"""Memory budget: why training holds more than inference, the terms of a budget, and which one to cut."""

import streamlit as st

from charts.estimate_check import estimate_check_chart
from charts.memory import (
    budget_chart,
    budget_datasets,
    budget_shape,
    sweep_chart,
    sweep_datasets,
    sweep_shape,
)
from core.estimate_check.view import check_view, config_label
from core.gpus import gpu
from core.memory import BudgetOptimizer, SweepAxis
from core.memory import settings as phase_choices
from core.memory.detailed import AttentionKind, Recomputation, precision_label
from core.memory.lesson import LessonDtype
from core.memory.view import (
    ESTIMATE_LABELS,
    SECTION,
    BudgetView,
    budget_view,
    bytes_per_parameter_card,
    lesson_outcomes,
    lesson_two_byte_adam_bytes,
    phase_view,
    reference_rows,
    reference_summary,
)
from core.models import resolve_model
from core.settings_schema import section
from ui import state
from ui.charts import draw
from ui.links import share_box
from ui.marked import marked_question
from ui.model_source import chosen_model
from ui.nav import next_link
from ui.prediction import lesson_prediction
from ui.settings import persistent
from ui.tables import arrow_rows

MEASURED_CONFIG = "measured_config"
fields = section(SECTION)


def slider(label: str, name: str, **extra) -> None:
    f = fields.field(name)
    st.slider(label, f.min, f.max, step=f.step, **extra, **persistent(SECTION, name))


def choice(widget, label: str, name: str, format_func, **extra) -> None:
    widget(label, fields.field(name).choices, format_func=format_func, **extra, **persistent(SECTION, name))


def budget_and_sweep(view: BudgetView, settings: dict, guessed_break: str) -> None:
    """The budget bar, its verdict and sums, the bytes-per-parameter card, then the sweep over the guess."""
    verdict = view.verdict
    st.metric("Parameters", f"{view.parameter_count:,}")
    bars = [(ESTIMATE_LABELS[view.estimate], view.terms)]
    draw(
        ("memory.budget", *budget_shape(bars)),
        lambda: budget_chart(
            bars,
            device_gb=verdict.device_gb,
            device_label=view.device_label,
            title="Peak training memory per GPU",
            gb_legend=True,
        ),
        datasets=budget_datasets(bars, device_gb=verdict.device_gb, device_label=view.device_label),
        description=(
            f"Stacked bar of the memory terms, {verdict.total_gb:.1f} GB in all, against the "
            f"{view.device_label}."
        ),
    )
    st.caption(
        f"Stacked bar of the memory terms, {verdict.total_gb:.1f} GB in all, with a dashed line at the "
        f"{view.device_label}."
    )
    if verdict.fits:
        st.success(
            f"**Fits:** {verdict.total_gb:.1f} GB on the {view.device_label}, with {verdict.headroom_gb:.1f} "
            f"GB to spare. The largest term is **{verdict.largest_label.lower()}** at "
            f"{verdict.largest_gb:.1f} GB ({verdict.largest_share_percent:.0f}% of the total); if it has to "
            f"shrink, {verdict.lever}.",
            icon=":material/check_circle:",
        )
    else:
        st.error(
            f"**Out of memory:** this needs {verdict.total_gb:.1f} GB, {verdict.over_gb:.1f} GB more than "
            f"the {view.device_label} holds. The largest term is **{verdict.largest_label.lower()}** at "
            f"{verdict.largest_gb:.1f} GB ({verdict.largest_share_percent:.0f}% of the total), so cut that "
            f"first: {verdict.lever}.",
            icon=":material/error:",
        )
    with st.expander("The sums behind this budget", expanded=True):
        st.markdown("\n".join(f"- {line}" for line in view.assumptions))
    with st.container(border=True):
        st.markdown(
            "**Bytes per parameter: the conventions you will meet** (model state only, before activations)"
        )
        st.markdown(
            "\n".join(f"- **{row.bytes_per_parameter}**: {row.meaning}" for row in bytes_per_parameter_card())
        )
        st.markdown(
            "A rule of thumb worth keeping: FP32 Adam costs "
            f"**{bytes_per_parameter_card()[3].bytes_per_parameter} bytes per parameter**, so a billion "
            "parameters need about 16 GB before a single activation is saved. Then remember the five terms, "
            "not the 16: activations and workspace come on top, and which term dominates depends on the run. "
            "A small model on long sequences is mostly saved activations; a large model on short sequences "
            "is mostly optimizer state."
        )
        st.caption(
            "This page's lesson estimate follows the source lesson's convention: the optimizer state stays "
            "in FP32 and there is no FP32 master copy, so a 2-byte dtype with Adam counts "
            f"{lesson_two_byte_adam_bytes()} bytes a parameter (2 + 2 + 8). Real mixed-precision training "
            "keeps the master copy; the detailed estimate counts it."
        )
    if view.estimate == "lesson":
        st.caption(
            "Try it: double the sequence length twice with the model unchanged and watch which bar grows; "
            "then switch to a 2-byte dtype and see that the optimizer state stays the same size."
        )

    st.header("Where does it break?")
    choice(st.radio, "Grow", "sweep_axis", SweepAxis.label_of, horizontal=True)
    sweep = view.sweep
    # The guess is a sequence length, so it is drawn only on the sequence-length sweep.
    guess = int(guessed_break) if guessed_break.isdigit() and settings["sweep_axis"] == "seq_len" else None
    draw(
        ("memory.sweep", *sweep_shape(sweep, guessed=guess is not None)),
        lambda: sweep_chart(
            sweep,
            device_label=view.device_label,
            title=f"Peak memory as {sweep.axis_label.lower()} grows",
            guess=guess,
        ),
        datasets=sweep_datasets(sweep, device_label=view.device_label, guess=guess),
        description=(
            f"Peak memory against {sweep.axis_label.lower()}, with the device line and the breaking point."
        ),
    )
    if sweep.first_failing is None:
        st.caption(
            f"Line of peak memory against {sweep.axis_label.lower()}: it stays under the device line up to "
            f"{sweep.values[-1]:,}."
        )
    elif sweep.largest_fitting is None:
        st.caption(
            f"Line of peak memory against {sweep.axis_label.lower()}: even {sweep.values[0]:,} is over the "
            "device line."
        )
    else:
        st.caption(
            f"Line of peak memory against {sweep.axis_label.lower()}: it crosses the device line between "
            f"{sweep.largest_fitting:,} (fits) and {sweep.first_failing:,} (marked, out of memory), "
            "everything else as above."
        )


def phase_section() -> None:
    """Draw the phase-by-phase count with its own controls."""
    st.header("Phase by phase: the careful count")
    st.markdown(
        "The rough rule adds every term as if all were alive at once. A real step is three phases, and each "
        "has its own peak: forward keeps activations and ends in the loss, which upcasts the logits to FP32; "
        "backward starts with two more logit-sized gradients and trades activations for gradients block by "
        "block; the optimizer step holds weights, gradients and state, plus its own temporaries. Pick the "
        "code you would really run: the count follows it tensor by tensor. The batch and sequence length are "
        "the sliders above."
    )
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
        choice(st.selectbox, "Precision", "phase_precision", phase_choices.precision_label)
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
        draw(
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
            description="Three stacked bars, one per phase of a training step, against the device.",
        )
        (st.success if phases.verdict.startswith("Fits") else st.error)(phases.verdict)
        st.table(
            arrow_rows(list(phases.rows)), hide_index=True, alt="Each phase's own peak and when it happens."
        )
        st.subheader("Three answers")
        st.markdown(
            "The same question answered three ways: the lesson's rough rule, the careful count above, and "
            "what an H200 measured when the reference ran this exact setup."
        )
        st.table(
            arrow_rows(list(phases.answers)),
            hide_index=True,
            alt="The rough rule, the careful count and the H200 measurement side by side.",
        )


def estimate_check_section() -> None:
    """Pick a measured run; show the estimate next to PyTorch's bytes as a table and a chart, and what the
    gaps are."""
    st.header("How close is this estimate?")
    st.markdown(
        "An estimate is only worth as much as its distance from the real thing. We trained tiny "
        "GPT-2-style and "
        "Llama-style models for real with PyTorch on a CPU and counted the bytes of every tensor "
        "each term holds; "
        "`tools/measure_memory.py` did the measuring, and the app reads its results. Pick a run to see the "
        "detailed estimate for exactly that setup next to what PyTorch kept."
    )
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
    draw(
        ("estimate_check", chosen),
        lambda: estimate_check_chart(view.check, title="Estimate and PyTorch, term by term (bytes)"),
        description=view.chart_description,
    )
    st.caption(view.chart_description)
    st.markdown(view.gap_text)
    st.info(view.summary_text, icon=":material/fact_check:")
    with st.expander("Where the estimate is furthest off, over every measured run"):
        st.table(arrow_rows(view.worst_table), hide_index=True)
    st.subheader("On a GPU: the phase model against an H200")
    st.markdown(
        "The CPU runs above check the fused-kernel count tensor by tensor. The phase model of the careful "
        "count was checked on a real GPU: Hugging Face models trained on an H200, "
        "`torch.cuda.max_memory_allocated()` read after forward, after backward and after the optimizer step "
        "(`tools/measure_memory.py --gpu` repeats the measurement on any CUDA machine)."
    )
    st.table(
        arrow_rows(list(reference_rows())),
        hide_index=True,
        alt="Each H200 reference setup: the estimated and measured peak after each phase.",
    )
    st.info(reference_summary(), icon=":material/memory:")


st.title("Memory budget")
st.markdown(
    "A model that serves predictions comfortably on one GPU can fail to train on the same GPU. "
    "This page adds up where training memory goes, shows which term is the biggest, and names the "
    "setting that shrinks that term."
)

st.header("Training keeps what inference throws away")
marked_question("c3")
st.markdown(
    "During inference each intermediate tensor is dead as soon as the next operation has read it, so "
    "the framework frees it at once; `torch.no_grad()` is the promise that nothing will need it later.\n\n"
    "Training breaks that promise. For a layer $y = xW$, the weight gradient is "
    "$\\partial L/\\partial W = x^\\top \\, \\partial L/\\partial y$: the backward pass needs the input $x$ "
    "that the forward pass saw. Autograd therefore keeps $x$ from the moment forward makes it until "
    "backward gets back to that layer, which is most of the step. No tensor is bigger than at inference; "
    "they live much longer, so more of them exist at the same moment, and the allocator fails at that "
    "peak.\n\n"
    "That is also why a run can go out of memory with the model untouched: a larger batch or longer "
    "sequences enlarge every saved tensor. **Activation checkpointing** is the deliberate trade: keep "
    "only a few tensors, recompute the others during backward. Memory drops sharply for roughly 30% more "
    "compute."
)

st.header("Where the memory goes")
marked_question("c4")
st.markdown(
    "Weights are only one claim on the device: parameters, gradients, optimizer state, saved activations "
    "and workspace all need room at the same time. Which term dominates depends on the model and on how "
    "you run it. Hidden size and depth decide how many parameters exist; batch and sequence length leave "
    "the model exactly as it is."
)
# The detailed estimate takes its number format and device from its own controls below, so the
# lesson's two radios are hidden there rather than left live and ignored.
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
        choice(st.radio, "Device memory", "device_gb", "{} GB".format, horizontal=True)
    choice(st.radio, "Estimate", "estimate", ESTIMATE_LABELS.__getitem__, horizontal=True)

model = None  # the lesson's estimate sizes the sliders' shape only
if detailed:
    with st.container(border=True):
        st.subheader("Make it realistic")
        st.caption(
            "Number format and device come from the mixed-precision and GPU choices here; B is now the "
            "micro-batch one GPU processes at once."
        )
        left, right = st.columns(2)
        with left:
            choice(st.selectbox, "Model", "model", str, help="custom uses the hidden size and layers above.")
            choice(st.selectbox, "Mixed precision", "precision", precision_label)
            choice(st.radio, "Activation recomputation", "recompute", Recomputation.label_of)
            choice(st.radio, "Attention", "attention", AttentionKind.label_of)
        with right:
            slider("Gradient accumulation steps", "accumulation")
            slider("ZeRO stage", "zero_stage")
            f = fields.field("gpus")
            st.number_input("Data-parallel GPUs", f.min, f.max, step=f.step, **persistent(SECTION, "gpus"))
            choice(st.selectbox, "GPU", "gpu", str)
            slider("Runtime overhead (GB)", "overhead_gb")
        model = chosen_model(SECTION)

share_box(SECTION)

settings = state.section_settings(SECTION)
view = budget_view(settings, model=model)

st.subheader("Sketch, then see")
st.markdown(
    "Before the budget is drawn, commit to two guesses about the lesson estimate of the model set above "
    "(on the device chosen in the lesson estimate). The sweep further down is drawn over your second guess."
)
dominant, breaks = lesson_outcomes(settings)
guessed_term = lesson_prediction("memory.dominant", dominant)
guessed_break = lesson_prediction("memory.breaks", breaks, scale=True)
if guessed_term is None or guessed_break is None:
    st.info(
        "The budget, the sweep and the phase-by-phase count appear once both guesses are locked.",
        icon=":material/lock:",
    )
else:
    budget_and_sweep(view, settings, guessed_break[0])
    phase_section()

st.header("What this still leaves out")
st.markdown(
    "- **Temporary spikes.** Kernels allocate scratch tensors for a moment (a fused optimizer step, a large "
    "matrix multiply, the loss over a big vocabulary); the peak can land inside one of them.\n"
    "- **Lazy optimizer state.** Adam creates its two buffers at the first `optimizer.step()`, so a run "
    "can pass forward and backward and still fail one call later.\n"
    "- **Distributed buffers.** Gradient buckets and NCCL's own memory for data parallelism, and the extra "
    "copies tensor and pipeline parallelism bring.\n"
    "- **The allocator.** PyTorch caches freed blocks: `memory_reserved()` exceeds `memory_allocated()`, "
    "and a request fails when no free block is large enough, even with gigabytes free in pieces.\n\n"
    "An estimate tells you which terms to count and which one to cut first. The real numbers come from "
    "measuring: `torch.cuda.max_memory_allocated()` and the memory snapshot tools."
)

estimate_check_section()
next_link("pages/memory_budget.py")
