"""Linear layer cost: one nn.Linear as a workload, and the roofline that explains its runtime."""

import streamlit as st

from charts.roofline import FRAME_HEIGHT_PX, roofline_chart, roofline_datasets, roofline_shape
from core.kernel_times import (
    REFERENCE_GPU,
    find,
    fusion_times,
    h200_roof,
    measured_points,
    measured_rows,
    small_kernel_floor_us,
)
from core.roofline import linear_layer_roofline, roofline_rows
from core.settings_schema import section
from core.workloads import GELU_FLOPS_PER_ELEMENT, TRAINING_FLOPS_PER_FORWARD
from ui import state
from ui.charts import draw
from ui.links import share_box
from ui.marked import marked_question
from ui.nav import next_link
from ui.prediction import lesson_prediction
from ui.settings import persistent
from ui.tables import arrow_rows

LESSON_MATMUL_SIDE = 4096
LESSON_GELU_VALUES = 4096 * 4096 * 4  # the largest GELU measured: 67,108,864 values


def measured_precision(dtype: str) -> str:
    """The measured precision closest to the page's number format (fp16 was not measured; bf16 is its
    twin)."""
    return "fp32" if dtype == "fp32" else "bf16"


def kernel_times_section(dtype: str) -> None:
    """Measured points, the share of peak they reach, and the roofline's blind spots, in numbers."""
    precision = measured_precision(dtype)
    matmul = find("square_matmul", "bf16", size=LESSON_MATMUL_SIDE)
    gelu = find("gelu", "bf16", size=LESSON_GELU_VALUES)
    peak = h200_roof("bf16").peak_tflops
    st.header(f"Measured on an {REFERENCE_GPU}")
    st.markdown(
        f"The roof is a limit, not a forecast. On a real {REFERENCE_GPU} in BF16 a "
        f"{LESSON_MATMUL_SIDE:,}² matmul reached **{matmul.achieved_tflops:,.0f} TFLOP/s** "
        f"({100 * matmul.achieved_tflops / peak:.0f}% of the {peak:,.0f} TFLOP/s peak), while GELU over "
        f"{gelu.size / 1e6:,.3g} million values reached **{gelu.achieved_tflops:.2g} TFLOP/s**: the same "
        f"card, about {matmul.achieved_tflops / gelu.achieved_tflops:,.0f} times apart, because one "
        "operation has arithmetic to hide its memory traffic and the other does not. Pick the H200 above to "
        "see every measured kernel as a hollow square on the roofline."
    )
    st.dataframe(
        arrow_rows(measured_rows(measured_points(precision))),
        hide_index=True,
        width="stretch",
        column_config={
            "FLOP/byte": st.column_config.NumberColumn(format="%.3g"),
            "Achieved TFLOP/s": st.column_config.NumberColumn(format="%.3g"),
            "% of peak": st.column_config.NumberColumn(format="%.2g"),
            "% of roof": st.column_config.NumberColumn(format="%.2g"),
            "Time (µs)": st.column_config.NumberColumn(format="%.3g"),
        },
    )
    st.caption(
        f"Median of 30 timings in {precision.upper()} on one {REFERENCE_GPU}. % of roof compares each kernel "
        "with what the roof allows at its own intensity."
    )
    _what_it_leaves_out()


def _what_it_leaves_out() -> None:
    floor_us = small_kernel_floor_us()
    one_row = find("linear_forward", "bf16", size=1)
    fp32 = find("square_matmul", "fp32", size=LESSON_MATMUL_SIDE)
    tf32 = find("square_matmul", "tf32", size=LESSON_MATMUL_SIDE)
    fp32_peak = h200_roof("fp32").peak_tflops
    st.subheader("What the roofline leaves out")
    st.markdown(
        f"- **A floor under every kernel.** No measured kernel finished in under {floor_us:,.1f} µs, however "
        "little it did: launching and finishing a kernel has a fixed cost, so thousands of tiny kernels are "
        "slow whatever the roof says.\n"
        "- **Small shapes never fill the GPU.** A linear layer fed one row at a time took "
        f"{one_row.microseconds:,.0f} µs and reached {one_row.achieved_tflops:.2g} TFLOP/s: too few "
        "independent tiles to keep every unit busy.\n"
        f"- **TF32 is opt-in.** With PyTorch's default a {LESSON_MATMUL_SIDE:,}² FP32 matmul ran on plain "
        f"FP32 units at {fp32.achieved_tflops:,.0f} TFLOP/s (under the {fp32_peak:,.0f} TFLOP/s roof); after "
        f"`torch.backends.cuda.matmul.allow_tf32 = True` it reached {tf32.achieved_tflops:,.0f} TFLOP/s, "
        "above that roof, because TF32 runs on the tensor cores."
    )


fields = section("linear")

