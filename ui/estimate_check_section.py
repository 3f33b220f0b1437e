"""The memory page's last section, "How close is this estimate?": the detailed estimate against PyTorch."""

from __future__ import annotations

import streamlit as st

from charts.estimate_check import estimate_check_chart
from core.estimate_check import check_view, config_label
from core.memory.view import reference_rows, reference_summary
from core.memory_view import SECTION
from core.settings_schema import section
from ui import state
from ui.charts import draw
from ui.settings import persistent
from ui.tables import arrow_rows

NAME = "measured_config"


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
        section(SECTION).field(NAME).choices,
        format_func=config_label,
        **persistent(SECTION, NAME),
    )
    chosen = state.section_settings(SECTION)[NAME]
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
