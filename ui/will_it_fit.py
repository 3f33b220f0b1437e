"""Will it fit? (Memory page): for the model in use (the learner's config.json, a preset or the sliders'
shape) on a chosen card, the longest sequence full training, LoRA and QLoRA allow on one GPU and on eight
with FSDP, drawn as one chart, and for the learner's own choice the answer and why one token more fails.

Built only while its expander is open: the search is worked out per setup (`core.memory.fit`), but most
reruns of the page are a slider of the lesson above, and nobody reads this then.
"""

from __future__ import annotations

import streamlit as st

from charts.fit import FitRow, fit_chart, fit_description
from core import lessons
from core.gpus import gpu
from core.memory.settings import convention_label
from core.memory.view import SECTION, fit_view, said
from core.model_spec import ModelSpec
from core.settings_schema import section as schema_section
from ui import state
from ui.charts import draw as draw_chart
from ui.prose import literal
from ui.settings import persistent
from ui.training_pickers import training_method, training_pickers

OPEN_KEY = "memory.will_it_fit_open"


def _run_pickers() -> None:
    """The card, the micro-batch and the precision of the run to size."""
    fields = schema_section(SECTION)
    left, middle, right = st.columns(3)
    left.selectbox("GPU to fit on", fields.field("fit_gpu").choices, **persistent(SECTION, "fit_gpu"))
    batch = fields.field("fit_batch")
    middle.number_input(
        "Micro-batch", batch.min, batch.max, step=batch.step, **persistent(SECTION, "fit_batch")
    )
    right.selectbox(
        "Precision",
        fields.field("fit_precision").choices,
        format_func=convention_label,
        **persistent(SECTION, "fit_precision"),
    )


def will_it_fit(model: ModelSpec) -> None:
    """The "Will it fit?" expander for `model`: its pickers, the chart of every method, the answer."""
    box = st.expander("Will it fit?", icon=":material/straighten:", key=OPEN_KEY, on_change="rerun")
    if not box.open:
        return
    with box:
        st.markdown(lessons.text("memory", "will_it_fit"))
        _run_pickers()
        training_pickers(SECTION)
        settings = state.section_settings(SECTION)
        try:
            view = fit_view(
                settings, model=model, card=gpu(settings["fit_gpu"]), training=training_method(SECTION)
            )
        except ValueError as err:  # the learner's choices themselves (say, 8 GPUs and no sharding)
            st.warning(literal(lessons.sentence("memory", "fit_refused", reason=str(err))))
            return
        rows = tuple(FitRow(b.method, b.gpus, b.fit.seq_len) for b in view.bars if b.fit is not None)
        if rows:
            title = lessons.sentence("memory", "fit_chart_title")
            draw_chart(
                ("memory.fit", title, rows),
                lambda: fit_chart(rows, title=title),
                description=fit_description(rows, device=view.capacity.label),
            )
        for bar in view.bars:
            if bar.fit is None:
                st.caption(
                    literal(
                        lessons.sentence(
                            "memory", "fit_bar_refused", method=bar.method, gpus=bar.gpus, refused=bar.refused
                        )
                    )
                )
        if view.answer is None:
            st.warning(literal(lessons.sentence("memory", "fit_refused", reason=view.refused)))
            return
        st.markdown(said(view.answer))
        if view.why is not None:
            st.markdown(said(view.why))