st.title("What a linear layer costs")
st.markdown(
    "`torch.nn.Linear(n, m)` computes $y = Wx + b$ with a weight matrix $W$ of shape "
    "$m \\times n$ and a bias $b$ of length $m$; it applies no activation (GELU or ReLU is a module of its "
    "own). Read it as a job for the GPU instead of a formula: how much arithmetic does it create, and how "
    "much data must it fetch to do that arithmetic?\n\n"
    "Each of the $m$ outputs is a dot product over the $n$ inputs, so it costs $n$ multiplications "
    "and $n$ additions. One multiplication paired with one addition is a **MAC** "
    "(multiply-accumulate). A whole layer is $m \\times n$ MACs per input row, and a batch of $B$ "
    "rows is $B \\times m \\times n$ MACs. FLOP counts usually take two per MAC; the exact "
    "convention matters less than how the count grows with each dimension."
)

sizes, hardware = st.columns(2)
with sizes:
    for name, label in (("n_in", "Inputs (n)"), ("m_out", "Outputs (m)"), ("batch", "Batch (B)")):
        f = fields.field(name)
        st.slider(label, f.min, f.max, step=f.step, **persistent("linear", name))
with hardware:
    st.selectbox("Number format", fields.field("dtype").choices, **persistent("linear", "dtype"))
    st.selectbox("GPU", fields.field("gpu").choices, **persistent("linear", "gpu"))
    st.caption(
        "Number format sets the bytes per value moved and which peak rate applies. fp32 means plain "
        "FP32 units: PyTorch leaves TF32 off for matrix multiplies unless you switch it on."
    )

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
tiles[0].caption("B × m × n: every row meets every weight once.")
tiles[1].metric("FLOPs (forward)", f"{layer.gflop:,.2f} GFLOP")
tiles[1].caption("Two per MAC: the multiply and the add are counted apart.")
tiles[2].metric("Parameters", f"{layer.parameters:,}")
tiles[2].caption("m × n weights, plus one bias for each of the m outputs.")
tiles[3].metric("Weight memory", f"{layer.weight_mb_4byte:,.0f} MB")
tiles[3].caption(f"At 4 bytes a value; {layer.weight_mb_2byte:,.0f} MB at 2 bytes.")

st.info(
    f"A single line of PyTorch, and the forward pass alone is **{layer.gflop:,.2f} billion** FLOPs over "
    f"**{layer.parameters_millions:,.1f} million** parameters that fill **{layer.weight_mb_4byte:,.0f} MB** "
    f"before any training state exists. Training it costs about {TRAINING_FLOPS_PER_FORWARD} forward "
    "passes (the backward pass "
    f"computes a gradient for the inputs and one for the weights, each as big as the forward): "
    f"**{layer.training_gflop:,.2f} GFLOP** per step.\n\n"
    f"The batch is **{layer.batch}**. Doubling it doubles the arithmetic and the activations this layer "
    "must keep for the backward pass, while the weights stay the same size. The activations are what "
    "run out of memory; the memory budget page adds them up. Each weight fetched from memory is also "
    "used once per row, so a bigger batch raises the layer's FLOPs per byte (now "
    f"{layer.forward.flop_per_byte:,.1f}; "
    "see the roofline below).",
    icon=":material/calculate:",
)

st.header("FLOPs do not tell you the runtime")
st.markdown("Answer this before reading on: the rest of the page explains it.")
marked_question("c2")

st.subheader("Place three operations before the roofline does")
st.markdown(
    f"On the **{roof.gpu_name}** at **{roof.dtype}**, will each of these wait for memory or for arithmetic? "
    "Lock a guess for each; the roofline below appears once all three are locked."
)
guesses = [
    lesson_prediction(prediction_id, point.regime)
    for prediction_id, point in zip(
        ("linear.layer", "linear.matmul", "linear.gelu"), view.points, strict=False
    )
]
if None in guesses:
    st.info("The roofline stays hidden until you have placed all three.", icon=":material/lock:")
    next_link("pages/linear_layer.py")
    st.stop()
matmul, gelu, layer_point = view.matmul, view.gelu, view.layer_point
st.markdown(
    f"At {roof.dtype} the {roof.gpu_name} can do {roof.peak_tflops:,.1f} trillion FLOPs a second, so your "
    f"layer's {layer.gflop:,.2f} GFLOP is only {layer_point.time.compute_label} of arithmetic, provided the "
    "arithmetic units never wait. They often do: every operation reads its inputs from device memory "
    "and writes its result back, and that traffic has its own speed limit (moving this layer's "
    f"{layer.forward.moved_mb:,.0f} MB takes at least {layer_point.time.memory_label}). Which limit binds "
    "depends on **arithmetic intensity**, the FLOPs an operation performs for each byte it moves.\n\n"
    f"Take two operations over {roof.dtype} matrices of the same size:\n"
    f"- **{matmul.name}**: {matmul.gflop:,.0f} GFLOP on {matmul.read_mb:,.0f} MB of inputs, about "
    f"{matmul.flop_per_byte_read:,.0f} FLOPs per byte read ({matmul.flop_per_byte:,.0f} once the "
    f"{matmul.written_mb:,.0f} MB result it writes is counted). The memory traffic hides easily "
    "behind all that arithmetic.\n"
    f"- **GELU** over one of those matrices: it reads {gelu.read_mb:,.0f} MB, writes "
    f"{gelu.written_mb:,.0f} MB "
    f"and does a few operations per element (we count {GELU_FLOPS_PER_ELEMENT}), so only "
    f"{gelu.flop_per_byte:,.3g} FLOPs per "
    "byte. The arithmetic units spend nearly all their time waiting for data."
)

