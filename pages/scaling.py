"""Scaling out: five predictions about adding GPUs, five computed results, and one defended plan.

Each part draws its setup and controls and returns what it reveals once its prediction is locked;
the page loops over the parts in lesson order (ui/scaling_evidence.py draws predict, reveal, capture).
"""

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from charts import scaling as charts
from charts.memory import budget_chart
from core.gpus import bytes_per_value, peak_tflops
from core.learner_text import MAX_CHARS
from core.memory.settings import Recomputation, precision_label
from core.scaling import capacity, evidence, layout, narrative, pipeline, quality, throughput
from core.scaling.evidence import current_settings
from core.scaling.outcomes import PartContrasts, part_contrasts
from core.scaling.scenarios import PARTS, Track, load_scaling, track, track_label
from core.settings_schema import section
from ui import state
from ui.links import share_box
from ui.nav import next_link
from ui.scaling_evidence import (
    SECTION,
    Reveal,
    heading,
    prediction_gate,
    records,
    reveal,
    setting_radio,
    setting_slider,
)
from ui.settings import persistent
from ui.tables import arrow_rows

# Number formats of each part's table, by column.
SCALING_FORMATS = {
    "Local batch": "%.2f",
    "Global batch": "%d",
    "Compute (ms)": "%.4g",
    "Communication (ms)": "%.4g",
    "Step (ms)": "%.4g",
    "Speedup (x)": "%.2f",
    "Parallel efficiency": "%.3f",
}
MS_FORMATS = {
    "Compute (ms)": "%.1f",
    "DP communication (ms)": "%.1f",
    "TP communication (ms)": "%.1f",
    "Pipeline bubble (ms)": "%.1f",
    "Step (ms)": "%.1f",
}
PIPELINE_FORMATS = {"Bubble fraction": "%.3f", "Retained activations (GB)": "%.1f", "Memory (GB)": "%.1f"}
QUALITY_FORMATS = {
    "Global batch": "%d",
    "Step (ms)": "%.4g",
    "Steps to target": "%d",
    "Time to target (h)": "%.3g",
}


def context(track: Track) -> None:
    """The chosen track in a box: what it deploys to, what it trains and on which fleet, and whether a
    replica of its training state fits one GPU."""
    fleet, card = track.fleet, track.fleet.card
    _, replica_gb = replica_fits(track)
    with st.container(border=True):
        left, middle, right = st.columns(3)
        left.markdown(f"**Deployed to**  \n{track.deployment_target}")
        middle.markdown(
            f"**Trained upstream**  \n{track.model.name}, {track.model.parameters:,.0f} parameters"
        )
        right.markdown(
            f"**Training fleet**  \n{fleet.name}: {fleet.intra_node_link} inside a node, "
            f"{fleet.inter_node_link} between nodes"
        )
        st.markdown(
            f"{track.note} A full replica of its training state takes **{replica_gb:,.3g} GB**; "
            f"one {card.name} has **{card.memory_gb:,.0f} GB**."
        )


def replica_fits(track: Track) -> tuple[bool, float]:
    """Whether a full replica of the track's training state fits one GPU, and its size in GB."""
    replica_gb = capacity.replica_state_gb(parameters=track.model.parameters, cases=load_scaling().cases)
    return replica_gb <= track.fleet.card.memory_gb, replica_gb


def model_parallel_note(track: Track) -> None:
    """For a track whose model fits on one GPU, say that this part's mechanism is not one it needs."""
    if not track.model_parallel:
        st.caption(
            f":material/info: The {track.label} model fits on one GPU, so it never needs this. "
            "The case shows what the upstream fleet does with a model that does not fit."
        )


