"""The roofline chart: log–log fixed axes, the roof, the ridge marked, and points with tooltips."""

import pytest

from charts.roofline import FLOP_PER_BYTE_DOMAIN, POINT_COLOURS, TFLOPS_DOMAIN, roofline_chart
from core.kernel_times import measured_points, measured_rows
from core.roofline import linear_layer_roofline


def _spec(dtype="fp32", gpu_name="A100 80GB SXM", batch=32):
    view = linear_layer_roofline(n_in=4096, m_out=4096, batch=batch, dtype=dtype, gpu_name=gpu_name)
    return roofline_chart(view.roof, view.points).to_dict()


def _leaves(spec):
    for layer in spec.get("layer", []):
        yield from _leaves(layer) if "layer" in layer else [layer]


def _data(spec, index):
    """Rows of a top-level layer: 0 the roof, 1 the ridge, 2 the points."""
    return spec["datasets"][spec["layer"][index]["data"]["name"]]


def test_every_axis_is_log_with_a_fixed_domain_and_units():
    for layer in _leaves(_spec()):
        x = layer["encoding"]["x"]
        assert x["scale"] == {"type": "log", "domain": list(FLOP_PER_BYTE_DOMAIN)}
        assert "FLOP/byte" in x["title"]
        if "y" in layer["encoding"]:
            y = layer["encoding"]["y"]
            assert y["scale"] == {"type": "log", "domain": list(TFLOPS_DOMAIN)}
            assert "TFLOP/s" in y["title"]


def test_layers_roof_ridge_and_points_each_with_tooltips():
    spec = _spec()
    marks = [layer["mark"]["type"] for layer in _leaves(spec)]
    assert marks == ["line", "rule", "point", "text", "point"]
    assert all(layer["encoding"].get("tooltip") for layer in _leaves(spec))
    assert spec["title"]["text"] == "Roofline: A100 80GB SXM, fp32"


def test_point_tooltips_show_intensity_rate_regime_and_time():
    points = list(_leaves(_spec()))[-1]
    fields = [t["field"] for t in points["encoding"]["tooltip"]]
    assert fields == [
        "Operation",
        "FLOP/byte",
        "Attainable TFLOP/s",
        "Regime",
        "Time bound",
        "GFLOP",
        "MB moved",
    ]
    assert points["encoding"]["color"]["scale"]["range"] == list(POINT_COLOURS)


def test_the_ridge_and_roof_move_with_the_gpu_and_dtype():
    def ridge_and_peak(spec):
        [row] = _data(spec, 1)
        return row["Ridge FLOP/byte"], row["Peak TFLOP/s"]

    fp32 = ridge_and_peak(_spec("fp32"))
    bf16 = ridge_and_peak(_spec("bf16"))
    h200 = ridge_and_peak(_spec("bf16", "H200"))
    assert fp32[1] == 19.5 and bf16[1] == 312 and h200[1] == 989
    assert fp32[0] == pytest.approx(19.5 / 2.039) and h200[0] == pytest.approx(989 / 4.8)
    assert _data(_spec("bf16", "H200"), 0)[-1]["TFLOP/s"] == 989  # the ceiling moved with the card


def test_the_point_data_is_the_table_data():
    rows = _data(_spec(batch=1), 2)
    assert [r["Operation"] for r in rows] == ["Your linear layer", "4096×4096 matmul", "GELU", "LayerNorm"]
    assert rows[0]["Regime"] == "memory-bound"  # batch 1: each weight is used once, about 0.5 FLOP/byte
    assert rows[0]["FLOP/byte"] == pytest.approx(0.5, abs=0.01)


def test_measured_kernels_are_a_layer_of_hollow_squares_only_when_given():
    view = linear_layer_roofline(n_in=4096, m_out=4096, batch=32, dtype="bf16", gpu_name="H200")
    plain = roofline_chart(view.roof, view.points).to_dict()
    rows = measured_rows(measured_points("bf16"))
    spec = roofline_chart(view.roof, view.points, rows).to_dict()
    assert len(spec["layer"]) == len(plain["layer"]) + 1
    square = spec["layer"][-1]
    assert square["mark"]["shape"] == "square" and square["mark"]["filled"] is False
    assert square["data"]["name"] == "measured" and len(spec["datasets"]["measured"]) == len(rows)
    assert "measured" not in plain["datasets"]
