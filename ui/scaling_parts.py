"""Streamlit pieces of the Scaling out page: locked predictions, results, snapshots, the synthesis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import streamlit as st

from core.gpus import bytes_per_value, peak_tflops
from core.memory_detailed import precision_label
from core.scaling import capacity, evidence, layout
from core.scaling.scenarios import PARTS, Cases, Track, load_scaling
from ui import state


def _records(name: str) -> dict[str, Any]:
    value = state.record(name)
    return dict(value) if isinstance(value, Mapping) else {}


def _flash(part: str) -> str:
    return f"scaling.flash.{part}"


def locked_prediction(part: str) -> str | None:
    """The learner's locked prediction for `part`, if any."""
    return evidence.prediction_of(state.record(evidence.PREDICTIONS), part)


def _lock(part: str) -> None:
    choice = st.session_state.get(f"scaling.predict.{part}")
    if choice is None:
        st.session_state[_flash(part)] = "Pick one of the options first, then lock it."
        return
    st.session_state.pop(_flash(part), None)
    updated, accepted = evidence.lock_prediction(_records(evidence.PREDICTIONS), part, choice)
    if accepted:
        state.store_record(evidence.PREDICTIONS, updated)


def prediction_gate(part: str) -> bool:
    """The prediction form until a prediction is locked; True once it is (show the result)."""
    text = load_scaling().parts[part]
    locked = locked_prediction(part)
    if locked is not None:
        st.caption(f":material/lock: Your locked prediction: **{text.options[locked]}**")
        return True
    with st.form(key=f"scaling.predict.{part}.form"):
        st.radio(text.prompt, list(text.options), index=None, format_func=text.options.get, key=f"scaling.predict.{part}", disabled=state.read_only())
        st.form_submit_button("Lock prediction", on_click=_lock, args=(part,), key=f"scaling.lock.{part}", disabled=state.read_only())
    if flash := st.session_state.get(_flash(part)):
        st.info(flash)
    st.caption("The result stays hidden until you lock a prediction. One prediction per part; it cannot be changed later.")
    return False


def verdict(part: str, outcome: str, message: str) -> None:
    """Say whether the locked prediction came true, then what the model computed."""
    text, locked = load_scaling().parts[part], locked_prediction(part)
    if locked == outcome:
        st.success(f"**Your prediction held.** {message}", icon=":material/check_circle:")
        return
    happened = text.options.get(outcome, "none of the options")
    st.warning(f"**Not what you predicted.** What happened: *{happened}*. {message}", icon=":material/info:")


def result(chart: alt.TopLevelMixin, description: str, rows: Sequence[Mapping[str, Any]], formats: Mapping[str, str]) -> None:
    """The part's chart with its one-line description, then its table."""
    st.altair_chart(chart, width="stretch", alt=description)
    st.caption(description)
    config = {column: st.column_config.NumberColumn(format=fmt) for column, fmt in formats.items()}
    st.dataframe(rows, hide_index=True, column_config=config)


def _capture(part: str, settings: dict[str, Any], inputs: dict[str, Any], baseline: dict[str, Any], outcome: dict[str, Any], fixed: str | None) -> None:
    decision = fixed or st.session_state.get(f"scaling.decide.{part}")
    if decision is None:
        st.session_state[_flash(part)] = "Choose a decision before capturing the snapshot."
        return
    st.session_state.pop(_flash(part), None)
    snapshot = evidence.make_snapshot(
        part=part, settings=settings, prediction=locked_prediction(part) or "", inputs=inputs, baseline=baseline, result=outcome, decision=decision
    )
    state.store_record(evidence.SNAPSHOTS, {**_records(evidence.SNAPSHOTS), part: snapshot})


