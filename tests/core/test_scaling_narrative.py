"""The figures each part's result sentence names (real tracks and cases, worked by hand), every sentence
template filled with them, and the pickers' labels. The tests check numbers, not wording.

Shared inputs (data/scaling_tracks.json): H100 SXM at 50% of its 989 TFLOP/s bf16 peak, NVLink at
450 GB/s inside a node; the lab fleet has 8 nodes of 8 GPUs joined at 25 GB/s per GPU.
"""

import pickle
from dataclasses import replace

import pytest

from core import lessons
from core.memory import budget_verdict
from core.scaling import capacity, layout, narrative, pipeline, quality, throughput
from core.scaling.scenarios import load_scaling, track, track_label

DATA = load_scaling()
CASES = DATA.cases
LAB = DATA.fleets["lab_64"]


def _part_a(key, *, pool=1, mode="strong"):
    return throughput.scaling_contrast(
        track(key), mode=mode, pool=pool, efficiency=CASES.compute_efficiency, dtype=CASES.dtype
    )


def test_part_a_sentence_for_tinyml_on_two_nodes():
    # DS-CNN, 200 k parameters, 3 x 0.02 GFLOP per clip, global batch 256.
    # Compute is held at the floor of 150 kernels x 13.472 µs = 2.0208 ms on any pool (the arithmetic is
    # 0.002 to 0.004 ms). 16 GPUs: the ring leaves the node, 2 x 15 x 8 µs + 2 x 15/16 x 400 kB / 25 GB/s
    # = 0.24 + 0.03 = 0.27 ms; step 2.2908 ms. 8 GPUs: 2 x 7 x 3 µs + 2 x 7/8 x 400 kB / 450 GB/s
    # = 0.0436 ms; step 2.0644 ms. Speedup 2.0644 / 2.2908 = 0.901; efficiency 0.901 x 8 / 16 = 0.45.
    figures = narrative.scaling_figures(_part_a("tinyml"))
    assert figures == {
        "workers": 16,
        "step": "2.29 ms",
        "communication": "0.270 ms",
        "speedup": pytest.approx(2.0644 / 2.2908, abs=1e-4),
        "baseline_workers": 8,
        "efficiency": pytest.approx(2.0644 / 2.2908 / 2, abs=1e-4),
    }
    sentence = lessons.sentence("scaling", "part_a_summary", **figures)
    assert all(shown in sentence for shown in ("16", "2.29 ms", "0.270 ms", "0.90", "8", "0.45"))


def test_part_b_sentence_for_70b_under_zero_1():
    # Per GPU after TP over 8: 70,553,706,496 / 8 = 8.82 G parameters. Replicated: 2 + 2 + 4 + 8 bytes each
    # = 17.64 + 17.64 + 35.28 + 70.55 GB, activations 0.24 GB (full recomputation), a 5% gradient bucket
    # 0.88 GB, 1 GB workspace and 1 GB overhead = 144.2 GB. ZeRO-1 cuts the master copy and moments by
    # 8: 4.41 + 8.82 GB, so 51.6 GB. The 2-byte weights (17.6 GB) now come first, tied with gradients.
    contrast = capacity.capacity_contrast(fleet=LAB, cases=CASES, zero_stage=1, recompute="full", gpus=64)
    figures = narrative.capacity_figures(contrast)
    assert figures == {
        "replicated_gb": pytest.approx(144.2, abs=0.05),
        "plan": "ZeRO-1",
        "plan_gb": pytest.approx(51.6, abs=0.05),
        "device_gb": pytest.approx(85.9, abs=0.05),  # 80 GiB
        "largest": "parameters",
        "largest_gb": pytest.approx(17.6, abs=0.05),
    }
    sentence = lessons.sentence("scaling", "part_b_fits", **figures)
    assert all(shown in sentence for shown in ("144.2 GB", "ZeRO-1", "51.6 GB", "86 GB", "(17.6 GB)"))


def test_part_b_sentence_says_when_a_plan_does_not_fit():
    # A ZeRO stage that still overflows HBM: shrink the card to 40 GB and ZeRO-1's 51.6 GB no longer fits.
    small = capacity.capacity_contrast(fleet=LAB, cases=CASES, zero_stage=1, recompute="full", gpus=64)
    shrunk = capacity.MemoryPlan(
        label=small.result.label,
        terms=small.result.terms,
        verdict=budget_verdict(small.result.terms, device_gb=40),
    )
    figures = narrative.capacity_figures(replace(small, result=shrunk))
    assert (figures["plan_gb"], figures["device_gb"]) == (pytest.approx(51.6, abs=0.05), 40)
    assert "51.6 GB of 40 GB" in lessons.sentence("scaling", "part_b_does_not_fit", **figures)


