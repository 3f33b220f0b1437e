"""The Linear layer page's "measured on an H200" section: real kernel times under the roof, and what
the roofline leaves out."""

from __future__ import annotations

import streamlit as st

from core.kernel_times import (
    REFERENCE_GPU,
    find,
    h200_roof,
    measured_points,
    measured_rows,
    small_kernel_floor_us,
)
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
