"""The Memory page's careful count: a training step phase by phase, and three answers side by side."""

from collections.abc import Callable
from typing import Any

import streamlit as st

from charts.memory import budget_chart, budget_datasets, budget_shape
from core.gpus import gpu
from core.memory import settings as phase_choices
from core.memory.view import phase_view
from core.memory_view import SECTION
from core.models import resolve_model
from ui import state
from ui.charts import draw
from ui.tables import arrow_rows


def phase_section(choice: Callable[..., Any]) -> None:
    """Draw the phase-by-phase count with its own controls; `choice` builds one persistent widget."""
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
            st.selectbox, "Model", "phase_model", str, help="custom uses the hidden size and layers above."
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