def _layout_against(alternative: str) -> layout.LayoutContrast:
    """The lab cluster's part C baseline set against `alternative`."""
    return layout.layout_contrast(
        fleet=LAB,
        case=CASES.layout,
        alternative=alternative,
        efficiency=CASES.compute_efficiency,
        dtype=CASES.dtype,
    )


def test_part_c_sentence_for_tensor_parallel_across_two_nodes():
    # Llama 3 8B, 256 x 1,024 tokens, 8 micro-batches, ZeRO-3. Compute 399.1 ms in every layout.
    # Within a node: DP 210.8 ms, TP 32 x 8 x 4 x (2 x 7/8 x 33.6 MB / 450 GB/s) = 133.6 ms -> 743.5 ms.
    # TP16 over two nodes: DP 2 x 3/4 x 1.004 GB / 25 GB/s x 1.5 = 90.3 ms, TP 1,024 x (2 x 15/16 x 67.1 MB
    # / 25 GB/s) = 5,154.0 ms -> 5,643.4 ms.
    contrast = _layout_against("cross")
    figures = narrative.layout_figures(contrast)
    assert figures == {
        "layout": "TP16 · PP1 · DP4",
        "link": "between nodes",
        "tp_ms": pytest.approx(5154.0, abs=0.05),
        "baseline_tp_ms": pytest.approx(133.6, abs=0.05),
        "baseline_link": "inside a node",
        "step_ms": pytest.approx(5643.4, abs=0.05),
        "baseline_step_ms": pytest.approx(743.5, abs=0.05),
    }
    sentence = lessons.sentence("scaling", "part_c_summary", **figures)
    assert all(shown in sentence for shown in ("5,154.0 ms", "133.6 ms", "5,643.4 ms", "743.5 ms"))


def test_part_c_sentence_for_two_pipeline_stages_names_the_gradient_traffic_they_halve():
    # TP8 · PP2 · DP4: TP stays inside a node, 16 x 8 x 4 all-reduces of twice the samples = 133.6 ms as the
    # baseline. Each GPU's gradients: 8.03 G parameters / 16 x 2 bytes = 1.004 GB, half the baseline's 2.008
    # GB, in a ring of 4 instead of 8: 2 x 3/4 x 1.004 GB / 25 GB/s x 1.5 = 90.3 ms against 210.8 ms. Bubble
    # 1/8 of 399.1 ms = 49.9 ms. Step 399.1 + 90.3 + 133.6 + 49.9 = 672.9 ms against 743.5 ms.
    contrast = _layout_against("pipeline")
    figures = narrative.two_stage_figures(contrast)
    assert figures == {
        "layout": "TP8 · PP2 · DP4",
        "stages": 2,
        "tp_ms": pytest.approx(133.6, abs=0.05),
        "dp": 4,
        "baseline_dp": 8,
        "dp_ms": pytest.approx(90.3, abs=0.05),
        "baseline_dp_ms": pytest.approx(210.8, abs=0.05),
        "bubble_ms": pytest.approx(49.9, abs=0.05),
        "step_ms": pytest.approx(672.9, abs=0.05),
        "baseline_step_ms": pytest.approx(743.5, abs=0.05),
    }
    assert contrast.outcome == "pipeline"
    # The same figures when TP over two nodes is the one selected: the pipeline still wins, and says why.
    assert narrative.two_stage_figures(replace(contrast, alternative="cross")) == figures
    sentence = lessons.sentence("scaling", "part_c_two_stage_summary", **figures)
    assert all(shown in sentence for shown in ("90.3 ms", "210.8 ms", "49.9 ms", "672.9 ms", "743.5 ms"))


def test_part_b_refusals_name_a_plan_that_fits_when_the_selected_one_does_not():
    two_nodes = capacity.capacity_contrast(fleet=LAB, cases=CASES, zero_stage=1, recompute="full", gpus=16)
    carry = narrative.refusal_figures(two_nodes, "shard")
    assert (carry["plan"], carry["plan_gb"]) == ("ZeRO-1", pytest.approx(91.3, abs=0.05))
    assert (carry["fitting_plan"], carry["fitting_gb"]) == (
        "ZeRO-3 with full recomputation",
        pytest.approx(73.2, abs=0.05),
    )
    none = narrative.refusal_figures(two_nodes, "none")
    assert (none["plan"], none["plan_gb"]) == (
        "ZeRO-3 with full recomputation",
        pytest.approx(73.2, abs=0.05),
    )