st.subheader(f"The roofline of the {roof.gpu_name} at {roof.dtype}")
if view.has_bf16_fallback:
    st.warning(
        f"The {roof.gpu_name} has no BF16 units, so bf16 work cannot use its tensor cores: the roof "
        "is its FP32 rate.",
        icon=":material/info:",
    )
st.markdown(
    f"The card reaches at most **{roof.peak_tflops:,.1f} TFLOP/s** and moves at most "
    f"**{roof.bandwidth_tb_per_s:,.3g} TB/s**. An operation at intensity $I$ can reach "
    f"$\\min(\\text{{peak}}, I \\times \\text{{bandwidth}})$: the sloped part of the roof is "
    "bandwidth, the flat part "
    f"is arithmetic. They meet at the **ridge point**, {roof.ridge_flop_per_byte:,.1f} FLOP/byte. "
    "Anything left of it is memory-bound, whatever its FLOP count."
)
on_h200 = roof.gpu_name == REFERENCE_GPU
chart_column, table_column = st.columns(2)
with chart_column:
    measured = measured_rows(measured_points(measured_precision(roof.dtype))) if on_h200 else None
    draw(
        ("roofline", *roofline_shape(roof, view.points, measured=on_h200)),
        lambda: roofline_chart(roof, view.points, measured),
        datasets=roofline_datasets(roof, view.points, measured),
        height=FRAME_HEIGHT_PX,
        description=(
            f"Log-log roofline of the {roof.gpu_name} at {roof.dtype} with four operations placed under it."
        ),
    )
    st.caption(
        f"Grey line: the roof. Orange diamond: the ridge at {roof.ridge_flop_per_byte:,.1f} FLOP/byte. "
        "Triangles are memory-bound, circles compute-bound."
        + (" Hollow squares: kernels measured on a real H200." if on_h200 else "")
    )
with table_column:
    st.dataframe(
        arrow_rows(roofline_rows(view.points)),
        hide_index=True,
        column_order=("Operation", "FLOP/byte", "Attainable TFLOP/s", "Regime", "Time bound"),
        column_config={
            "FLOP/byte": st.column_config.NumberColumn(format="%.2f"),
            "Attainable TFLOP/s": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
            "Regime": st.column_config.TextColumn("Bound by"),
            "Time bound": st.column_config.TextColumn("Fastest"),
        },
    )
    st.caption(
        "TFLOP/s is the best rate the roof allows. Fastest = the larger of FLOPs ÷ peak and bytes "
        "moved ÷ bandwidth; real kernels are slower."
    )

kernel_times_section(roof.dtype)

st.header("Fusion: same arithmetic, fewer bytes")
separate, fused = view.fusion_points
st.markdown(
    f"Chain {view.fusion.ops} cheap elementwise operations on one of those matrices and run each as its "
    "own kernel: every kernel reads the whole tensor and writes it back, "
    f"**{view.fusion.separate.moved_mb:,.0f} MB** "
    f"in all, at least {separate.time_bound_label} on this card. Fuse them into one kernel that "
    "keeps each value in "
    f"registers between steps and the traffic drops to **{view.fusion.fused.moved_mb:,.0f} MB** "
    f"({view.fusion.traffic_percent:.0f}% of it), at least {fused.time_bound_label}, for exactly the "
    "same FLOPs."
)
st.markdown(
    "FlashAttention wins the same way. Plain attention writes each head's $S \\times S$ score "
    "matrix to device "
    f"memory and reads it back for the softmax: at $S$ = {view.attention.seq_len:,} that is "
    f"{view.attention.matrix_mb:,.0f} MB per head, {view.attention.round_trip_mb:,.0f} MB of traffic. "
    "FlashAttention computes the scores tile by tile in on-chip memory and never stores the full matrix. "
    "It does no fewer FLOPs; it moves far fewer bytes."
)
timed = fusion_times()
st.info(
    f"**Measured on an H200.** Scale, shift and GELU over "
    f"{timed.chain_values / 1e6:,.0f} million FP32 values took {timed.separate_us:,.0f} µs as "
    f"{timed.separate_kernels} kernels and {timed.fused_us:,.0f} µs as one kernel from `torch.compile`. "
    f"Attention over {timed.attention_tokens:,} tokens (16 heads, BF16) took {timed.eager_ms:.2f} ms and "
    f"{timed.eager_extra_gb:.2f} GB extra written out eagerly, {timed.sdpa_ms:.2f} ms and "
    f"{timed.sdpa_extra_mb:,.0f} MB with `scaled_dot_product_attention`.",
    icon=":material/timer:",
)
next_link("pages/linear_layer.py")
