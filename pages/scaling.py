"""Scaling out: five predictions about adding GPUs, five computed results, and one defended plan."""

import streamlit as st

from charts import scaling as charts
from charts.memory import budget_chart
from core.memory_detailed import RECOMPUTE_LABELS
from core.scaling import capacity, layout, pipeline, quality, throughput
from core.scaling.evidence import current_settings
from core.scaling.scenarios import load_scaling, track
from core.settings_schema import section
from ui import scaling_parts as ui
from ui import state
from ui.links import share_box
from ui.settings import persistent

data, fields = load_scaling(), section("scaling")
cases = data.cases

st.title("Scaling out: when do more GPUs stop helping?")
st.markdown(
    "More GPUs only pay while each one still has enough work to hide the cost of keeping them in step. "
    "Follow one training job through five questions: what to hold fixed, how to make a big model fit, "
    "where each kind of parallelism should run, how to feed a pipeline, and what to do about slow workers. "
    "Predict each result before you see it, capture the evidence, then defend a plan."
)
st.selectbox("Training context", fields.field("track").choices, format_func={key: track(key).label for key in fields.field("track").choices}.get, **persistent("scaling", "track"))
settings = current_settings(state.section_settings("scaling"))
t = track(settings["track"])
fleet, card = t.fleet, t.fleet.card
replica_gb = capacity.replica_state_gb(parameters=t.model.parameters, cases=cases)
with st.container(border=True):
    left, middle, right = st.columns(3)
    left.markdown(f"**Deployed to**  \n{t.deployment_target}")
    middle.markdown(f"**Trained upstream**  \n{t.model.name}, {t.model.parameters:,.0f} parameters")
    right.markdown(f"**Training fleet**  \n{fleet.name}: {fleet.intra_node_link} inside a node, {fleet.inter_node_link} between nodes")
    st.markdown(f"{t.note} A full replica of its training state takes **{replica_gb:,.3g} GB**; one {card.name} has **{card.memory_gb:,.0f} GB**.")
ui.assumptions(t, cases)

tab_a, tab_b, tab_c, tab_d, tab_e, tab_s = st.tabs([*(p.title for p in data.parts.values()), "Synthesis"])
a = throughput.scaling_contrast(t, mode=settings["mode"], pool=settings["pool"], efficiency=cases.compute_efficiency, dtype=cases.dtype)
with tab_a:
    st.markdown(f"The {t.model.name} job starts on **{t.base_workers} GPUs**. Choose what stays fixed as the pool grows and how large the larger pool is.")
    st.radio("Hold fixed", fields.field("mode").choices, format_func=throughput.MODE_LABELS.get, horizontal=True, **persistent("scaling", "mode"))
    st.selectbox("Larger pool", t.pools, format_func={p: f"{t.pool_workers(p)} GPUs" for p in t.pools}.get, **persistent("scaling", "pool"))
    if ui.prediction_gate("A"):
        r = a.result
        ui.result(charts.efficiency_chart(throughput.scaling_rows(a.sweeps)), f"Parallel efficiency of both experiments on {', '.join(map(str, t.worker_counts))} GPUs; the dashed line is ideal scaling.", throughput.scaling_rows({a.mode: (a.baseline, r)}), ui.SCALING_FORMATS)
        ui.verdict("A", a.outcome, f"On {r.workers} GPUs a step takes {r.step.step_ms:,.3g} ms, {r.step.communication_ms:,.3g} ms of it the gradient all-reduce. Useful throughput is {r.speedup:,.2f}× the {t.base_workers}-GPU baseline: a parallel efficiency of {r.efficiency:.2f}.")
        ui.capture("A", settings=settings, inputs={"mode": a.mode, "workers": r.workers}, baseline=throughput.point_record(a.baseline), outcome=throughput.point_record(r), fixed=a.mode)

with tab_b:
    b = capacity.capacity_contrast(fleet=fleet, cases=cases, zero_stage=settings["zero_stage"], recompute=settings["recompute"])
    st.markdown(f"A capacity case on the same fleet: **{cases.capacity.model}**, one {cases.capacity.seq_len:,}-token sequence per GPU at a time. Tensor parallel splits it over the {b.tp} GPUs of each node; ZeRO shards the rest over the {b.dp} nodes.")
    ui.model_parallel_note(t)
    z = fields.field("zero_stage")
    st.slider("ZeRO stage", z.min, z.max, step=z.step, format="ZeRO-%d", **persistent("scaling", "zero_stage"))
    st.radio("Activation recomputation", fields.field("recompute").choices, format_func=RECOMPUTE_LABELS.get, horizontal=True, **persistent("scaling", "recompute"))
    if ui.prediction_gate("B"):
        plans = (b.baseline, b.result)
        chart = budget_chart([(p.label, p.terms) for p in plans], device_gb=card.memory_gb, device_label=f"{card.name} HBM", title="Memory per GPU against HBM")
        ui.result(chart, f"Per-GPU memory of replicated state and ZeRO-{settings['zero_stage']}, term by term, against {card.memory_gb:,.0f} GB of HBM.", capacity.plan_rows(plans), ui.GB_FORMATS)
        v = b.result.verdict
        ui.verdict("B", b.outcome, f"Replicated state needs {b.baseline.verdict.total_gb:,.1f} GB per GPU; {b.result.label} needs {v.total_gb:,.1f} GB of {v.device_gb:,.0f} GB and {'fits' if v.fits else 'does not fit'}. Its largest term is now {v.largest_label.lower()} ({v.largest_gb:,.1f} GB).")
        ui.capture("B", settings=settings, inputs={"zero_stage": settings["zero_stage"], "recompute": settings["recompute"]}, baseline=capacity.terms_record(b.baseline.terms, b.baseline.verdict), outcome=capacity.terms_record(b.result.terms, v))

