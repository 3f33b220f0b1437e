"""Linear layer cost: one nn.Linear as a workload, and the roofline that explains its runtime."""

from collections.abc import Mapping
from typing import Any

import streamlit as st

from charts.roofline import roofline_chart, roofline_datasets, roofline_description, roofline_shape
from core import lessons
from core.kernel_times import (
    LESSON_MATMUL_SIDE,
    REFERENCE_GPU,
    find,
    fusion_times,
    h200_roof,
    measured_points,
    measured_precision,
    measured_rows,
    rate_contrast,
    small_kernel_floor_us,
)
from core.roofline import linear_layer_roofline, roofline_rows
from core.settings_schema import section
from core.units import flops_label, significant
from core.workloads import GELU_FLOPS_PER_ELEMENT, TRAINING_FLOPS_PER_FORWARD
from ui import state
from ui.charts import draw as draw_chart
from ui.frame import lesson_page
from ui.links import share_box
from ui.marked import marked_questions
from ui.nav import next_link
from ui.prediction import lesson_prediction
from ui.prose import SUBHEADER, TITLE, heading, prose
from ui.settings import persistent
from ui.tables import arrow_rows

# The roofline table's columns and their headings, short enough for a phone ("FLOP per byte" wraps).
ROOFLINE_COLUMNS = {
    "Operation": "Operation",
    "FLOP/byte": "FLOP per byte",
    "Attainable TFLOP/s": "TFLOP/s",
    "Regime": "Bound by",
    "Time bound": "Fastest",
}
# The measured kernels' figures in two narrow tables: six columns in one are wider than a phone.
MEASURED_TABLES = (("FLOP/byte", "Achieved TFLOP/s", "Time (µs)"), ("% of peak", "% of roof"))


def kernel_times_section(dtype: str) -> None:
    """Measured points and the share of peak they reach."""
    precision = measured_precision(dtype)
    contrast = rate_contrast()
    prose(
        heading(f"Measured on an {REFERENCE_GPU}"),
        lessons.text(
            "linear",
            "measured",
            gpu=REFERENCE_GPU,
            matmul_side=LESSON_MATMUL_SIDE,
            matmul_tflops=contrast.matmul.achieved_tflops,
            matmul_percent=contrast.matmul_percent_of_peak,
            peak_tflops=contrast.peak_tflops,
            gelu_million_values=contrast.gelu_million_values,
            gelu_tflops=contrast.gelu.achieved_tflops,
            times_apart=contrast.times_apart,
        ),
    )
    measured_tables(measured_rows(measured_points(precision)), precision)
    st.caption(lessons.sentence("linear", "measured_caption", precision=precision.upper(), gpu=REFERENCE_GPU))


def as_text(rows: list[dict[str, Any]], columns: Mapping[str, str]) -> list[dict[str, str]]:
    """Only `columns` of each row (name -> heading), each number to three significant figures: short text
    keeps a column narrow on a phone."""
    return [
        {
            heading: significant(value) if isinstance(value := row[name], float) else str(value)
            for name, heading in columns.items()
        }
        for row in rows
    ]


def measured_tables(rows: list[dict[str, Any]], precision: str) -> None:
    """The measured kernels' figures in two tables that sit side by side on a laptop and one under the
    other on a phone."""
    for column, figures in zip(st.columns(len(MEASURED_TABLES)), MEASURED_TABLES, strict=True):
        column.table(
            arrow_rows(as_text(rows, {name: name for name in ("Measured", *figures)})),
            hide_index=True,
            alt=f"Each kernel measured on the {REFERENCE_GPU} in {precision.upper()}: {', '.join(figures)}.",
        )


def _what_it_leaves_out() -> str:
    """The roofline's blind spots, in numbers."""
    floor_us = small_kernel_floor_us()
    one_row = find("linear_forward", "bf16", size=1)
    fp32 = find("square_matmul", "fp32", size=LESSON_MATMUL_SIDE)
    tf32 = find("square_matmul", "tf32", size=LESSON_MATMUL_SIDE)
    fp32_peak = h200_roof("fp32").peak_tflops
    return lessons.text(
        "linear",
        "leaves_out",
        floor_us=floor_us,
        one_row_us=one_row.microseconds,
        one_row_tflops=one_row.achieved_tflops,
        matmul_side=LESSON_MATMUL_SIDE,
        fp32_tflops=fp32.achieved_tflops,
        fp32_peak_tflops=fp32_peak,
        tf32_tflops=tf32.achieved_tflops,
    )


