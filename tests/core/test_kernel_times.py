"""H200 kernel times beside the roofline: the lesson's figures, read from the reference measurements."""

import pytest

from core.kernel_times import (
    find,
    fusion_times,
    h200_roof,
    load_kernel_times,
    measured_points,
    parse_kernel_rows,
    rate_contrast,
    small_kernel_floor_us,
)


def test_the_lessons_headline_matmul_and_gelu():
    # kernels.csv: 2·4096³ FLOPs in 184.4 µs; 5 FLOPs × 67,108,864 values in 115.5 µs.
    assert find("square_matmul", "bf16", size=4096).achieved_tflops == pytest.approx(745.3, abs=0.1)
    assert find("gelu", "bf16", size=67_108_864).achieved_tflops == pytest.approx(2.906, abs=0.001)


def test_the_rate_contrast_puts_the_matmul_against_peak_and_gelu():
    # 745.3 / 989 TFLOP/s = 75.4% of the BF16 peak; 745.3 / 2.906 = 256 times GELU's rate.
    contrast = rate_contrast()
    assert contrast.matmul_percent_of_peak == pytest.approx(75.4, abs=0.05)
    assert contrast.times_apart == pytest.approx(256.4, abs=0.1)
    assert contrast.gelu_million_values == pytest.approx(67.108864)


def test_the_small_kernel_floor_is_about_13_microseconds():
    assert small_kernel_floor_us() == pytest.approx(13.47, abs=0.01)  # GELU over 262,144 FP32 values


def test_no_measured_kernel_beats_its_roof():
    for precision in ("fp32", "bf16"):
        for point in measured_points(precision):
            assert 0 < point.percent_of_roof <= 100, point.kernel.label


def test_tf32_matmuls_pass_the_plain_fp32_roof_they_are_drawn_against():
    tf32 = find("square_matmul", "tf32", size=4096)
    assert tf32.achieved_tflops > h200_roof("tf32").peak_tflops  # 385.5 > 67: the tensor cores
    assert find("square_matmul", "fp32", size=4096).achieved_tflops < h200_roof("fp32").peak_tflops


def test_the_fusion_and_attention_examples():
    timed = fusion_times()
    assert round(timed.separate_us) == 420 and round(timed.fused_us) == 207
    assert timed.chain_values == 67_108_864 and timed.chain_million_values == pytest.approx(67.108864)
    assert timed.attention_tokens == 8192
    assert timed.eager_ms == pytest.approx(6.39, abs=0.005) and timed.sdpa_ms == pytest.approx(
        0.89, abs=0.005
    )
    assert timed.eager_extra_gb == pytest.approx(4.33, abs=0.005) and round(timed.sdpa_extra_mb) == 34


def test_every_row_is_read():
    assert len(load_kernel_times()) == 56


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"workload": "conv", "precision": "fp32"}, "unknown workload"),
        ({"workload": "gelu", "precision": "fp8"}, "unknown precision"),
        (
            {"workload": "gelu", "precision": "fp32", "elements": "10", "flops": "50", "seconds": "-1"},
            "seconds must be a positive number",
        ),
    ],
)
def test_bad_rows_are_refused(row, message):
    with pytest.raises(ValueError, match=message):
        parse_kernel_rows([row])


def test_an_unmeasured_size_is_a_readable_error():
    with pytest.raises(ValueError, match="No gelu was measured"):
        find("gelu", "bf16", size=3)
