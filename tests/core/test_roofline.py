"""The roofline: ridge points, attainable rates, regimes, time bounds and the page's bundle."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.gpus import gpu, gpu_names
from core.roofline import (
    COMPUTE_BOUND,
    MEMORY_BOUND,
    attainable_tflops,
    linear_layer_roofline,
    regime,
    ridge_flop_per_byte,
    roof,
    roof_outline,
    roofline_point,
    roofline_rows,
    time_bound,
)
from core.workloads import gelu, square_matmul

rates = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False)
intensities = st.floats(min_value=1e-3, max_value=1e5, allow_nan=False)


def test_the_ridge_point_itself_is_compute_bound():
    # At the ridge both roofs meet, so the operation already runs at peak: compute-bound. One step
    # below it (the next float down) is still under the sloped roof: memory-bound.
    ridge = roof(gpu("A100 80GB SXM"), "bf16").ridge_flop_per_byte
    assert regime(flop_per_byte=ridge, ridge_flop_per_byte=ridge) == COMPUTE_BOUND
    below = math.nextafter(ridge, 0.0)
    assert regime(flop_per_byte=below, ridge_flop_per_byte=ridge) == MEMORY_BOUND
    assert regime(flop_per_byte=8.0, ridge_flop_per_byte=8.0) == COMPUTE_BOUND


def test_ridge_points_worked_by_hand():
    # A100 80GB SXM, bf16: 312 TFLOP/s ÷ 2.039 TB/s = 153.0 FLOP/byte
    assert roof(gpu("A100 80GB SXM"), "bf16").ridge_flop_per_byte == pytest.approx(153.02, abs=0.01)
    # H100 SXM, bf16: 989 ÷ 3.35 = 295.2 FLOP/byte
    assert roof(gpu("H100 SXM"), "bf16").ridge_flop_per_byte == pytest.approx(295.22, abs=0.01)
    # A100 80GB SXM, fp32 (no tensor cores): 19.5 ÷ 2.039 = 9.56 FLOP/byte
    assert roof(gpu("A100 80GB SXM"), "fp32").ridge_flop_per_byte == pytest.approx(9.56, abs=0.01)


def test_matmul_and_gelu_on_an_a100_at_fp32():
    under = roof(gpu("A100 80GB SXM"), "fp32")
    matmul = roofline_point(square_matmul(size=4096, dtype="fp32"), under)
    assert matmul.regime == COMPUTE_BOUND and matmul.attainable_tflops == 19.5
    assert matmul.time_bound_s == pytest.approx(2 * 4096**3 / 19.5e12)  # ≈ 7.05 ms of arithmetic
    assert matmul.time_bound_label == "7.05 ms"
    activation = roofline_point(gelu(elements=4096 * 4096, dtype="fp32"), under)
    assert activation.regime == MEMORY_BOUND
    assert activation.attainable_tflops == pytest.approx(0.625 * 2.039)  # intensity × bandwidth
    assert activation.time_bound_s == pytest.approx(2 * 4096**2 * 4 / 2.039e12)  # 134 MB at 2.039 TB/s
    assert activation.time_bound_label == "65.8 µs"


def test_the_page_bundle_at_the_lesson_defaults():
    view = linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="fp32", gpu_name="A100 80GB SXM")
    assert [p.name for p in view.points] == ["Your linear layer", "4096×4096 matmul", "GELU", "LayerNorm"]
    assert view.layer.macs == 536_870_912 and view.layer_point is view.points[0]
    assert view.fusion.traffic_ratio == pytest.approx(1 / 3)
    assert not view.has_bf16_fallback
    assert linear_layer_roofline(n_in=256, m_out=256, batch=1, dtype="bf16", gpu_name="T4").has_bf16_fallback


def test_switching_to_bf16_moves_the_roof_and_the_points():
    fp32 = linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="fp32", gpu_name="A100 80GB SXM")
    bf16 = linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="bf16", gpu_name="A100 80GB SXM")
    assert bf16.roof.peak_tflops == 16 * fp32.roof.peak_tflops  # 312 vs 19.5
    assert [
        b.flop_per_byte / a.flop_per_byte for a, b in zip(fp32.points, bf16.points, strict=True)
    ] == pytest.approx([2, 2, 2, 2])
    # At batch 32 the layer is compute-bound at fp32 (15.8 > 9.6) and memory-bound at bf16 (31.5 < 153).
    assert (fp32.layer_point.regime, bf16.layer_point.regime) == (COMPUTE_BOUND, MEMORY_BOUND)


def test_table_rows_carry_units_and_the_same_numbers():
    view = linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="fp32", gpu_name="H200")
    rows = roofline_rows(view.points)
    assert rows[1]["GFLOP"] == pytest.approx(137.44, abs=0.01)
    assert rows[2]["FLOP/byte"] == 0.625 and rows[2]["Regime"] == MEMORY_BOUND
    assert [r["Time bound"] for r in rows] == [p.time_bound_label for p in view.points]


def test_roof_outline_runs_up_the_slope_then_along_the_ceiling():
    under = roof(gpu("A100 80GB SXM"), "bf16")
    (x0, y0), (x1, y1), (x2, y2) = roof_outline(under, min_flop_per_byte=0.1, max_flop_per_byte=10_000)
    assert (x0, x2) == (0.1, 10_000) and y0 == pytest.approx(0.1 * 2.039)
    assert x1 == under.ridge_flop_per_byte and y1 == pytest.approx(312) and y2 == 312


@given(intensities, rates, rates)
def test_attainable_never_exceeds_peak_nor_intensity_times_bandwidth(intensity, peak, bandwidth):
    reached = attainable_tflops(flop_per_byte=intensity, peak_tflops=peak, bandwidth_tb_per_s=bandwidth)
    assert reached <= peak and reached <= intensity * bandwidth
    assert reached in (peak, intensity * bandwidth)


@given(rates, rates, st.floats(min_value=1.001, max_value=1e3))
def test_regime_flips_at_the_ridge(peak, bandwidth, factor):
    ridge = ridge_flop_per_byte(peak_tflops=peak, bandwidth_tb_per_s=bandwidth)
    assert regime(flop_per_byte=ridge / factor, ridge_flop_per_byte=ridge) == MEMORY_BOUND
    assert regime(flop_per_byte=ridge * factor, ridge_flop_per_byte=ridge) == COMPUTE_BOUND
    below = attainable_tflops(flop_per_byte=ridge / factor, peak_tflops=peak, bandwidth_tb_per_s=bandwidth)
    assert below < peak


@given(st.floats(1, 1e15), st.floats(1, 1e12), rates, rates)
def test_time_bound_is_the_slower_floor(flops, moved_bytes, peak, bandwidth):
    bound = time_bound(flops=flops, moved_bytes=moved_bytes, peak_tflops=peak, bandwidth_tb_per_s=bandwidth)
    assert bound.seconds == max(bound.compute_s, bound.memory_s)
    assert math.isclose(bound.compute_s * peak * 1e12, flops, rel_tol=1e-9)


@given(st.sampled_from(gpu_names()), st.sampled_from(["fp32", "bf16", "fp16"]), st.integers(1, 256))
def test_every_point_sits_on_or_under_the_roof(name, dtype, batch):
    view = linear_layer_roofline(n_in=4096, m_out=1024, batch=batch, dtype=dtype, gpu_name=name)
    for point in view.points:
        assert point.attainable_tflops <= view.roof.peak_tflops
        assert point.attainable_tflops <= point.flop_per_byte * view.roof.bandwidth_tb_per_s * (1 + 1e-12)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "fast"])
def test_bad_rates_are_refused_readably(bad):
    with pytest.raises(ValueError, match="must be a positive number"):
        attainable_tflops(flop_per_byte=bad, peak_tflops=312, bandwidth_tb_per_s=2)
    with pytest.raises(ValueError, match="must be a positive number"):
        ridge_flop_per_byte(peak_tflops=312, bandwidth_tb_per_s=bad)
    with pytest.raises(ValueError, match="must be a positive number"):
        time_bound(flops=bad, moved_bytes=1, peak_tflops=1, bandwidth_tb_per_s=1)


def test_unknown_gpu_dtype_and_sizes_are_refused():
    with pytest.raises(ValueError, match="no GPU called"):
        linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="fp32", gpu_name="Voodoo2")
    with pytest.raises(ValueError, match="Unknown number format"):
        linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="tf32", gpu_name="H200")
    with pytest.raises(ValueError, match="Batch"):
        linear_layer_roofline(n_in=4096, m_out=4096, batch=0, dtype="fp32", gpu_name="H200")
    with pytest.raises(ValueError, match="below the highest"):
        roof_outline(roof(gpu("H200"), "bf16"), min_flop_per_byte=10, max_flop_per_byte=1)