def capture(part: str, *, settings: dict[str, Any], inputs: dict[str, Any], baseline: dict[str, Any], outcome: dict[str, Any], fixed: str | None = None) -> None:
    """The decision (or the `fixed` one the controls already made) and the button that saves this
    part's evidence, then the snapshot's status."""
    text = load_scaling().parts[part]
    saved = _records(evidence.SNAPSHOTS).get(part)
    saved_decision = saved.get("decision") if evidence.valid_snapshot(part, saved) else None
    options = list(text.decisions)
    with st.form(key=f"scaling.decide.{part}.form"):
        if fixed:
            st.markdown(f"{text.decision_prompt} **{text.decisions[fixed]}**, as set above.")
        else:
            st.radio(
                text.decision_prompt,
                options,
                index=options.index(saved_decision) if saved_decision else None,
                format_func=text.decisions.get,
                key=f"scaling.decide.{part}",
                disabled=state.read_only(),
            )
        st.form_submit_button(
            "Capture snapshot",
            icon=":material/photo_camera:",
            on_click=_capture,
            args=(part, settings, inputs, baseline, outcome, fixed),
            key=f"scaling.capture.{part}",
            disabled=state.read_only(),
        )
    if flash := st.session_state.get(_flash(part)):
        st.info(flash)
    snapshot_status(part, settings)


def snapshot_status(part: str, settings: Mapping[str, Any]) -> None:
    """Missing, stale (and why) or current, in one line."""
    snapshots = _records(evidence.SNAPSHOTS)
    status = evidence.snapshot_status(part, snapshots, settings)
    if status == evidence.MISSING:
        st.caption("No snapshot of this part yet.")
    elif status == evidence.STALE:
        changed = " and ".join(evidence.changed_upstream(part, snapshots, settings))
        st.error(f"**Stale snapshot.** You changed {changed} after capturing it. Capture it again.", icon=":material/history:")
    else:
        text = load_scaling().parts[part]
        snapshot = snapshots[part]
        st.success(
            f"**Snapshot saved.** Prediction: {text.options[snapshot['prediction']]}. Decision: {text.decisions[snapshot['decision']]}. "
            "It keeps these figures even if you move the controls later.",
            icon=":material/inventory_2:",
        )


