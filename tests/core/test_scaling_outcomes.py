"""Each track's right answers follow from its own model, fleet and numbers, worked here by hand from
data/scaling_tracks.json, and a prediction is graded on the track it was locked on."""

import math

import pytest

from core.gpus import gpu, peak_tflops
from core.kernel_times import small_kernel_floor_us
from core.scaling import outcomes
from core.scaling.evidence import prediction_track, record_prediction_track
from core.scaling.outcomes import graded_outcomes, part_contrasts
from core.scaling.scenarios import track, track_keys

H100_BF16_TFLOPS = 989.0  # the H100 SXM preset's dense BF16 peak
EFFICIENCY = 0.5  # cases.compute_efficiency


def _strong_step_ms(key: str, workers: int) -> float:
    """Part A's strong-scaling step, from the data file's figures (the compute floor or the arithmetic,
    then an α–β ring all-reduce of BF16 gradients on the node link or the fabric)."""
    chosen = track(key)
    fleet, model = chosen.fleet, chosen.model
    arithmetic_ms = chosen.global_batch / workers * model.train_gflop_per_sample * 1e9
    arithmetic_ms /= H100_BF16_TFLOPS * 1e12 * EFFICIENCY / 1e3
    floor_ms = model.kernels_per_step * small_kernel_floor_us() / 1e3
    spans = workers > fleet.gpus_per_node
    latency_us = fleet.inter_node_latency_us if spans else fleet.intra_node_latency_us
    gb_per_s = fleet.inter_node_gb_per_s if spans else fleet.intra_node_gb_per_s
    moved_bytes = 2 * (workers - 1) / workers * model.parameters * 2
    return max(arithmetic_ms, floor_ms) + 2 * (workers - 1) * latency_us / 1e3 + moved_bytes / gb_per_s / 1e6


def _part_e_seconds(key: str) -> tuple[float, float]:
    """Seconds to target at the defaults (strong, the second pool): strict pays the fleet's lag every step,
    dropping pays the track's extra steps."""
    chosen = track(key)
    step_ms = _strong_step_ms(key, chosen.worker_counts[1])
    steps = math.ceil(
        chosen.convergence.minimum_steps * (1 + chosen.convergence.critical_batch / chosen.global_batch)
    )
    strict_s = (step_ms + chosen.fleet.straggler_lag_ms) * steps / 1e3
    drop_s = step_ms * math.ceil(steps * chosen.straggler.work_multiplier) / 1e3
    return strict_s, drop_s


def test_the_hand_worked_figures_use_the_presets_peak():
    assert peak_tflops(gpu("H100 SXM"), "bf16") == H100_BF16_TFLOPS


def test_tinyml_drops_stragglers_because_its_step_is_shorter_than_the_lag_it_would_wait_for():
    # 16 GPUs: 150 kernels x 13.47 µs = 2.02 ms of compute (the floor; 0.96 GFLOP would take 0.002 ms),
    # plus 2 x 15 x 8 µs + 2 x 15/16 x 0.4 MB / 25 GB/s = 0.27 ms: a 2.29 ms step.
    # Strict: (2.29 + 2) ms x 1,200 x (1 + 256/256) = 2,400 steps = 10.3 s.
    # Dropping: 2.29 ms x ceil(2,400 x 1.35) = 3,240 steps = 7.4 s.
    strict_s, drop_s = _part_e_seconds("tinyml")
    assert (strict_s, drop_s) == pytest.approx((10.30, 7.42), abs=0.01)
    contrasts = part_contrasts({"track": "tinyml"})
    assert contrasts.e.strict.time_to_target_h * 3600 == pytest.approx(strict_s)
    assert contrasts.e.drop.time_to_target_h * 3600 == pytest.approx(drop_s)
    assert contrasts.outcomes()["E"] == "drop"


def test_mobile_and_cloud_keep_strict_synchronisation_because_their_steps_dwarf_the_lag():
    # Mobile, 16 GPUs: 600 x 13.47 µs = 8.08 ms + 0.24 + 2 x 15/16 x 7 MB / 25 GB/s = 0.765 ms: 8.85 ms.
    # Strict: 10.85 ms x 4,800 steps = 52.1 s; dropping: 8.85 ms x 6,720 steps = 59.5 s.
    assert _part_e_seconds("mobile") == pytest.approx((52.07, 59.46), abs=0.01)
    # Cloud, 32 GPUs: a 3.29 s step; its 10 ms lag is 0.3% of it, 55% more steps cost far more.
    cloud_strict_s, cloud_drop_s = _part_e_seconds("cloud")
    assert cloud_drop_s / cloud_strict_s == pytest.approx(1.55 * 3288.8 / 3298.8, rel=1e-3)
    assert part_contrasts({"track": "mobile"}).outcomes()["E"] == "strict"
    assert part_contrasts({"track": "cloud"}).outcomes()["E"] == "strict"