with tab_c:
    c = layout.layout_contrast(fleet=fleet, case=cases.layout, alternative=settings["layout"], efficiency=cases.compute_efficiency, dtype=cases.dtype)
    st.markdown(f"{cases.layout.model} on all {fleet.total_gpus} GPUs, {cases.layout.global_batch} sequences of {cases.layout.seq_len:,} tokens a step in {cases.layout.microbatch_count} microbatches, ZeRO-{cases.layout.zero_stage}. The baseline keeps tensor parallel inside each node. Pick the alternative to set against it.")
    ui.model_parallel_note(t)
    st.radio("Alternative layout", fields.field("layout").choices, format_func={key: timing.layout.label for key, timing in c.timings.items()}.get, horizontal=True, **persistent("scaling", "layout"))
    if ui.prediction_gate("C"):
        ui.result(charts.overhead_chart(layout.overhead_rows(c.timings)), "Communication and bubble time each layout adds to the same compute, stacked per step.", layout.layout_rows(c.timings), ui.MS_FORMATS)
        ui.verdict("C", c.outcome, f"{c.result.layout.label} runs tensor parallel {'between nodes' if c.result.tp_crosses_nodes else 'inside a node'} and spends {c.result.tp_communication_ms:,.1f} ms a step on it, against {c.baseline.tp_communication_ms:,.1f} ms inside a node. Steps: {c.result.step_ms:,.1f} ms against {c.baseline.step_ms:,.1f} ms.")
        ui.capture("C", settings=settings, inputs={"alternative": settings["layout"]}, baseline=layout.timing_record(c.baseline), outcome=layout.timing_record(c.result))

with tab_d:
    d = pipeline.pipeline_contrast(fleet=fleet, cases=cases, microbatches=settings["microbatches"])
    pc = cases.pipeline
    st.markdown(f"{pc.model} cut into **{d.stages} pipeline stages** (tensor parallel {d.tp}, {d.dp} replicas), microbatches fixed at {d.microbatch_size} sequences of {pc.seq_len:,} tokens. Recomputation: {RECOMPUTE_LABELS[pc.recompute]}. The baseline feeds {pc.baseline_microbatches} microbatches a step; feed more of the same size.")
    ui.model_parallel_note(t)
    f = fields.field("microbatches")
    st.slider("Microbatches per step", f.min, f.max, step=f.step, **persistent("scaling", "microbatches"))
    if ui.prediction_gate("D"):
        ui.result(charts.pipeline_chart(pipeline.pipeline_rows(d.sweep), hbm_gb=card.memory_gb), f"Left: bubble fraction as microbatches grow. Right: the busiest stage's memory per GPU, against {card.memory_gb:,.0f} GB of HBM.", pipeline.pipeline_rows((d.baseline, d.result)), ui.PIPELINE_FORMATS)
        base, res = d.baseline, d.result
        ui.verdict("D", d.outcome, f"The bubble goes from {base.bubble_fraction:.3f} to {res.bubble_fraction:.3f} of the step, while the first stage holds {res.retained_microbatches} microbatches of activations instead of {base.retained_microbatches}: {res.verdict.total_gb:,.1f} GB per GPU against {base.verdict.total_gb:,.1f} GB.")
        ui.capture("D", settings=settings, inputs={"microbatches": settings["microbatches"]}, baseline=base.record(), outcome=res.record())

with tab_e:
    step = a.result.step
    e = quality.compare_policies(step_ms=step.step_ms, global_batch=step.global_batch, convergence=t.convergence, straggler=t.straggler)
    st.markdown(f"Back to {t.model.name} on {a.result.workers} GPUs with part A's setup: a global batch of {step.global_batch:,.0f} and {step.step_ms:,.3g} ms steps. Is the shortest step also the fastest way to a given quality?")
    st.caption(f"Illustrative assumptions, not measurements: steps to target = {t.convergence.minimum_steps:,.0f} × (1 + {t.convergence.critical_batch:,.0f} ÷ global batch); dropping slow workers makes a step {t.straggler.step_time_multiplier:.2f}× as long but needs {t.straggler.work_multiplier:.2f}× the steps.")
    if ui.prediction_gate("E"):
        ui.result(charts.time_to_target_chart(quality.quality_rows(e)), "Hours each straggler policy takes to reach the same quality target.", quality.quality_rows(e), ui.QUALITY_FORMATS)
        ui.verdict("E", e.winner, f"Strict synchronisation reaches the target in {quality.readable_duration(e.strict.time_to_target_h)} ({e.strict.steps:,} steps); dropping slow workers takes {quality.readable_duration(e.drop.time_to_target_h)} ({e.drop.steps:,} shorter steps).")
        ui.capture("E", settings=settings, inputs={"mode": a.mode, "workers": a.result.workers}, baseline=quality.policy_record(e.strict), outcome=quality.policy_record(e.drop))

with tab_s:
    st.markdown("Recommend one plan for this track, name the alternative you rejected, say what would make you look again and what this model cannot tell you. Ground the rationale in numbers from your snapshots.")
    ui.synthesis(t, settings)
share_box("scaling")
