"""The estimate-versus-PyTorch chart: a titled log axis, term colours shared with the budget, tooltips with
the error."""

from charts.estimate_check import (
    SOURCE_OPACITIES,
    SOURCE_SHAPES,
    SOURCE_SIZES,
    SOURCES,
    check_frame,
    estimate_check_chart,
    gap_frame,
)
from charts.memory import TERM_COLOURS
from core.estimate_check.compare import estimate_check
from core.memory import TERM_LABELS

LLAMA_BF16 = "llama-h64-l2-s64-b2-bf16-adam-none-explicit"
SGD_FULL = "gpt2-h64-l2-s64-b2-fp32-sgd_momentum-none-explicit"


def spec_of(config_id: str) -> dict:
    return estimate_check_chart(estimate_check(config_id), title="Estimate and PyTorch").to_dict()


def test_points_sit_on_a_log_byte_axis_coloured_like_the_budget():
    spec = spec_of(LLAMA_BF16)
    assert spec["title"] == "Estimate and PyTorch"
    gaps, points = spec["layer"]
    assert (gaps["mark"]["type"], points["mark"]["type"]) == ("rule", "point")
    x = points["encoding"]["x"]
    assert (
        x["title"] == "Bytes (log scale)"
        and x["scale"] == {"type": "log"}
        and gaps["encoding"]["x"]["scale"] == {"type": "log"}
    )
    colours = points["encoding"]["color"]["scale"]
    present = ["parameters", "gradients", "optimizer_state", "activations"]
    assert colours == {
        "domain": [TERM_LABELS[t] for t in present],
        "range": [TERM_COLOURS[t] for t in present],
    }
    # One "Source" legend: a wide pale estimate with PyTorch's small solid diamond drawn over it.
    for channel, values in (("shape", SOURCE_SHAPES), ("size", SOURCE_SIZES), ("opacity", SOURCE_OPACITIES)):
        encoding = points["encoding"][channel]
        assert (encoding["field"], encoding["title"]) == ("source", "Source")
        assert encoding["scale"] == {"domain": list(SOURCES), "range": list(values)}
    assert SOURCE_SIZES[0] > SOURCE_SIZES[1] and SOURCE_OPACITIES[0] < SOURCE_OPACITIES[1]


def test_every_mark_has_a_tooltip_with_the_relative_error():
    for view in spec_of(LLAMA_BF16)["layer"]:
        titles = [t["title"] for t in view["encoding"]["tooltip"]]
        assert "Term" in titles and "Relative error" in titles


def test_the_rows_are_the_checks_numbers_and_zeros_are_left_off_the_log_axis():
    check = estimate_check(LLAMA_BF16)
    frame = check_frame(check)
    blocks = frame[frame["term"] == "Saved activations in the blocks"].set_index("source")
    assert blocks.loc["Estimate", "bytes"] == 753_664 and blocks.loc["PyTorch", "bytes"] == 952_320
    assert set(blocks["error"]) == {"-20.9%"}
    # Step counters: PyTorch holds 68 bytes, the estimate none, so only PyTorch's point is drawn.
    counters = frame[frame["term"] == "Optimizer step counters"]
    assert list(counters["source"]) == ["PyTorch"]
    # Grey segments only where both sides exist and differ: the two activation terms.
    assert list(gap_frame(check)["term"]) == [
        "Saved activations in the blocks",
        "Saved activations outside the blocks",
    ]
    # SGD keeps no step counters at all: that term has no point on either side.
    assert "Optimizer step counters" not in set(check_frame(estimate_check(SGD_FULL))["term"])
