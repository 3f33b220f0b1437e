"""Workload costs: the lesson's linear layer, the 4096 matmul, GELU, LayerNorm, fusion, attention."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.workloads import attention_scores, fused_elementwise, gelu, layer_norm, linear_layer, square_matmul

sizes = st.integers(min_value=1, max_value=8192)
dtypes = st.sampled_from(["fp32", "bf16", "fp16"])


def test_the_lesson_default_layer():
    layer = linear_layer(n_in=4096, m_out=4096, batch=32, dtype="fp32")
    assert layer.macs == 536_870_912  # 32 × 4096 × 4096 = 2^5 · 2^12 · 2^12 = 2^29
    assert layer.flops == 1_073_741_824  # 2 per MAC
    assert round(layer.gflop, 2) == 1.07
    assert layer.parameters == 16_781_312  # 4096 × 4096 + 4096 biases
    assert round(layer.weight_mb(4)) == 67  # 16,781,312 × 4 B = 67.1 MB
    assert round(layer.weight_mb(2)) == 34  # 16,781,312 × 2 B = 33.6 MB
    assert layer.training_flops == 3 * 1_073_741_824
    assert round(layer.parameters_millions, 1) == 16.8


def test_the_default_layer_traffic_and_intensity():
    # reads 32×4096 inputs + 16,781,312 parameters, writes 32×4096 outputs, 4 bytes each
    forward = linear_layer(n_in=4096, m_out=4096, batch=32, dtype="fp32").forward
    assert forward.read_bytes == (131_072 + 16_781_312) * 4
    assert forward.written_bytes == 131_072 * 4
    assert forward.flop_per_byte == pytest.approx(1_073_741_824 / 68_173_824)  # ≈ 15.75
    half = linear_layer(n_in=4096, m_out=4096, batch=32, dtype="bf16").forward
    assert half.flop_per_byte == pytest.approx(2 * forward.flop_per_byte)


def test_the_lesson_matmul():
    matmul = square_matmul(size=4096, dtype="fp32")
    assert round(matmul.gflop) == 137  # 2 × 4096³ = 137,438,953,472
    assert round(matmul.read_mb) == 134  # two matrices of 4096² × 4 B = 67.1 MB each
    assert matmul.flop_per_byte_read == 1024  # 2·4096³ / (2·4096²·4) = 4096 / 4: "roughly 1,000"
    assert matmul.flop_per_byte == pytest.approx(4096 / 6)  # the 67 MB result written too: ≈ 683


def test_the_lesson_gelu_is_well_under_one_flop_per_byte():
    activation = gelu(elements=4096 * 4096, dtype="fp32")
    assert round(activation.read_mb) == round(activation.written_mb) == 67
    assert activation.flop_per_byte == 5 / 8  # 5 FLOPs per element over 4 B read + 4 B written
    assert activation.flop_per_byte < 1


def test_layer_norm_reads_the_tensor_and_its_gain_and_bias():
    norm = layer_norm(rows=4096, width=4096, dtype="bf16")
    assert norm.read_bytes == 4096 * 4096 * 2 + 2 * 4096 * 2
    assert norm.written_bytes == 4096 * 4096 * 2
    assert norm.flops == 7 * 4096 * 4096
    assert norm.flop_per_byte < 2


def test_fusing_three_ops_moves_a_third_of_the_bytes():
    fusion = fused_elementwise(ops=3, elements=4096 * 4096, dtype="fp32")
    assert fusion.separate.moved_bytes == 3 * 2 * 4096 * 4096 * 4  # each kernel reads and writes 67 MB
    assert fusion.fused.flops == fusion.separate.flops
    assert fusion.traffic_ratio == pytest.approx(1 / 3) and round(fusion.traffic_percent) == 33


def test_one_heads_scores_at_8192():
    scores = attention_scores(seq_len=8192, dtype="fp32")
    assert scores.matrix_bytes == 8192**2 * 4  # 268 MB
    assert round(scores.round_trip_mb) == 537


@given(
    sizes, sizes, st.integers(1, 256), dtypes, st.sampled_from(["n_in", "m_out", "batch"]), st.integers(2, 5)
)
def test_macs_scale_linearly_in_each_dimension(n_in, m_out, batch, dtype, which, factor):
    base = {"n_in": n_in, "m_out": m_out, "batch": batch}
    scaled = {**base, which: base[which] * factor}
    assert linear_layer(**scaled, dtype=dtype).macs == factor * linear_layer(**base, dtype=dtype).macs


@given(sizes, sizes, st.integers(1, 256), dtypes)
def test_parameters_do_not_depend_on_the_batch_and_intensity_is_positive(n_in, m_out, batch, dtype):
    layer = linear_layer(n_in=n_in, m_out=m_out, batch=batch, dtype=dtype)
    assert layer.parameters == linear_layer(n_in=n_in, m_out=m_out, batch=1, dtype=dtype).parameters
    assert layer.forward.flop_per_byte > 0 and layer.flops == 2 * layer.macs


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4096", None])
def test_bad_sizes_are_refused_readably(bad):
    with pytest.raises(ValueError, match="whole number above zero"):
        linear_layer(n_in=bad, m_out=4096, batch=32, dtype="fp32")
    with pytest.raises(ValueError, match="whole number above zero"):
        square_matmul(size=bad, dtype="fp32")
    with pytest.raises(ValueError, match="whole number above zero"):
        gelu(elements=bad, dtype="fp32")


def test_unknown_dtype_is_refused():
    with pytest.raises(ValueError, match="Unknown number format"):
        linear_layer(n_in=4096, m_out=4096, batch=32, dtype="float32")
