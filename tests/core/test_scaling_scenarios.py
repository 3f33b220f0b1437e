"""The scaling data file: fleets, tracks, cases and wording, validated at load."""

import json

import pytest

from core import lessons
from core.datafiles import read_json
from core.scaling.scenarios import load_scaling, parse_scaling, track, track_keys
from core.scaling.throughput import ring_allreduce_ms
from core.scaling.wording import PARTS
from core.settings_schema import section


def _raw():
    return read_json("scaling_tracks.json")


def test_four_tracks_and_only_cloud_needs_model_parallelism():
    assert track_keys() == ("cloud", "tinyml", "mobile", "edge")
    assert [track(key).model_parallel for key in track_keys()] == [True, False, False, False]


def test_settings_schema_offers_exactly_the_tracks_and_pools():
    fields = section("scaling")
    assert fields.field("track").choices == track_keys()
    assert fields.field("pool").max == len(track("tinyml").worker_counts) - 1


def test_llama_track_model_cost_comes_from_tokens():
    # 3 x (2 x 8.03e9 parameters x 1,024 tokens) = 49,338 GFLOP per training sample.
    assert track("cloud").model.train_gflop_per_sample == pytest.approx(3 * 2 * 8_030_261_248 * 1024 / 1e9)


def test_fleets_cite_sources_and_use_known_gpus():
    for fleet in load_scaling().fleets.values():
        assert fleet.source and fleet.card.memory_gb > 0
        assert fleet.inter_node_gb_per_s < fleet.intra_node_gb_per_s


def test_pools_are_numbered_from_one():
    cloud = track("cloud")
    assert [cloud.pool_workers(p) for p in (1, 2, 3)] == [32, 128, 256]
    with pytest.raises(ValueError):
        cloud.pool_workers(0)


def test_parts_are_in_order_with_options():
    data = load_scaling()
    assert tuple(data.parts) == PARTS
    assert all(len(p.options) >= 2 and len(p.decisions) >= 2 for p in data.parts.values())


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda raw: raw["tracks"][0].update(worker_counts=[8, 16, 32]), "exactly 4"),
        (lambda raw: raw["tracks"][0].update(worker_counts=[8, 12, 32, 64]), "whole nodes"),
        (lambda raw: raw["tracks"][0].update(worker_counts=[8, 32, 128, 512]), "exceed"),
        (lambda raw: raw["tracks"][0].update(fleet="nowhere"), "unknown fleet"),
        (lambda raw: raw["fleets"][0].update(gpu="Imaginary 9000"), "no GPU"),
        (lambda raw: raw["fleets"][0].update(inter_node_gb_per_s=900), "cannot be faster"),
        (lambda raw: raw["track_models"][0].update(tokens_per_sample=10), "exactly one"),
        (lambda raw: raw["tracks"][0]["straggler"].update(work_multiplier=0.5), "add work"),
        (lambda raw: raw["parts"].reverse(), "in that order"),
        (lambda raw: raw["cases"].update(compute_efficiency=1.5), "cannot exceed 1"),
        (lambda raw: raw["synthesis"].update(model_parallel_plans=["nope"]), "model_parallel_plans"),
    ],
)
def test_broken_data_is_refused_with_a_reason(change, message):
    raw = json.loads(json.dumps(_raw()))
    change(raw)
    with pytest.raises(ValueError, match=message):
        parse_scaling(raw)


def test_plan_labels_flag_what_each_track_cannot_use():
    text = load_scaling().synthesis
    assert text.does_not_fit_note in text.plan_labels(track("cloud"))["data-parallel"]
    assert text.not_needed_note in text.plan_labels(track("edge"))["fit-first"]
    assert text.plan_labels(track("edge"))["data-parallel"] == text.plans["data-parallel"]


def test_the_lab_has_its_time_three_objectives_and_three_takeaways():
    # The parts take 9 + 10 + 10 + 10 + 8 = 47 minutes, and the synthesis the rest of "50 to 55".
    assert sum(part.minutes for part in load_scaling().parts.values()) == 47
    assert "50 to 55" in lessons.sentence("scaling", "time_guidance")
    objectives = lessons.text("scaling", "objectives").splitlines()
    assert [line.split(". ", 1)[0] for line in objectives] == ["1", "2", "3"]
    takeaways = lessons.text("scaling", "takeaways").splitlines()
    assert len(takeaways) == 3 and all(line.startswith("- ") for line in takeaways)


def test_no_synthesis_limitation_claims_the_link_model_ignores_latency_which_it_counts():
    # 8 workers, 1 GB, 25 GB/s: 2 x 7/8 x 1 GB / 25 GB/s = 70 ms of bytes, plus 14 hops of 5 µs = 0.07 ms.
    with_latency = ring_allreduce_ms(payload_bytes=1e9, workers=8, link_gb_per_s=25, latency_us=5)
    assert with_latency == pytest.approx(70.0 + 0.07)
    assert not any("latency" in text.lower() for text in load_scaling().synthesis.limitations.values())