fields = section("linear")


def draw() -> None:
    """The page's body: the layer's cost and placements, then the roofline, measurements and fusion."""
    prose(heading(lessons.sentence("linear", "title"), TITLE), lessons.text("linear", "intro"))

    sizes, hardware = st.columns(2)
    with sizes:
        for name, label in (("n_in", "Inputs (n)"), ("m_out", "Outputs (m)"), ("batch", "Batch (B)")):
            f = fields.field(name)
            st.slider(label, f.min, f.max, step=f.step, **persistent("linear", name))
    with hardware:
        st.selectbox("Number format", fields.field("dtype").choices, **persistent("linear", "dtype"))
        st.selectbox("GPU", fields.field("gpu").choices, **persistent("linear", "gpu"))
        st.caption(lessons.sentence("linear", "number_format"))

    share_box("linear")

    chosen = state.section_settings("linear")
    view = linear_layer_roofline(
        n_in=chosen["n_in"],
        m_out=chosen["m_out"],
        batch=chosen["batch"],
        dtype=chosen["dtype"],
        gpu_name=chosen["gpu"],
    )
    layer, roof = view.layer, view.roof

    tiles = st.columns(4)
    tiles[0].metric("MACs (forward)", f"{layer.macs:,}")
    tiles[0].caption(lessons.sentence("linear", "tile_macs"))
    tiles[1].metric("FLOPs (forward)", flops_label(layer.flops))
    tiles[1].caption(lessons.sentence("linear", "tile_flops"))
    tiles[2].metric("Parameters", f"{layer.parameters:,}")
    tiles[2].caption(lessons.sentence("linear", "tile_parameters"))
    tiles[3].metric("Weight memory", f"{significant(layer.weight_mb_chosen)} MB")
    tiles[3].caption(
        lessons.sentence(
            "linear",
            "tile_weights",
            value_bytes=layer.value_bytes,
            dtype=chosen["dtype"].upper(),
            other_bytes=layer.other_value_bytes,
            other_mb=significant(layer.weight_mb(layer.other_value_bytes)),
        )
    )

    st.info(
        lessons.text(
            "linear",
            "layer_cost",
            flops=flops_label(layer.flops),
            parameters_millions=layer.parameters_millions,
            weight_mb=significant(layer.weight_mb_chosen),
            dtype=chosen["dtype"].upper(),
            training_factor=TRAINING_FLOPS_PER_FORWARD,
            training_flops=flops_label(layer.training_flops),
            batch=layer.batch,
            flop_per_byte=layer.forward.flop_per_byte,
        ),
        icon=":material/calculate:",
    )

    prose(heading("FLOPs do not tell you the runtime"), lessons.sentence("linear", "answer_first"))
    marked_questions("c2")

    prose(
        heading("Place three operations before the roofline does", SUBHEADER),
        lessons.sentence("linear", "place_three", gpu=roof.gpu_name, dtype=roof.dtype),
    )
    guesses = [
        lesson_prediction(prediction_id, point.regime)
        for prediction_id, point in zip(
            ("linear.layer", "linear.matmul", "linear.gelu"), view.points, strict=False
        )
    ]
    if None in guesses:
        st.info(lessons.sentence("linear", "locked"), icon=":material/lock:")
        next_link("pages/linear_layer.py")
        return  # the rest waits for the three placements (a page never calls st.stop: see ui/frame.py)
    matmul, gelu, layer_point = view.matmul, view.gelu, view.layer_point
    intensity = lessons.text(
        "linear",
        "intensity",
        dtype=roof.dtype,
        gpu=roof.gpu_name,
        peak_tflops=roof.peak_tflops,
        flops=flops_label(layer.flops),
        compute_time=layer_point.time.compute_label,
        moved_mb=layer.forward.moved_mb,
        memory_time=layer_point.time.memory_label,
        matmul=matmul.name,
        matmul_gflop=matmul.gflop,
        matmul_read_mb=matmul.read_mb,
        matmul_flop_per_byte_read=matmul.flop_per_byte_read,
        matmul_flop_per_byte=matmul.flop_per_byte,
        matmul_written_mb=matmul.written_mb,
        gelu_read_mb=gelu.read_mb,
        gelu_written_mb=gelu.written_mb,
        gelu_flops_per_element=GELU_FLOPS_PER_ELEMENT,
        gelu_flop_per_byte=gelu.flop_per_byte,
    )
    roofline = heading(f"The roofline of the {roof.gpu_name} at {roof.dtype}", SUBHEADER)
    roof_text = lessons.text(
        "linear",
        "roof",
        peak_tflops=roof.peak_tflops,
        bandwidth_tb_per_s=roof.bandwidth_tb_per_s,
        ridge=roof.ridge_flop_per_byte,
    )
    if view.has_bf16_fallback:  # the warning comes between the heading and the roof's text
        prose(intensity, roofline)
        st.warning(lessons.sentence("linear", "no_bf16", gpu=roof.gpu_name), icon=":material/info:")
        st.markdown(roof_text)
    else:
        prose(intensity, roofline, roof_text)
    on_h200 = roof.gpu_name == REFERENCE_GPU
    chart_column, table_column = st.columns(2)
    with chart_column:
        measured = measured_rows(measured_points(measured_precision(roof.dtype))) if on_h200 else None
        draw_chart(
            ("roofline", *roofline_shape(roof, view.points, measured=on_h200)),
            lambda: roofline_chart(roof, view.points, measured),
            datasets=roofline_datasets(roof, view.points, measured),
            description=roofline_description(roof, view.points),
        )
        caption = lessons.sentence("linear", "roofline_caption", ridge=roof.ridge_flop_per_byte)
        st.caption(f"{caption} {lessons.sentence('linear', 'hollow_squares')}" if on_h200 else caption)
    with table_column:
        st.table(
            arrow_rows(as_text(roofline_rows(view.points), ROOFLINE_COLUMNS)),
            hide_index=True,
            alt="Each operation under the roof: FLOP per byte, attainable TFLOP/s, what bounds it, "
            "fastest time.",
        )
        st.caption(lessons.sentence("linear", "table_caption"))

    kernel_times_section(roof.dtype)

    separate, fused = view.fusion_points
    # The roofline's blind spots close the measurements above and lead into fusion: one element for both.
    prose(
        heading("What the roofline leaves out", SUBHEADER),
        _what_it_leaves_out(),
        heading(lessons.sentence("linear", "fusion_heading")),
        lessons.text(
            "linear",
            "fusion",
            ops=view.fusion.ops,
            separate_mb=view.fusion.separate.moved_mb,
            separate_time=separate.time_bound_label,
            fused_mb=view.fusion.fused.moved_mb,
            traffic_percent=view.fusion.traffic_percent,
            fused_time=fused.time_bound_label,
        ),
        lessons.text(
            "linear",
            "flash_attention",
            seq_len=view.attention.seq_len,
            matrix_mb=view.attention.matrix_mb,
            round_trip_mb=view.attention.round_trip_mb,
        ),
    )
    timed = fusion_times()
    st.info(
        lessons.text(
            "linear",
            "fusion_measured",
            chain_million_values=timed.chain_million_values,
            separate_us=timed.separate_us,
            separate_kernels=timed.separate_kernels,
            fused_us=timed.fused_us,
            attention_tokens=timed.attention_tokens,
            eager_ms=timed.eager_ms,
            eager_extra_gb=timed.eager_extra_gb,
            sdpa_ms=timed.sdpa_ms,
            sdpa_extra_mb=timed.sdpa_extra_mb,
        ),
        icon=":material/timer:",
    )
    next_link("pages/linear_layer.py")


lesson_page(draw)
