"""Part C: three equal-device layouts and where each step's time goes."""

from typing import Any

import pytest

from core.scaling.layout import fastest_layout, layout_timing, layouts
from core.scaling.scenarios import load_scaling

LAB = load_scaling().fleets["lab_64"]
LLAMA_8B: dict[str, Any] = dict(parameters=8.03e9, layers=32, hidden_size=4096)
CASE: dict[str, Any] = dict(
    zero_stage=3, seq_len=1024, global_batch=256, micro_batch_count=8, efficiency=0.5, dtype="bf16"
)


def _timing(key, fleet=LAB, **changes):
    return layout_timing(fleet=fleet, layout=layouts(fleet)[key], **(LLAMA_8B | CASE | changes))


def test_every_layout_uses_the_whole_fleet():
    for fleet in load_scaling().fleets.values():
        for layout in layouts(fleet).values():
            assert layout.dp * layout.tp * layout.pp == fleet.total_gpus
    assert [layout.label for layout in layouts(LAB).values()] == [
        "TP8 · PP1 · DP8",
        "TP16 · PP1 · DP4",
        "TP8 · PP2 · DP4",
    ]


def test_within_node_layout_worked_by_hand():
    timing = _timing("within")
    # Compute: 6 x 8.03e9 x 256 x 1024 FLOP over 64 GPUs at 0.5 x 989 TFLOP/s = 399.08 ms.
    assert timing.compute_ms == pytest.approx(6 * 8.03e9 * 256 * 1024 / 64 / (0.5 * 989e12) * 1e3)
    # DP: each GPU holds 1/8 of the bf16 gradients (2.0075 GB); ring over 8 nodes at 25 GB/s,
    # x 1.5 for ZeRO-3: 2 x 7/8 x 2.0075e9 / 25e9 x 1.5 = 210.79 ms.
    assert timing.dp_communication_ms == pytest.approx(2 * 7 / 8 * 2.0075e9 / 25e9 * 1.5 * 1e3)
    # TP: micro-batches of 256 / (8 x 8) = 4 sequences; 4 x 1024 x 4096 x 2 bytes per all-reduce over
    # NVLink; 32 layers x 8 micro-batches x 4 all-reduces of 2 x 7/8 x 33,554,432 / 450e9 s each.
    assert timing.tp_communication_ms == pytest.approx(32 * 8 * 4 * 2 * 7 / 8 * 33_554_432 / 450e9 * 1e3)
    assert timing.bubble_ms == 0 and not timing.tp_crosses_nodes


def test_cross_node_tensor_parallel_pays_the_fabric():
    within, cross = _timing("within"), _timing("cross")
    assert cross.tp_crosses_nodes
    assert cross.tp_communication_ms > 10 * within.tp_communication_ms
    assert cross.compute_ms == pytest.approx(within.compute_ms)


def test_two_stage_pipeline_adds_an_eighth_of_compute_as_bubble():
    pipeline = _timing("pipeline")
    assert pipeline.bubble_ms == pytest.approx(pipeline.compute_ms / 8)  # (2 - 1) / 8 micro-batches
    assert pipeline.step_ms == pytest.approx(pipeline.compute_ms + pipeline.exposed_overhead_ms)


def test_zero3_costs_half_again_as_much_data_parallel_traffic():
    assert _timing("within").dp_communication_ms == pytest.approx(
        1.5 * _timing("within", zero_stage=2).dp_communication_ms
    )


def test_fastest_layout_is_the_minimum_step():
    timings = {key: _timing(key) for key in ("within", "cross", "pipeline")}
    best = fastest_layout(timings)
    assert all(timings[best].step_ms <= t.step_ms for t in timings.values())


def test_a_layout_that_misses_gpus_or_splits_layers_unevenly_is_refused():
    with pytest.raises(ValueError, match="all 64 GPUs"):
        layout_timing(
            fleet=LAB, layout=layouts(load_scaling().fleets["research_256"])["within"], **(LLAMA_8B | CASE)
        )
    with pytest.raises(ValueError, match="evenly"):
        _timing("pipeline", layers=33)