def test_part_d_sentence_for_eight_micro_batches():
    # 8 stages: bubble 7/9 = 0.778 with 2 micro-batches, 7/15 = 0.467 with 8. Each retained micro-batch holds
    # 10.20 GB on the first stage; model state 2.01 + 2.01 + 4.02 + 8.03 GB, buffers 0.10 + 0.13 GB and 2 GB
    # of workspace and overhead: 38.7 GB with 2 retained, 38.7 + 6 x 10.20 = 99.9 GB with 8.
    contrast = pipeline.pipeline_contrast(fleet=LAB, cases=CASES, micro_batches=8)
    figures = narrative.pipeline_figures(contrast)
    assert figures == {
        "baseline_bubble": pytest.approx(7 / 9),
        "bubble": pytest.approx(7 / 15),
        "retained": 8,
        "baseline_retained": 2,
        "memory_gb": pytest.approx(99.9, abs=0.05),
        "baseline_memory_gb": pytest.approx(38.7, abs=0.05),
    }
    sentence = lessons.sentence("scaling", "part_d_summary", **figures)
    assert all(shown in sentence for shown in ("0.778", "0.467", "99.9 GB", "38.7 GB"))


def test_part_e_sentence_for_cloud_on_32_gpus():
    # Part A on 32 GPUs, strong: 798.2 ms compute + 2 x 31 x 20 µs + 2 x 31/32 x 16.06 GB / 12.5 GB/s
    # = 1.24 + 2,489.4 ms -> 3,288.8 ms. Steps: 2,500 x (1 + 2,048 / 256) = 22,500 -> 20.6 h.
    # Strict waits the 10 ms lag of the research fleet: 3,298.8 ms x 22,500 = 20.6 h.
    # Dropping: 3,288.8 ms x ceil(22,500 x 1.55) = 34,875 steps = 31.9 h = 1.33 days. Both in days, the
    # longer one's unit: 20.6 h = 0.859 days.
    cloud, step = track("cloud"), _part_a("cloud").result.step
    comparison = quality.compare_policies(
        step_ms=step.step_ms,
        global_batch=step.global_batch,
        convergence=cloud.convergence,
        straggler=cloud.straggler,
    )
    figures = narrative.quality_figures(comparison)
    assert figures == {
        "strict_time": "0.859 days",
        "strict_steps": 22_500,
        "drop_time": "1.33 days",
        "drop_steps": 34_875,
    }
    sentence = lessons.sentence("scaling", "part_e_summary", **figures)
    assert all(shown in sentence for shown in ("0.859 days", "22,500", "1.33 days", "34,875"))
    setup = narrative.straggler_setup_figures(_part_a("cloud"), cloud)
    assert (setup["workers"], setup["step"]) == (32, "3.29 s")  # not "3.29e+03 ms"
    table = quality.quality_table(comparison)
    assert [row["Step (s)"] for row in table] == pytest.approx([3.2988, 3.2888], abs=1e-4)
    assert [row["Time to target (days)"] for row in table] == pytest.approx([0.859, 1.327], abs=1e-3)


def test_part_e_on_short_steps_reads_seconds_not_thousandths_of_an_hour():
    # A 0.1 ms step with TinyML's lag: minutes or seconds to the target, never "0.00286 h".
    tiny = track("tinyml")
    comparison = quality.compare_policies(
        step_ms=0.1, global_batch=256, convergence=tiny.convergence, straggler=tiny.straggler
    )
    [strict, _] = quality.quality_rows(comparison)
    assert strict["Unit"] in ("s", "min") and strict["Step unit"] in ("µs", "ms")
    table = quality.quality_table(comparison)
    timed = [name for name in table[0] if name.startswith(("Step (", "Time to target ("))]
    assert len(timed) == 2
    longer = [max(float(str(row[name])) for row in table) for name in timed]
    assert all(1 <= value < 1000 for value in longer)  # the longer of the two reads 1 to 999


def test_picker_labels_survive_pickling():
    # Session state is pickled (runner.enforceSerializableSessionState), format functions included.
    contrast = _layout_against("pipeline")
    labels = [track_label, track("edge").pool_label, contrast.layout_label]
    restored = [pickle.loads(pickle.dumps(label)) for label in labels]
    assert [restored[0]("cloud"), restored[1](2), restored[2]("pipeline")] == [
        track("cloud").label,
        "32 GPUs",
        "TP8 · PP2 · DP4",
    ]


def test_an_unknown_pool_has_no_label():
    with pytest.raises(ValueError, match="larger pool"):
        track("edge").pool_label(4)