def synthesis(track: Track, settings: Mapping[str, Any]) -> None:
    """Each part's evidence status, the plan form, and whether the synthesis is ready."""
    data = load_scaling()
    snapshots = _records(evidence.SNAPSHOTS)
    statuses = evidence.statuses(snapshots, settings)
    st.dataframe(
        [
            {
                "Part": data.parts[part].title,
                "Original prediction": data.parts[part].options[snapshots[part]["prediction"]] if statuses[part] != evidence.MISSING else "—",
                "Evidence": statuses[part],
            }
            for part in PARTS
        ],
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
            st.radio(label, keys, index=index, format_func=options.get, key=f"scaling.synthesis.{name}", disabled=state.read_only())
        st.text_area(
            "Quantified rationale",
            value=saved.get("rationale", ""),
            placeholder="Cite figures from your snapshots, say what the rejected plan would cost, and when you would look again.",
            key="scaling.synthesis.rationale",
            max_chars=2000,
            disabled=state.read_only(),
        )
        st.form_submit_button("Save synthesis", on_click=_save_synthesis, key="scaling.synthesis.save", disabled=state.read_only())
    readiness = evidence.synthesis_readiness(saved, statuses)
    if readiness.ready:
        st.success("**Ready for the report.** Five current snapshots and a complete, quantified plan.", icon=":material/task_alt:")
    else:
        st.warning("**Not ready yet.**\n\n" + "\n".join(f"- {problem}" for problem in readiness.problems), icon=":material/pending:")


def _save_synthesis() -> None:
    names = (*evidence.SYNTHESIS_CHOICES, "rationale")
    state.store_record(evidence.SYNTHESIS, {name: st.session_state.get(f"scaling.synthesis.{name}") for name in names})


SCALING_FORMATS = {"Local batch": "%.2f", "Global batch": "%d", "Compute (ms)": "%.4g", "Communication (ms)": "%.4g", "Step (ms)": "%.4g", "Speedup (x)": "%.2f", "Parallel efficiency": "%.3f"}
GB_FORMATS = {"Total (GB)": "%.1f", "HBM (GB)": "%.0f"}
MS_FORMATS = {"Compute (ms)": "%.1f", "DP communication (ms)": "%.1f", "TP communication (ms)": "%.1f", "Pipeline bubble (ms)": "%.1f", "Step (ms)": "%.1f"}
PIPELINE_FORMATS = {"Bubble fraction": "%.3f", "Retained activations (GB)": "%.1f", "Memory (GB)": "%.1f"}
QUALITY_FORMATS = {"Global batch": "%d", "Step (ms)": "%.4g", "Steps to target": "%d", "Time to target (h)": "%.3g"}


def assumptions(track: Track, cases: Cases) -> None:
    """Every assumption behind the numbers, with the figures it uses, and the sources."""
    fleet, card = track.fleet, track.fleet.card
    peak = peak_tflops(card, cases.dtype)
    with st.expander("How the numbers are made, and what they leave out", icon=":material/functions:"):
        st.markdown(
            f"""
- **Compute.** A training step costs three forward passes (the backward pass is about twice the forward). Each GPU runs at
  {cases.compute_efficiency:.0%} of the {card.name}'s {cases.dtype} peak of {peak:,.0f} TFLOP/s.
- **Links.** A ring all-reduce moves 2 (N − 1) / N times the data through every GPU. A group that fits in one node runs at
  {fleet.intra_node_gb_per_s:,.0f} GB/s each way ({fleet.intra_node_link}); once it spans nodes every GPU is held to
  {fleet.inter_node_gb_per_s:,.1f} GB/s ({fleet.inter_node_link}). Gradients travel in {cases.dtype}
  ({bytes_per_value(cases.dtype)} bytes a value). Latency, contention and any overlap with compute are left out: compute
  and communication run back to back, which is the worst case.
- **Memory (parts B and D)** comes from the same model as the Memory budget page: {precision_label(cases.precision)},
  {cases.optimizer} state, saved activations counted after Korthikanti et al. with standard attention, 1 GB of workspace and
  1 GB of runtime overhead. Tensor parallel and pipeline stages split the model state evenly before ZeRO shards it; we assume
  sequence parallelism, so tensor parallel also splits every saved activation. Communication buffers are a gradient
  bucket of {capacity.GRADIENT_BUCKET_FRACTION:.0%} of a GPU's gradients, plus a send and a receive buffer of one
  microbatch's hidden states between pipeline stages.
- **Layouts (part C).** Tensor parallel costs {layout.TP_ALLREDUCES_PER_LAYER} all-reduces of one microbatch's activations per
  layer (two forward, two backward). ZeRO-3 moves {layout.ZERO3_TRAFFIC_FACTOR}× the data-parallel traffic of plain
  all-reduce. Point-to-point sends between pipeline stages are left out.
- **Pipeline (parts C and D).** With p stages and m microbatches the bubble is (p − 1) / (m + p − 1) of the step. The first
  stage holds min(m, p) microbatches of activations at its peak; the output layer's logits sit on the last stage and are
  left out of the busiest stage.
- **Time to quality (part E)** is illustrative: a diminishing-returns batch curve (McCandlish et al. 2018) and made-up
  straggler multipliers. Replace both with measurements before deciding anything real.
"""
        )
        st.caption(f"Fleet: {fleet.source}")
        st.caption(f"Model: {track.model.source}")


def model_parallel_note(track: Track) -> None:
    """For a track whose model fits on one GPU, say that this part's mechanism is not one it needs."""
    if not track.model_parallel:
        st.caption(
            f":material/info: The {track.label} model fits on one GPU, so it never needs this. "
            "The case shows what the upstream fleet does with a model that does not fit."
        )
