"""Each part's result sentence (real tracks and cases, figures worked by hand) and the pickers' labels.

Shared inputs (data/scaling_tracks.json): H100 SXM at 50% of its 989 TFLOP/s bf16 peak, NVLink at
450 GB/s inside a node; the lab fleet has 8 nodes of 8 GPUs joined at 25 GB/s per GPU.
"""

import pickle

import pytest

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
    assert narrative.scaling_summary(_part_a("tinyml")) == (
        "On 16 GPUs a step takes 2.29 ms, 0.270 ms of it the gradient all-reduce. "
        "Useful throughput is 0.90× the 8-GPU baseline: a parallel efficiency of 0.45."
    )


def test_part_a_chart_description_names_every_pool_of_the_track():
    assert narrative.efficiency_chart_description(_part_a("cloud", pool=3)) == (
        "Parallel efficiency of both experiments on 8, 32, 128, 256 GPUs; the dashed line is ideal scaling."
    )


def test_part_b_sentence_for_70b_under_zero_1():
    # Per GPU after TP over 8: 70,553,706,496 / 8 = 8.82 G parameters. Replicated: 2 + 2 + 4 + 8 bytes each
    # = 17.64 + 17.64 + 35.28 + 70.55 GB, activations 0.24 GB (full recomputation), a 5% gradient bucket
    # 0.88 GB, 1 GB workspace and 1 GB overhead = 144.2 GB. ZeRO-1 cuts the master copy and moments by
    # 8: 4.41 + 8.82 GB, so 51.6 GB. The 2-byte weights (17.6 GB) now come first, tied with gradients.
    contrast = capacity.capacity_contrast(fleet=LAB, cases=CASES, zero_stage=1, recompute="full")
    assert narrative.capacity_summary(contrast) == (
        "Replicated state needs 144.2 GB per GPU; ZeRO-1 needs 51.6 GB of 86 GB and fits. "
        "Its largest term is now parameters (17.6 GB)."
    )
    assert narrative.memory_chart_description(contrast) == (
        "Per-GPU memory of replicated state and ZeRO-1, term by term, against 86 GB of HBM."
    )


def test_part_b_sentence_says_when_a_plan_does_not_fit():
    # A ZeRO stage that still overflows HBM: shrink the card to 40 GB and ZeRO-1's 51.6 GB no longer fits.
    small = capacity.capacity_contrast(fleet=LAB, cases=CASES, zero_stage=1, recompute="full")
    shrunk = capacity.MemoryPlan(
        label=small.result.label,
        terms=small.result.terms,
        verdict=budget_verdict(small.result.terms, device_gb=40),
    )
    sentence = narrative.capacity_summary(
        capacity.CapacityContrast(tp=8, dp=8, baseline=small.baseline, result=shrunk)
    )
    assert "needs 51.6 GB of 40 GB and does not fit." in sentence


def test_part_c_sentence_for_tensor_parallel_across_two_nodes():
    # Llama 3 8B, 256 x 1,024 tokens, 8 microbatches, ZeRO-3. Compute 399.1 ms in every layout.
    # Within a node: DP 210.8 ms, TP 32 x 8 x 4 x (2 x 7/8 x 33.6 MB / 450 GB/s) = 133.6 ms -> 743.5 ms.
    # TP16 over two nodes: DP 2 x 3/4 x 1.004 GB / 25 GB/s x 1.5 = 90.3 ms, TP 1,024 x (2 x 15/16 x 67.1 MB
    # / 25 GB/s) = 5,154.0 ms -> 5,643.4 ms.
    contrast = layout.layout_contrast(
        fleet=LAB,
        case=CASES.layout,
        alternative="cross",
        efficiency=CASES.compute_efficiency,
        dtype=CASES.dtype,
    )
    assert narrative.layout_summary(contrast) == (
        "TP16 · PP1 · DP4 runs tensor parallel between nodes and spends 5,154.0 ms a step on it, "
        "against 133.6 ms inside a node. Steps: 5,643.4 ms against 743.5 ms."
    )


def test_part_d_sentence_for_eight_microbatches():
    # 8 stages: bubble 7/9 = 0.778 with 2 microbatches, 7/15 = 0.467 with 8. Each retained microbatch holds
    # 10.20 GB on the first stage; model state 2.01 + 2.01 + 4.02 + 8.03 GB, buffers 0.10 + 0.13 GB and 2 GB
    # of workspace and overhead: 38.7 GB with 2 retained, 38.7 + 6 x 10.20 = 99.9 GB with 8.
    contrast = pipeline.pipeline_contrast(fleet=LAB, cases=CASES, microbatches=8)
    assert narrative.pipeline_summary(contrast) == (
        "The bubble goes from 0.778 to 0.467 of the step, while the first stage holds 8 microbatches of "
        "activations instead of 2: 99.9 GB per GPU against 38.7 GB."
    )
    assert narrative.pipeline_chart_description(contrast).endswith("against 86 GB of HBM.")  # 80 GiB


def test_part_e_sentence_for_cloud_on_32_gpus():
    # Part A on 32 GPUs, strong: 798.2 ms compute + 2 x 31 x 20 µs + 2 x 31/32 x 16.06 GB / 12.5 GB/s
    # = 1.24 + 2,489.4 ms -> 3,288.8 ms. Steps: 2,500 x (1 + 2,048 / 256) = 22,500 -> 20.6 h.
    # Strict waits the 10 ms lag of the research fleet: 3,298.8 ms x 22,500 = 20.6 h.
    # Dropping: 3,288.8 ms x ceil(22,500 x 1.55) = 34,875 steps = 31.9 h = 1.33 days.
    cloud, step = track("cloud"), _part_a("cloud").result.step
    comparison = quality.compare_policies(
        step_ms=step.step_ms,
        global_batch=step.global_batch,
        convergence=cloud.convergence,
        straggler=cloud.straggler,
    )
    assert narrative.quality_summary(comparison) == (
        "Strict synchronisation reaches the target in 20.6 h (22,500 steps); "
        "dropping slow workers takes 1.33 days (34,875 shorter steps)."
    )


def test_picker_labels_survive_pickling():
    # Session state is pickled (runner.enforceSerializableSessionState), format functions included.
    contrast = layout.layout_contrast(
        fleet=LAB,
        case=CASES.layout,
        alternative="pipeline",
        efficiency=CASES.compute_efficiency,
        dtype=CASES.dtype,
    )
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
