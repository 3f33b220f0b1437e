"""Scaling out: five predictions about adding GPUs, five computed results, and one defended plan.

Each part draws its setup and controls and returns what it reveals once its prediction is locked;
the page loops over the parts in lesson order (ui/scaling_evidence.py draws predict, reveal, capture).
"""

import functools
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from core import lessons
from core.gpus import bytes_per_value, peak_tflops
from core.kernel_times import small_kernel_floor_us
from core.learner_text import MAX_CHARS
from core.memory.settings import Recomputation, precision_label
from core.scaling import capacity, decisions, evidence, layout, narrative, pipeline, quality, throughput
from core.scaling.evidence import current_settings
from core.scaling.outcomes import PartContrasts, part_contrasts
from core.scaling.scenarios import load_scaling, track, track_label
from core.scaling.tracks import Track
from core.scaling.wording import PARTS
from core.settings_schema import section
from core.units import count_label, fixed_label, significant
from ui import state
from ui.frame import lesson_page, lesson_section
from ui.links import share_box
from ui.nav import next_link
from ui.prose import SUBHEADER, TITLE, heading, prose
from ui.scaling_charts import part_chart, part_description
from ui.scaling_evidence import (
    SECTION,
    Reveal,
    part_heading,
    prediction_gate,
    records,
    reveal,
    setting_radio,
    setting_slider,
)
from ui.settings import persistent
from ui.tables import Format, arrow_rows

PART_TABS = "scaling.part"  # which tab is open: a part's label, or "Synthesis"
ASSUMPTIONS_OPEN = "scaling.assumptions_open"

# How each part's table writes its figures, by column: counts whole with thousands separators, times in
# ms to three significant figures as the sentences beside them, fractions and GB to fixed decimals.
ONE_DECIMAL = functools.partial(fixed_label, places=1)
SCALING_FORMATS: dict[str, Format] = {
    "Local batch": count_label,
    "Global batch": count_label,
    "Compute (ms)": significant,
    "Communication (ms)": significant,
    "Step (ms)": significant,
    "Speedup (x)": functools.partial(fixed_label, places=2),
    "Parallel efficiency": functools.partial(fixed_label, places=3),
}
MS_FORMATS: dict[str, Format] = {
    name: ONE_DECIMAL
    for name in (
        "Compute (ms)",
        "DP communication (ms)",
        "TP communication (ms)",
        "Pipeline bubble (ms)",
        "Step (ms)",
    )
}
PIPELINE_FORMATS: dict[str, Format] = {
    "Bubble fraction": functools.partial(fixed_label, places=3),
    "Retained micro-batches": count_label,
    "Retained activations (GB)": ONE_DECIMAL,
    "Memory (GB)": ONE_DECIMAL,
}
WHOLE_NUMBERS = ("Global batch", "Steps to target")  # part E's other figures carry three significant digits


def context(track: Track) -> None:
    """The chosen track in a box: what it deploys to, what it trains and on which fleet, and whether a
    replica of its training state fits one GPU."""
    fleet, card = track.fleet, track.fleet.card
    _, replica_gb = replica_fits(track)
    with st.container(border=True):
        left, middle, right = st.columns(3)
        left.markdown(lessons.sentence("scaling", "deployed_to", target=track.deployment_target))
        middle.markdown(
            lessons.sentence(
                "scaling", "trained_upstream", model=track.model.name, parameters=track.model.parameters
            )
        )
        right.markdown(
            lessons.sentence(
                "scaling",
                "training_fleet",
                fleet=fleet.name,
                intra_link=fleet.intra_node_link,
                inter_link=fleet.inter_node_link,
            )
        )
        st.markdown(
            lessons.sentence(
                "scaling",
                "replica",
                note=track.note,
                replica_gb=replica_gb,
                gpu=card.name,
                gpu_gb=card.memory_gb,
            )
        )


def replica_fits(track: Track) -> tuple[bool, float]:
    """Whether a full replica of the track's training state fits one GPU, and its size in GB."""
    replica_gb = capacity.replica_state_gb(parameters=track.model.parameters, cases=load_scaling().cases)
    return replica_gb <= track.fleet.card.memory_gb, replica_gb


def model_parallel_note(track: Track) -> None:
    """For a track whose model fits on one GPU, say that this part's mechanism is not one it needs."""
    if not track.model_parallel:
        st.caption(lessons.sentence("scaling", "model_parallel_not_needed", track=track.label))


def _contrast_note(track: Track) -> None:
    """Point the learner at the other end of the scale: the tiny model after the big one, and back."""
    if track.key == "cloud":
        st.info(lessons.sentence("scaling", "now_try_tinyml"), icon=":material/compare_arrows:")
    else:
        st.caption(lessons.sentence("scaling", "beside_cloud", track=track.label))