@pytest.mark.parametrize("key", ["cloud", "tinyml", "mobile", "edge"])
def test_every_tracks_part_e_answer_is_the_faster_of_its_own_two_times(key):
    strict_s, drop_s = _part_e_seconds(key)
    assert part_contrasts({"track": key}).outcomes()["E"] == (
        "drop" if drop_s < 0.99 * strict_s else "strict"
    )


def test_weak_scaling_is_near_ideal_for_tinyml_and_far_from_it_for_cloud():
    # TinyML, weak, 8 -> 16 GPUs: 2.02 ms compute each; communication 2 x 7 x 3 µs + 0.4 MB x 7/4 / 450 GB/s
    # = 0.0436 ms on one node, 0.27 ms across two. Efficiency = (2.0644 / 2.2908) = 0.901: above 0.75.
    tiny = part_contrasts({"track": "tinyml", "mode": "weak"})
    assert tiny.a.result.efficiency == pytest.approx(2.0644 / 2.2908, abs=1e-3)
    assert tiny.a.outcome == "above-three-quarters"
    # Cloud moves 16 GB of gradients over 12.5 GB/s Ethernet each step: efficiency 0.16.
    assert part_contrasts({"track": "cloud", "mode": "weak"}).a.outcome == "below-half"


def test_part_b_fits_on_clouds_four_nodes_and_not_on_the_two_of_the_small_tracks():
    # Llama-3-70B, TP 8 inside a node, ZeRO-1 over the nodes of part A's larger pool (the defaults):
    # Cloud 32 GPUs = 4 nodes, 64.9 GB; TinyML, Mobile and Edge 16 GPUs = 2 nodes, 91.3 GB > 85.9 GB
    # (worked term by term in tests/core/test_scaling_capacity.py).
    for key, nodes, total_gb, answer in (("cloud", 4, 64.85, "optimizer"), ("tinyml", 2, 91.31, "oom")):
        part_b = part_contrasts({"track": key}).b
        assert part_b.dp == track(key).worker_counts[1] // 8 == nodes
        assert part_b.result.verdict.total_gb == pytest.approx(total_gb, abs=0.01)
        assert part_b.outcome == answer
    # The whole lab fleet (pool 3, 64 GPUs = 8 nodes) fits TinyML's case too.
    assert part_contrasts({"track": "tinyml", "pool": 3}).b.outcome == "optimizer"


def test_the_answers_differ_between_tracks_where_the_numbers_do():
    answers = {key: graded_outcomes({"track": key}) for key in track_keys()}
    assert answers["tinyml"]["E"] != answers["cloud"]["E"]
    assert answers["tinyml"]["B"] != answers["cloud"]["B"]
    weak = {key: graded_outcomes({"track": key, "mode": "weak"})["A"] for key in track_keys()}
    assert len(set(weak.values())) == 3  # below half, between, above three quarters


def test_a_prediction_is_graded_on_the_track_it_was_locked_on():
    tracks = record_prediction_track({}, "E", "tinyml")
    assert record_prediction_track(tracks, "E", "cloud") == {"E": "tinyml"}  # the first track stands
    assert prediction_track(tracks, "E", current="cloud") == "tinyml"
    assert prediction_track(tracks, "A", current="cloud") == "cloud"  # none recorded: the current one
    assert prediction_track({"E": "atlantis"}, "E", current="edge") == "edge"
    graded = graded_outcomes({"track": "cloud"}, tracks)
    assert graded["E"] == "drop" and graded_outcomes({"track": "cloud"})["E"] == "strict"
    assert graded["A"] == graded_outcomes({"track": "cloud"})["A"]


def test_an_unknown_track_cannot_be_recorded():
    with pytest.raises(ValueError, match="no track"):
        record_prediction_track({}, "A", "atlantis")


def test_the_same_settings_give_every_learner_the_one_worked_out_result() -> None:
    first = part_contrasts({"track": "edge", "micro_batches": 8})
    # Defaults filled in, keys in another order, and a stored value the contrasts never read.
    same = part_contrasts({"micro_batches": 8, "track": "edge", "mode": "strong", "unrelated": "x"})
    assert same is first
    assert first == outcomes._compute(outcomes.current_settings({"track": "edge"}))


def test_another_setting_gives_another_result() -> None:
    cloud, edge = part_contrasts({"track": "cloud"}), part_contrasts({"track": "edge"})
    assert cloud.track.key == "cloud" and edge.track.key == "edge"
    assert part_contrasts({"recompute": "selective"}) != part_contrasts({"recompute": "full"})