def _contrast_note(track: Track) -> None:
    """Point the learner at the other end of the scale: the tiny model after the big one, and back."""
    if track.key == "cloud":
        st.info(
            "**Now try TinyML.** Switch the training context at the top to TinyML and predict again: the "
            "same question with a 200-thousand-parameter model, where fixed costs (kernel launches, link "
            "latency) matter more than bytes.",
            icon=":material/compare_arrows:",
        )
    else:
        st.caption(
            f":material/compare_arrows: Set this beside the Cloud track: the same experiment on an 8B model, "
            f"where the gradients, not fixed costs, set the pace. {track.label} answers from its own numbers."
        )


def strong_vs_weak(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part A: hold the global or the local batch fixed as the pool grows."""
    contrast = parts.a
    st.markdown(
        f"The {track.model.name} job starts on **{track.base_workers} GPUs**. "
        "Choose what stays fixed as the pool grows and how large the larger pool is."
    )
    fits, replica_gb = replica_fits(track)
    if not fits:
        st.warning(
            f"Plain data parallelism cannot run this model: a full replica of its training state is "
            f"{replica_gb:,.0f} GB and one {track.fleet.card.name} holds {track.fleet.card.memory_gb:,.0f} "
            "GB. Read this part as the gradient traffic of sharded data parallelism (ZeRO-1 and ZeRO-2 "
            "all-reduce the same gradient bytes each step); part B shows how sharding makes a model fit.",
            icon=":material/warning:",
        )
    setting_radio("Hold fixed", "mode", labels=throughput.Mode.label_of)
    st.selectbox("Larger pool", track.pools, format_func=track.pool_label, **persistent(SECTION, "pool"))
    return Reveal(
        key=("scaling.A", track.key, contrast.mode, settings["pool"]),
        chart=lambda: charts.efficiency_chart(throughput.scaling_rows(contrast.sweeps)),
        description=narrative.efficiency_chart_description(contrast),
        rows=throughput.scaling_rows({contrast.mode: (contrast.baseline, contrast.result)}),
        formats=SCALING_FORMATS,
        outcome=contrast.outcome,
        summary=narrative.scaling_summary(contrast),
        inputs=_pool_inputs(contrast),
        baseline=throughput.point_record(contrast.baseline),
        result=throughput.point_record(contrast.result),
        fixed=contrast.mode,  # the mode radio above is the decision
        note=lambda: _contrast_note(track),
    )


def making_it_fit(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part B: the 70B capacity case, replicated state against a ZeRO stage and a recomputation choice."""
    cases, fleet = load_scaling().cases, track.fleet
    contrast = parts.b
    st.markdown(
        f"A capacity case on the same fleet: **{cases.capacity.model}**, one "
        f"{cases.capacity.seq_len:,}-token "
        f"sequence per GPU at a time. Tensor parallel splits it over the {contrast.tp} GPUs of each node; "
        f"ZeRO shards the rest over the {contrast.dp} nodes."
    )
    model_parallel_note(track)
    setting_slider("ZeRO stage", "zero_stage", format="ZeRO-%d")
    setting_radio("Activation recomputation", "recompute", labels=Recomputation.label_of)
    plans = (contrast.baseline, contrast.result)
    return Reveal(
        key=("scaling.B", track.key, settings["zero_stage"], settings["recompute"]),
        chart=lambda: budget_chart(
            [(plan.label, plan.terms) for plan in plans],
            device_gb=fleet.card.memory_gb,
            device_label=f"{fleet.card.name} HBM",
            title="Memory per GPU against HBM",
        ),
        description=narrative.memory_chart_description(contrast),
        rows=capacity.plan_rows(plans),
        formats=capacity.PLAN_FORMATS,
        outcome=contrast.outcome,
        summary=narrative.capacity_summary(contrast),
        inputs={"zero_stage": settings["zero_stage"], "recompute": settings["recompute"]},
        baseline=capacity.terms_record(contrast.baseline.terms, contrast.baseline.verdict),
        result=capacity.terms_record(contrast.result.terms, contrast.result.verdict),
        refused=contrast.refused_decisions(),
    )


def parallel_layouts(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part C: the same GPUs with tensor parallel inside a node, across nodes, or beside two pipeline
    stages."""
    cases, fleet = load_scaling().cases, track.fleet
    case = cases.layout
    contrast = parts.c
    st.markdown(
        f"{case.model} on all {fleet.total_gpus} GPUs, {case.global_batch} sequences of "
        f"{case.seq_len:,} tokens "
        f"a step in {case.microbatch_count} microbatches, ZeRO-{case.zero_stage}. The baseline keeps tensor "
        "parallel inside each node. Pick the alternative to set against it."
    )
    model_parallel_note(track)
    setting_radio("Alternative layout", "layout", labels=contrast.layout_label)
    return Reveal(
        key=("scaling.C", track.key, settings["layout"]),
        chart=lambda: charts.overhead_chart(layout.overhead_rows(contrast.timings)),
        description="Communication and bubble time each layout adds to the same compute, stacked per step.",
        rows=layout.layout_rows(contrast.timings),
        formats=MS_FORMATS,
        outcome=contrast.outcome,
        summary=narrative.layout_summary(contrast),
        inputs={"alternative": settings["layout"]},
        baseline=layout.timing_record(contrast.baseline),
        result=layout.timing_record(contrast.result),
    )


def pipeline_bubble(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part D: more fixed-size microbatches shrink the bubble but fill the first stage's memory."""
    cases, fleet = load_scaling().cases, track.fleet
    case = cases.pipeline
    contrast = parts.d
    st.markdown(
        f"{case.model} cut into **{contrast.stages} pipeline stages** (tensor parallel {contrast.tp}, "
        f"{contrast.dp} replicas), microbatches fixed at {contrast.microbatch_size} sequences of "
        f"{case.seq_len:,} tokens. Recomputation: {Recomputation.label_of(case.recompute)}. "
        f"The baseline feeds "
        f"{case.baseline_microbatches} microbatches a step; feed more of the same size."
    )
    model_parallel_note(track)
    setting_slider("Microbatches per step", "microbatches")
    return Reveal(
        key=("scaling.D", track.key, settings["microbatches"]),
        chart=lambda: charts.pipeline_chart(
            pipeline.pipeline_rows(contrast.sweep), hbm_gb=fleet.card.memory_gb
        ),
        description=narrative.pipeline_chart_description(contrast),
        rows=pipeline.pipeline_rows((contrast.baseline, contrast.result)),
        formats=PIPELINE_FORMATS,
        outcome=contrast.outcome,
        summary=narrative.pipeline_summary(contrast),
        inputs={"microbatches": settings["microbatches"]},
        baseline=contrast.baseline.record(),
        result=contrast.result.record(),
    )


def stragglers(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part E: from part A's larger pool, strict synchronisation against dropping slow workers."""
    part_a, comparison = parts.a, parts.e
    step = part_a.result.step
    st.markdown(
        f"Back to {track.model.name} on {part_a.result.workers} GPUs with part A's setup: a global batch of "
        f"{step.global_batch:,.0f} and {step.step_ms:,.3g} ms steps. "
        "Is the shortest step also the fastest way to a given quality?"
    )
    curve, straggler = track.convergence, track.straggler
    st.caption(
        f"Illustrative assumptions, not measurements: steps to target = {curve.minimum_steps:,.0f} × "
        f"(1 + {curve.critical_batch:,.0f} ÷ global batch); dropping slow workers makes a step "
        f"{straggler.step_time_multiplier:.2f}× as long but needs {straggler.work_multiplier:.2f}× the steps."
    )
    rows = quality.quality_rows(comparison)
    return Reveal(
        key=("scaling.E", track.key, settings["mode"], settings["pool"]),
        chart=lambda: charts.time_to_target_chart(rows),
        description="Hours each straggler policy takes to reach the same quality target.",
        rows=rows,
        formats=QUALITY_FORMATS,
        outcome=comparison.winner,
        summary=narrative.quality_summary(comparison),
        inputs=_pool_inputs(part_a),  # part E's figures stand on part A's choices
        baseline=quality.policy_record(comparison.strict),
        result=quality.policy_record(comparison.drop),
    )


def _pool_inputs(part_a: throughput.ScalingContrast) -> dict[str, Any]:
    return {"mode": part_a.mode, "workers": part_a.result.workers}


PART_VIEWS: dict[str, Callable[[Track, Mapping[str, Any], PartContrasts], Reveal]] = {
    "A": strong_vs_weak,
    "B": making_it_fit,
    "C": parallel_layouts,
    "D": pipeline_bubble,
    "E": stragglers,
}


def assumptions(track: Track) -> None:
    """Every assumption behind the numbers, with the figures it uses, and the sources."""
    cases, fleet, card = load_scaling().cases, track.fleet, track.fleet.card
    peak = peak_tflops(card, cases.dtype)
    with st.expander("How the numbers are made, and what they leave out", icon=":material/functions:"):
        st.markdown(
            f"""
- **Compute.** A training step costs three forward passes (the backward pass is about twice the forward). Each
  GPU runs at {cases.compute_efficiency:.0%} of the {card.name}'s {cases.dtype} peak of {peak:,.0f} TFLOP/s.
- **Links.** A ring all-reduce moves 2 (N − 1) / N times the data through every GPU. A group that fits in one
  node runs at {fleet.intra_node_gb_per_s:,.0f} GB/s each way ({fleet.intra_node_link}); once it spans nodes
  every GPU is held to {fleet.inter_node_gb_per_s:,.1f} GB/s ({fleet.inter_node_link}). Gradients travel in
  {cases.dtype} ({bytes_per_value(cases.dtype)} bytes a value). Each all-reduce also pays a fixed latency per
  hop, 2 (N − 1) hops of {fleet.intra_node_latency_us:g} µs inside a node or {fleet.inter_node_latency_us:g}
  µs across nodes (the α–β model). Contention and any overlap with compute are left out: compute and
  communication run back to back, which is the worst case.
- **Kernel-launch floor.** A step never computes faster than its {track.model.kernels_per_step:,} kernels one
  after another at {throughput.launch_floor_ms(1) * 1e3:.1f} µs each, the smallest kernel time measured on an
  H200: for a small model this floor, not the arithmetic, sets the
  compute time. {load_scaling().lab.latency_note}
- **Memory (parts B and D)** comes from the same model as the Memory budget page:
  {precision_label(cases.precision)}, {cases.optimizer} state, saved activations counted after Korthikanti
  et al. with standard attention, 1 GB of workspace and 1 GB of runtime overhead. Tensor parallel and
  pipeline stages split the model state evenly before ZeRO shards it; we assume sequence parallelism, so
  tensor parallel also splits every saved activation. Communication buffers are a gradient bucket of
  {capacity.GRADIENT_BUCKET_FRACTION:.0%} of a GPU's gradients, plus a send and a receive buffer of one
  microbatch's hidden states between pipeline stages.
- **Layouts (part C).** Tensor parallel costs {layout.TP_ALLREDUCES_PER_LAYER} all-reduces of one
  microbatch's activations per layer (two forward, two backward). ZeRO-3 moves
  {layout.ZERO3_TRAFFIC_FACTOR}× the data-parallel traffic of plain all-reduce. Point-to-point sends between
  pipeline stages are left out.
- **Pipeline (parts C and D).** With p stages and m microbatches the bubble is (p − 1) / (m + p − 1) of the
  step. The first stage holds min(m, p) microbatches of activations at its peak; the output layer's logits
  sit on the last stage and are left out of the busiest stage.
- **Time to quality (part E)** is illustrative: a diminishing-returns batch curve (McCandlish et al. 2018)
  and made-up straggler multipliers. Replace both with measurements before deciding anything real.
"""
        )
        st.caption(f"Fleet: {fleet.source}")
        st.caption(f"Model: {track.model.source}")


def synthesis(track: Track, settings: Mapping[str, Any]) -> None:
    """Each part's evidence status, the plan form, and whether the synthesis is ready."""
    st.markdown(
        "Recommend one plan for this track, name the alternative you rejected, say what would make "
        "you look again "
        "and what this model cannot tell you. Ground the rationale in numbers from your snapshots."
    )
    data = load_scaling()
    snapshots = records(evidence.SNAPSHOTS)
    statuses = evidence.statuses(snapshots, settings)
    st.dataframe(
        arrow_rows(
            {
                "Part": data.parts[part].title,
                "Original prediction": data.parts[part].options[snapshots[part]["prediction"]]
                if statuses[part] != evidence.MISSING
                else "—",
                "Evidence": statuses[part],
            }
            for part in PARTS
        ),
        hide_index=True,
    )
    saved = evidence.saved_synthesis(state.record(evidence.SYNTHESIS))
    choices = {
        "plan": ("Recommended training plan", data.synthesis.plan_labels(track)),
        "rejected": ("Rejected alternative", data.synthesis.plan_labels(track)),
        "trigger": ("What would reopen the decision", data.synthesis.triggers),
        "limitation": ("The limitation that remains", data.synthesis.limitations),
    }
    with st.form(key="scaling.synthesis.form"):
        for name, (label, options) in choices.items():
            keys = list(options)
            index = keys.index(saved[name]) if saved.get(name) in keys else None
            st.radio(
                label,
                keys,
                index=index,
                format_func=options.get,
                key=f"scaling.synthesis.{name}",
                disabled=state.read_only(),
            )
        st.text_area(
            "Quantified rationale",
            value=saved.get("rationale", ""),
            placeholder=(
                "Cite figures from your snapshots, say what the rejected plan would cost, "
                "and when you would look again."
            ),
            key="scaling.synthesis.rationale",
            max_chars=MAX_CHARS,
            disabled=state.read_only(),
        )
        st.form_submit_button(
            "Save synthesis",
            on_click=_save_synthesis,
            key="scaling.synthesis.save",
            disabled=state.read_only(),
        )
    readiness = evidence.synthesis_readiness(saved, statuses)
    if readiness.ready:
        st.success(
            "**Ready for the report.** Five current snapshots and a complete, quantified plan.",
            icon=":material/task_alt:",
        )
    else:
        st.warning(
            "**Not ready yet.**\n\n" + "\n".join(f"- {problem}" for problem in readiness.problems),
            icon=":material/pending:",
        )


def _save_synthesis() -> None:
    names = (*evidence.SYNTHESIS_CHOICES, "rationale")
    state.store_record(
        evidence.SYNTHESIS, {name: st.session_state.get(f"scaling.synthesis.{name}") for name in names}
    )


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
tracks = section(SECTION).field("track").choices
st.selectbox("Training context", tracks, format_func=track_label, **persistent(SECTION, "track"))
settings = current_settings(state.section_settings(SECTION))
chosen = track(settings["track"])
context(chosen)
assumptions(chosen)

contrasts = part_contrasts(settings)
*part_tabs, synthesis_tab = st.tabs([*(part.tab for part in load_scaling().parts.values()), "Synthesis"])
for part, tab in zip(PARTS, part_tabs, strict=True):
    with tab:
        heading(part)
        shown = PART_VIEWS[part](chosen, settings, contrasts)
        if prediction_gate(part):
            reveal(part, shown, settings)
with synthesis_tab:
    synthesis(chosen, settings)
share_box(SECTION)
st.subheader("Three things to keep")
st.markdown("\n".join(f"- {takeaway}" for takeaway in lab.takeaways))
next_link("pages/scaling.py")