def strong_vs_weak(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part A: hold the global or the local batch fixed as the pool grows."""
    contrast = parts.a
    st.markdown(
        lessons.sentence("scaling", "part_a_setup", model=track.model.name, workers=track.base_workers)
    )
    fits, replica_gb = replica_fits(track)
    if not fits:
        st.warning(
            lessons.sentence(
                "scaling",
                "no_plain_replica",
                replica_gb=replica_gb,
                gpu=track.fleet.card.name,
                gpu_gb=track.fleet.card.memory_gb,
            ),
            icon=":material/warning:",
        )
    setting_radio("Hold fixed", "mode", labels=throughput.Mode.label_of)
    st.selectbox("Larger pool", track.pools, format_func=track.pool_label, **persistent(SECTION, "pool"))
    return Reveal(
        chart=part_chart("A", parts, settings),
        description=part_description("A", parts),
        rows=throughput.scaling_rows({contrast.mode: (contrast.baseline, contrast.result)}),
        formats=SCALING_FORMATS,
        columns_by="Workers",
        header="{} GPUs",
        outcome=contrast.outcome,
        summary=lessons.sentence("scaling", "part_a_summary", **narrative.scaling_figures(contrast)),
        inputs=_pool_inputs(contrast),
        baseline=throughput.point_record(contrast.baseline),
        result=throughput.point_record(contrast.result),
        fixed=contrast.mode,  # the mode radio above is the decision
        note=lambda: _contrast_note(track),
    )


def making_it_fit(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part B: the 70B capacity case on part A's larger pool, replicated state against a ZeRO stage and a
    recomputation choice."""
    cases = load_scaling().cases
    contrast = parts.b
    st.markdown(
        lessons.sentence(
            "scaling",
            "part_b_setup",
            gpus=contrast.gpus,
            model=cases.capacity.model,
            seq_len=cases.capacity.seq_len,
            tp=contrast.tp,
            dp=contrast.dp,
        )
    )
    model_parallel_note(track)
    setting_slider("ZeRO stage", "zero_stage", format="ZeRO-%d")
    setting_radio("Activation recomputation", "recompute", labels=Recomputation.label_of)
    plans = (contrast.baseline, contrast.result)
    return Reveal(
        chart=part_chart("B", parts, settings),
        description=part_description("B", parts),
        rows=capacity.plan_rows(plans),
        formats=capacity.PLAN_FORMATS,
        columns_by="Plan",
        outcome=contrast.outcome,
        summary=(
            lessons.sentence("scaling", "part_b_fits", **narrative.capacity_figures(contrast))
            if contrast.result.verdict.fits
            else lessons.sentence("scaling", "part_b_does_not_fit", **narrative.capacity_figures(contrast))
        ),
        inputs={
            "zero_stage": settings["zero_stage"],
            "recompute": settings["recompute"],
            "workers": contrast.gpus,
        },
        baseline=capacity.terms_record(contrast.baseline.terms, contrast.baseline.verdict),
        result=capacity.terms_record(contrast.result.terms, contrast.result.verdict),
        refused={decision: _refusal(contrast, decision) for decision in contrast.refused_decisions},
    )


def _refusal(contrast: capacity.CapacityContrast, decision: str) -> str:
    """Why part B's refused `decision` cannot be captured, in the learner's words."""
    figures = narrative.refusal_figures(contrast, decision)
    if decision == "none":
        return lessons.sentence("scaling", "refused_no_plan", **figures)
    if contrast.lightest_fit is None:
        return lessons.sentence("scaling", "refused_shard_nothing_fits", **figures)
    return lessons.sentence("scaling", "refused_shard", **figures)


def _refused(refusals: decisions.Refusals) -> dict[str, str]:
    """Each decision the evidence rules out, with the sentence that says which figures rule it out."""
    return {
        decision: lessons.sentence("scaling", name, **figures)
        for decision, (name, figures) in refusals.items()
    }


def parallel_layouts(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part C: the same GPUs with tensor parallel inside a node, across nodes, or beside two pipeline
    stages."""
    cases, fleet = load_scaling().cases, track.fleet
    case = cases.layout
    contrast = parts.c
    st.markdown(
        lessons.sentence(
            "scaling",
            "part_c_setup",
            model=case.model,
            gpus=fleet.total_gpus,
            global_batch=case.global_batch,
            seq_len=case.seq_len,
            micro_batches=case.micro_batch_count,
            zero_stage=case.zero_stage,
        )
    )
    model_parallel_note(track)
    setting_radio("Alternative layout", "layout", labels=contrast.layout_label)
    return Reveal(
        chart=part_chart("C", parts, settings),
        description=part_description("C", parts),
        rows=layout.layout_rows(contrast.timings),
        formats=MS_FORMATS,
        columns_by="Layout",
        outcome=contrast.outcome,
        summary=_layout_summary(contrast),
        inputs={"alternative": settings["layout"]},
        baseline=layout.timing_record(contrast.baseline),
        result=layout.timing_record(contrast.result),
        refused=_refused(decisions.placement_refusals(contrast)),
    )


def _layout_summary(contrast: layout.LayoutContrast) -> str:
    """Part C's verdict: the selected alternative against the baseline, and why the two-stage pipeline
    wins where it does (the same tensor parallel as the baseline: the gradients it all-reduces differ)."""
    two_stage = lessons.sentence(
        "scaling", "part_c_two_stage_summary", **narrative.two_stage_figures(contrast)
    )
    if contrast.alternative == "pipeline":
        return two_stage
    selected = lessons.sentence("scaling", "part_c_summary", **narrative.layout_figures(contrast))
    return f"{selected} {two_stage}" if contrast.outcome == "pipeline" else selected


def pipeline_bubble(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part D: more fixed-size micro-batches shrink the bubble but fill the first stage's memory."""
    case = load_scaling().cases.pipeline
    contrast = parts.d
    st.markdown(
        lessons.sentence(
            "scaling",
            "part_d_setup",
            model=case.model,
            stages=contrast.stages,
            tp=contrast.tp,
            dp=contrast.dp,
            micro_batch_size=contrast.micro_batch_size,
            seq_len=case.seq_len,
            recompute=Recomputation.label_of(case.recompute),
            baseline_micro_batches=case.baseline_micro_batches,
        )
    )
    model_parallel_note(track)
    setting_slider("Micro-batches per step", "micro_batches")
    return Reveal(
        chart=part_chart("D", parts, settings),
        description=part_description("D", parts),
        rows=pipeline.pipeline_rows((contrast.baseline, contrast.result)),
        formats=PIPELINE_FORMATS,
        columns_by="Micro-batches",
        header="{} micro-batches",
        outcome=contrast.outcome,
        summary=lessons.sentence("scaling", "part_d_summary", **narrative.pipeline_figures(contrast)),
        inputs={"micro_batches": settings["micro_batches"]},
        baseline=contrast.baseline.record(),
        result=contrast.result.record(),
        refused=_refused(decisions.pipeline_refusals(contrast)),
    )


def stragglers(track: Track, settings: Mapping[str, Any], parts: PartContrasts) -> Reveal:
    """Part E: from part A's larger pool, strict synchronisation against dropping slow workers."""
    part_a, comparison = parts.a, parts.e
    st.markdown(
        lessons.sentence("scaling", "part_e_setup", **narrative.straggler_setup_figures(part_a, track))
    )
    curve, straggler = track.convergence, track.straggler
    st.caption(
        lessons.sentence(
            "scaling",
            "part_e_assumptions",
            minimum_steps=curve.minimum_steps,
            critical_batch=curve.critical_batch,
            fleet=track.fleet.name,
            lag_ms=straggler.lag_ms,
            work_multiplier=straggler.work_multiplier,
        )
    )
    table = quality.quality_table(comparison)
    return Reveal(
        chart=part_chart("E", parts, settings),
        description=part_description("E", parts),
        rows=table,
        formats={name: count_label if name in WHOLE_NUMBERS else significant for name in table[0]},
        columns_by="Policy",
        outcome=comparison.winner,
        summary=lessons.sentence("scaling", "part_e_summary", **narrative.quality_figures(comparison)),
        inputs=_pool_inputs(part_a),  # part E's figures stand on part A's choices
        baseline=quality.policy_record(comparison.strict),
        result=quality.policy_record(comparison.drop),
        refused=_refused(decisions.straggler_refusals(comparison)),
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
    box = st.expander(
        "How the numbers are made, and what they leave out",
        icon=":material/functions:",
        key=ASSUMPTIONS_OPEN,
        on_change="rerun",
    )
    if not box.open:  # a long text most reruns would send unread
        return
    with box:
        st.markdown(
            lessons.text(
                "scaling",
                "assumptions",
                efficiency=cases.compute_efficiency,
                gpu=card.name,
                dtype=cases.dtype,
                peak_tflops=peak,
                intra_gb_per_s=fleet.intra_node_gb_per_s,
                intra_link=fleet.intra_node_link,
                inter_gb_per_s=fleet.inter_node_gb_per_s,
                inter_link=fleet.inter_node_link,
                value_bytes=bytes_per_value(cases.dtype),
                intra_latency_us=fleet.intra_node_latency_us,
                inter_latency_us=fleet.inter_node_latency_us,
                kernels=track.model.kernels_per_step,
                kernel_floor_us=small_kernel_floor_us(),
                precision=precision_label(cases.precision),
                optimizer=cases.optimizer,
                bucket_fraction=capacity.GRADIENT_BUCKET_FRACTION,
                tp_allreduces=layout.TP_ALLREDUCES_PER_LAYER,
                zero3_factor=layout.ZERO3_TRAFFIC_FACTOR,
                lag_ms=track.straggler.lag_ms,
            )
        )
        st.caption(lessons.sentence("scaling", "fleet_source", source=fleet.source))
        st.caption(lessons.sentence("scaling", "model_source", source=track.model.source))


def synthesis(track: Track, settings: Mapping[str, Any]) -> None:
    """Each part's evidence status, the plan form, and whether the synthesis is ready."""
    st.markdown(lessons.sentence("scaling", "synthesis_intro"))
    data = load_scaling()
    snapshots = records(evidence.SNAPSHOTS)
    statuses = evidence.statuses(snapshots, settings)
    st.table(
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
            placeholder=lessons.sentence("scaling", "rationale_placeholder"),
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
        st.success(lessons.sentence("scaling", "synthesis_ready"), icon=":material/task_alt:")
    else:
        problems = "\n".join(f"- {problem}" for problem in _problems(readiness))
        st.warning(
            lessons.sentence("scaling", "synthesis_not_ready", problems=problems), icon=":material/pending:"
        )


def _problems(readiness: evidence.Readiness) -> list[str]:
    """What keeps the synthesis from being ready, one sentence each."""
    problems = []
    if len(readiness.not_current) == 1:
        problems.append(lessons.sentence("scaling", "capture_part", parts=readiness.not_current[0]))
    elif readiness.not_current:
        problems.append(lessons.sentence("scaling", "capture_parts", parts=", ".join(readiness.not_current)))
    if readiness.unchosen:
        problems.append(lessons.sentence("scaling", "choose", names=", ".join(readiness.unchosen)))
    if readiness.same_plan:
        problems.append(lessons.sentence("scaling", "same_plan"))
    if readiness.no_rationale:
        problems.append(lessons.sentence("scaling", "write_rationale"))
    if readiness.unquantified:
        problems.append(lessons.sentence("scaling", "quantify_rationale"))
    return problems


def _save_synthesis() -> None:
    names = (*evidence.SYNTHESIS_CHOICES, "rationale")
    state.store_record(
        evidence.SYNTHESIS, {name: st.session_state.get(f"scaling.synthesis.{name}") for name in names}
    )


def draw() -> None:
    """The page's body: the training context, the five parts in their tabs, the synthesis, the takeaways."""
    prose(heading("Scaling out: when do more GPUs stop helping?", TITLE), lessons.text("scaling", "intro"))
    st.caption(lessons.sentence("scaling", "time_guidance"))
    st.markdown(lessons.text("scaling", "objectives"))
    tracks = section(SECTION).field("track").choices
    st.selectbox("Training context", tracks, format_func=track_label, **persistent(SECTION, "track"))
    chosen = track(current_settings(state.section_settings(SECTION))["track"])
    context(chosen)
    assumptions(chosen)
    # A click in a part (or opening another) reruns the parts, not the context above them.
    lesson_section(parts)
    prose(heading("Three things to keep", SUBHEADER), lessons.text("scaling", "takeaways"))
    next_link("pages/scaling.py")


def parts() -> None:
    """The five parts in their tabs (only the open one built), the synthesis, and the share link."""
    settings = current_settings(state.section_settings(SECTION))
    chosen = track(settings["track"])
    contrasts = part_contrasts(settings)
    # Only the open tab is built: a click elsewhere on the page does not rebuild the other four parts.
    *part_tabs, synthesis_tab = st.tabs(
        [*(part.tab for part in load_scaling().parts.values()), "Synthesis"], key=PART_TABS, on_change="rerun"
    )
    for part, tab in zip(PARTS, part_tabs, strict=True):
        if tab.open:
            with tab:
                part_heading(part)
                shown = PART_VIEWS[part](chosen, settings, contrasts)
                if prediction_gate(part, settings):
                    reveal(part, shown, settings)
    if synthesis_tab.open:
        with synthesis_tab:
            synthesis(chosen, settings)
    share_box(SECTION)


lesson_page(draw)
