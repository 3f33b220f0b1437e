"""Part A: ring all-reduce, data-parallel step time, speedup and parallel efficiency."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.scaling.scenarios import track
from core.scaling.throughput import (
    Mode,
    data_parallel_step,
    efficiency_band,
    ring_allreduce_ms,
    scaling_contrast,
    scaling_points,
)


def test_ring_allreduce_worked_by_hand():
    # 1 GB over 8 workers: each GPU moves 2 x 7/8 x 1e9 = 1.75e9 bytes; at 25 GB/s that is 0.07 s.
    assert ring_allreduce_ms(payload_bytes=1e9, workers=8, link_gb_per_s=25) == pytest.approx(70.0)
    # 16 GB of bf16 gradients (8 B parameters) over 32 workers on 12.5 GB/s: 2 x 31/32 x 16e9 / 12.5e9 = 2.48
    # s.
    assert ring_allreduce_ms(payload_bytes=16e9, workers=32, link_gb_per_s=12.5) == pytest.approx(2480.0)
    # One worker has nobody to exchange with.
    assert ring_allreduce_ms(payload_bytes=1e9, workers=1, link_gb_per_s=25) == 0


@pytest.mark.parametrize("bad", [dict(payload_bytes=-1), dict(workers=0), dict(link_gb_per_s=0)])
def test_ring_allreduce_refuses_bad_input(bad):
    args = dict(payload_bytes=1e9, workers=8, link_gb_per_s=25) | bad
    with pytest.raises(ValueError):
        ring_allreduce_ms(**args)


def test_tinyml_step_worked_by_hand():
    tiny = track("tinyml")
    base = data_parallel_step(tiny, workers=8, mode="strong", efficiency=0.5, dtype="bf16")
    # 256 / 8 = 32 clips x 3 x 0.02 GFLOP = 1.92 GFLOP at 0.5 x 989 TFLOP/s = 3.883e-3 ms of arithmetic,
    # far under the floor of 150 kernels x 13.472 µs (the H200's smallest measured kernel) = 2.0208 ms.
    assert 1.92e9 / (0.5 * 989e12) * 1e3 < base.compute_ms == pytest.approx(150 * 13.472e-3, abs=1e-5)
    # 200 k bf16 gradients = 400 kB; one node, so NVLink: 2 x 7 hops x 3 µs + 2 x 7/8 x 4e5 / 450e9 s.
    assert base.communication_ms == pytest.approx(2 * 7 * 3e-3 + 2 * 7 / 8 * 4e5 / 450e9 * 1e3)
    larger = data_parallel_step(tiny, workers=16, mode="strong", efficiency=0.5, dtype="bf16")
    # Two nodes: the ring pays the fabric's 8 µs a hop and runs at its 25 GB/s per GPU.
    assert larger.communication_ms == pytest.approx(2 * 15 * 8e-3 + 2 * 15 / 16 * 4e5 / 25e9 * 1e3)
    assert larger.local_batch == 16 and larger.global_batch == 256


def test_strong_and_weak_hold_different_batches_fixed():
    edge = track("edge")
    strong = data_parallel_step(edge, workers=64, mode="strong", efficiency=0.5, dtype="bf16")
    weak = data_parallel_step(edge, workers=64, mode="weak", efficiency=0.5, dtype="bf16")
    assert strong.global_batch == edge.global_batch and strong.local_batch == edge.global_batch / 64
    assert weak.local_batch == edge.local_batch and weak.global_batch == edge.local_batch * 64


def test_baseline_point_is_exactly_ideal():
    first = scaling_points(track("mobile"), (8, 64), mode="weak", efficiency=0.5, dtype="bf16")[0]
    assert first.speedup == pytest.approx(1.0) and first.efficiency == pytest.approx(1.0)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="Scaling mode"):
        data_parallel_step(track("edge"), workers=8, mode="sideways", efficiency=0.5, dtype="bf16")


@pytest.mark.parametrize(
    "efficiency, band",
    [(0.2, "below-half"), (0.5, "middle"), (0.75, "middle"), (0.9, "above-three-quarters")],
)
def test_efficiency_bands_match_the_prediction_options(efficiency, band):
    assert efficiency_band(efficiency) == band


def _variant(key, parameters, train_gflop, intra, inter):
    base = track(key)
    model = dataclasses.replace(base.model, parameters=parameters, train_gflop_per_sample=train_gflop)
    fleet = dataclasses.replace(
        base.fleet, intra_node_gb_per_s=max(intra, inter), inter_node_gb_per_s=min(intra, inter)
    )
    return dataclasses.replace(base, model=model, fleet=fleet)


variants = st.builds(
    _variant,
    st.sampled_from(["tinyml", "mobile", "edge", "cloud"]),
    st.floats(1e3, 1e11),
    st.floats(1e-3, 1e6),
    st.floats(1, 1000),
    st.floats(1, 1000),
)


@given(variants, st.sampled_from(Mode.ids()), st.floats(0.05, 1.0))
def test_efficiency_never_exceeds_one_and_strong_speedup_never_exceeds_the_worker_ratio(
    variant, mode, efficiency
):
    points = scaling_points(variant, variant.worker_counts, mode=mode, efficiency=efficiency, dtype="bf16")
    for point in points:
        assert point.efficiency <= 1 + 1e-9
        assert point.speedup <= point.workers / variant.base_workers + 1e-9


def test_alpha_beta_all_reduce_by_hand():
    # 4 workers, 1 GB, 10 GB/s, 5 µs: 2 x 3 x 5 µs = 0.03 ms + 2 x 3/4 x 1e9 / 1e10 s = 150 ms.
    assert ring_allreduce_ms(payload_bytes=1e9, workers=4, link_gb_per_s=10, latency_us=5) == pytest.approx(
        150.03
    )
    with pytest.raises(ValueError, match="latency cannot be negative"):
        ring_allreduce_ms(payload_bytes=1, workers=2, link_gb_per_s=1, latency_us=-1)


def test_each_track_answers_part_a_from_its_own_numbers():
    # With latency and the kernel floor, weak scaling pays off for small models and not for the 8B model.
    outcomes = {
        key: scaling_contrast(track(key), mode="weak", pool=1, efficiency=0.5, dtype="bf16").outcome
        for key in ("tinyml", "edge", "cloud")
    }
    assert outcomes == {"tinyml": "above-three-quarters", "edge": "middle", "cloud": "below-half"}
