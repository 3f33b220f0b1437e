"""Run A: the brief reproduced by the lesson's budget, each experiment worked by hand, the timeline's
invariants."""

import copy
from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.datafiles import read_json
from core.memory_lesson import LessonSetup, lesson_terms
from core.run_a import (
    EXPERIMENTS,
    MAX_TEXT_CHARS,
    brief_figures,
    budget_series,
    decision_record,
    feedback,
    leak,
    load_content,
    outcome_rows,
    parse_content,
    phase_rows,
    reflection_record,
    run_a_timeline,
    run_experiment,
    saved_choice_index,
    stored_text,
)
from core.step_timeline import PHASES, step_timeline

# Run A by hand (decimal GB). 12 × 3072² × 16 = 1,811,939,328 parameters.
P_GB = 1_811_939_328 * 4 / 1e9  # FP32 weights: 7.248 GB; the gradients are the same size
O_GB = 1_811_939_328 * 8 / 1e9  # Adam's two FP32 moments: 14.496 GB
A_GB = 10 * 2048 * 3072 * 16 * 4 * 4 / 1e9  # B·S·H·layers·4 tensors·4 bytes: 16.106 GB
W_GB = 1.0  # the lesson's flat workspace
BLOCKS = 16

setups = st.builds(
    LessonSetup,
    hidden=st.sampled_from(range(1024, 8193, 1024)),
    layers=st.integers(1, 24),
    dtype=st.sampled_from(["fp32", "bf16"]),
    optimizer=st.sampled_from(["sgd", "sgd_momentum", "adam"]),
    batch=st.integers(1, 32),
    seq_len=st.sampled_from(range(512, 8193, 512)),
)
devices = st.floats(1, 200)


def test_the_configuration_reproduces_the_brief():
    timeline, brief = run_a_timeline(), brief_figures()
    assert brief.parameter_count == 1_811_939_328
    assert brief.device_gb == 24
    assert round(brief.weights_gb) == 7 and brief.weights_gb == pytest.approx(
        P_GB
    )  # 7.25 GB: "7 GB" within rounding
    assert brief.other_gb == pytest.approx(24 - P_GB)  # 16.75 GB the weights cannot explain
    # Forward peak: weights + every saved activation = 7.248 + 16.106 = 23.354 GB, under 24.
    assert brief.forward_peak_gb == pytest.approx(P_GB + A_GB) and brief.forward_peak_gb < 24
    # Backward's first block: + 1 GB workspace + that block's gradients (7.248 / 16 = 0.453) = 24.807 GB, over
    # 24.
    assert (
        brief.backward_peak_gb == pytest.approx(P_GB + A_GB + W_GB + P_GB / BLOCKS)
        and brief.backward_peak_gb > 24
    )
    failure = timeline.failure
    assert failure is not None
    assert (failure.iteration, failure.phase, failure.block) == (1, "backward", BLOCKS)
    assert "`loss.backward()` of iteration 1" in brief.failure_where
    # Deterministic: the same configuration fails at the same moment every time.
    assert run_a_timeline().failure == step_timeline(timeline.setup, device_gb=24).failure == failure


def test_adams_state_does_not_exist_before_the_first_step():
    first = [p for p in run_a_timeline().points if p.iteration == 1 and p.phase != "step"]
    assert all(p.live.optimizer_state_bytes == 0 for p in first)
    later = [p for p in run_a_timeline().points if p.iteration == 2]
    assert all(p.live.optimizer_state_bytes == pytest.approx(O_GB * 1e9) for p in later)


def test_phase_table_of_run_a():
    rows = {r["Phase"]: r for r in phase_rows(run_a_timeline())}
    assert [r["Outcome"] for r in rows.values()] == [
        "fits",
        "fits",
        "over the device: the run dies here",
        "never reached",
    ]
    # The first step would need everything but activations: 7.248 × 2 + 14.496 + 1 = 29.99 GB.
    assert rows["optimizer.step()"]["Peak needed (GB)"] == f"{2 * P_GB + O_GB + W_GB:.2f}" == "29.99"
    assert rows["optimizer.step()"]["Live at its peak"] == "Parameters, Gradients, Optimizer state, Workspace"
    assert rows["Forward"]["Live at its peak"] == "Parameters, Saved activations"


def test_halving_the_batch_survives_backward_and_fails_at_the_first_step():
    outcome = run_experiment("batch")
    half_a = A_GB / 2  # 8.053 GB
    timeline = outcome.timeline
    assert outcome.change == "batch 10 → 5"
    # Backward now peaks at 7.248 + 8.053 + 1 + 0.453 = 16.754 GB: fits.
    assert timeline.phase_peak_gb(iteration=1, phase="backward") == pytest.approx(
        P_GB + half_a + W_GB + P_GB / BLOCKS
    )
    # The first step creates Adam's state 0.906 GB a block on top of 7.248 × 2 + 1 = 15.496 GB:
    # 15.496 + 0.906 k > 24 first at k = 10 (24.555 GB).
    failure = timeline.failure
    assert failure is not None
    assert (failure.iteration, failure.phase, failure.block) == (1, "step", 10)
    assert failure.total_gb == pytest.approx(2 * P_GB + W_GB + 10 * O_GB / BLOCKS)
    assert not timeline.first_iteration_completes
    assert "survives the forward pass and `loss.backward()`" in outcome.summary


def test_sgd_changes_nothing_before_the_failure():
    outcome, before = run_experiment("optim"), run_a_timeline()
    assert outcome.change == "optimizer Adam → SGD"
    failure = outcome.timeline.failure
    assert failure is not None
    assert (failure.iteration, failure.phase, failure.block) == (1, "backward", BLOCKS)
    assert [p.live for p in outcome.timeline.ran] == [p.live for p in before.ran]
    assert outcome.summary.startswith("No change where it matters")


def test_the_larger_device_runs_with_little_to_spare():
    outcome = run_experiment("gpu")
    timeline = outcome.timeline
    assert outcome.change == "device 24 GB → 40 GB" and timeline.failure is None
    # Iteration 1 peaks at the end of the first step: 29.99 GB.
    assert timeline.iteration_peak_gb(1) == pytest.approx(2 * P_GB + O_GB + W_GB)
    # Later iterations keep Adam's state through backward: 7.248 + 14.496 + 16.106 + 1 + 0.453 = 39.303 GB of
    # 40.
    assert timeline.iteration_peak_gb(2) == pytest.approx(P_GB + O_GB + A_GB + W_GB + P_GB / BLOCKS)
    assert "0.70 GB to spare" in outcome.summary


def test_shrinking_the_model_until_it_fits_takes_seven_blocks_off():
    outcome = run_experiment("model")
    # Per block: weights 0.453, Adam 0.906, activations 1.007 GB. The steady backward peak with L blocks is
    # 2.366 L + 1 + 0.453: 25.11 GB at L = 10 (fails), 22.74 GB at L = 9 (fits).
    per_block = (P_GB + O_GB + A_GB) / BLOCKS
    assert outcome.timeline.setup.layers == 9 and outcome.timeline.failure is None
    assert outcome.timeline.iteration_peak_gb(2) == pytest.approx(9 * per_block + W_GB + P_GB / BLOCKS)
    assert 10 * per_block + W_GB + P_GB / BLOCKS > 24
    assert outcome.change == "blocks 16 → 9 (weights 7.25 GB → 4.08 GB)"


def test_outcome_table_has_one_row_per_experiment():
    rows = outcome_rows([run_experiment(e) for e in EXPERIMENTS])
    assert [r["Iteration 1 completes"] for r in rows] == ["no", "no", "yes", "yes"]
    assert [r["Peak needed (GB)"] for r in rows] == ["24.56", "24.81", "39.30", "22.74"]


def test_budget_series_is_flat_and_fails_every_launch():
    series = budget_series()
    assert series.x == (1, 2, 3, 4)
    assert len(set(series.peak_gb)) == 1 and series.peak_gb[0] == pytest.approx(
        P_GB + A_GB + W_GB + P_GB / BLOCKS
    )
    assert all(series.fails) and series.failed_at == 1


def test_leak_series_rises_until_it_fails():
    example = leak()
    series = example.series
    assert example.change == "batch 10 → 5, device 24 GB → 40 GB"
    # One B·S·H FP32 tensor kept per step: 5 × 2048 × 3072 × 4 = 125.8 MB.
    assert example.retained_mb_per_iteration == pytest.approx(125.82912)
    # Steady peak 7.248 + 14.496 + 8.053 + 1 + 0.453 = 31.249 GB; + 0.1258 (k − 1) > 40 first at k = 71.
    assert example.steady_peak_gb == pytest.approx(P_GB + O_GB + A_GB / 2 + W_GB + P_GB / BLOCKS)
    assert series.failed_at == 71 == series.x[-1]
    assert all(later > earlier for earlier, later in pairwise(series.peak_gb))
    assert series.fails == (False,) * 70 + (True,)


@given(setups, devices)
def test_timeline_invariants(setup, device_gb):
    timeline = step_timeline(setup, device_gb=device_gb)
    total_gb = lesson_terms(setup).total_gb
    for iteration in (1, 2):
        points = [p for p in timeline.points if p.iteration == iteration]
        assert [p.phase for p in points] == sorted((p.phase for p in points), key=PHASES.index)
        forward = [p.total_gb for p in points if p.phase == "forward"]
        assert all(b > a for a, b in pairwise(forward))  # forward only ever saves more
        backward = [p.live for p in points if p.phase == "backward"]
        assert all(
            b.activations_bytes < a.activations_bytes and b.gradients_bytes > a.gradients_bytes
            for a, b in pairwise(backward)
        )
        steps = [p.live.optimizer_state_bytes for p in points if p.phase == "step"]
        assert all(b > a for a, b in pairwise(steps))
    # No moment holds more than the five-term total, which counts every term at once.
    assert max(p.total_gb for p in timeline.points) <= total_gb + 1e-9
    failure = timeline.failure
    if failure is None:
        assert all(p.total_gb <= device_gb for p in timeline.points)
    else:
        assert timeline.ran[-1] == failure and failure.total_gb > device_gb
        assert all(p.total_gb <= device_gb for p in timeline.ran[:-1])


@given(setups, devices)
def test_halving_the_batch_never_needs_more_and_sgd_never_changes_the_first_backward(setup, device_gb):
    base = step_timeline(setup, device_gb=device_gb)
    if setup.batch >= 2:
        halved = step_timeline(replace(setup, batch=setup.batch // 2), device_gb=device_gb)
        assert all(h.total_gb <= b.total_gb for h, b in zip(halved.points, base.points, strict=True))
    sgd = step_timeline(replace(setup, optimizer="sgd"), device_gb=device_gb)
    until_step = [p.live for p in base.points if p.iteration == 1 and p.phase != "step"]
    assert until_step == [p.live for p in sgd.points if p.iteration == 1 and p.phase != "step"]


@pytest.mark.parametrize("device_gb", [0, -1, float("nan"), float("inf")])
def test_a_device_must_hold_some_memory(device_gb):
    with pytest.raises(ValueError, match="Device memory"):
        step_timeline(run_a_timeline().setup, device_gb=device_gb)


def test_decision_records_and_their_messages():
    assert decision_record(choice="batch", why="  Activations scale with batch.\n") == {
        "choice": "batch",
        "why": "Activations scale with batch.",
    }
    with pytest.raises(ValueError, match="Pick one of the four experiments"):
        decision_record(choice=None, why="because")
    with pytest.raises(ValueError, match="Pick one of the four experiments"):
        decision_record(choice="pray", why="because")
    with pytest.raises(ValueError, match="Add your reasoning"):
        decision_record(choice="gpu", why=" \n\t ")
    with pytest.raises(ValueError, match="2,001 characters long; please keep it to 2,000"):
        decision_record(choice="gpu", why="x" * (MAX_TEXT_CHARS + 1))
    assert reflection_record(text="x" * MAX_TEXT_CHARS) == {"text": "x" * MAX_TEXT_CHARS}
    with pytest.raises(ValueError, match="Write a sentence or two"):
        reflection_record(text=None)


@given(st.text(max_size=60), st.sampled_from(EXPERIMENTS + ("", "none")))
def test_a_decision_is_stored_exactly_when_it_is_complete(why, choice):
    complete = choice in EXPERIMENTS and why.strip() != ""
    if complete:
        assert decision_record(choice=choice, why=why) == {"choice": choice, "why": why.strip()}
    else:
        with pytest.raises(ValueError):
            decision_record(choice=choice, why=why)


def test_forms_refill_from_records():
    assert saved_choice_index({"choice": "gpu", "why": "x"}) == 2
    assert saved_choice_index(None) is None and saved_choice_index({"choice": "pray"}) is None
    assert (
        stored_text({"text": "kept"}, "text") == "kept"
        and stored_text(None, "text") == ""
        and stored_text({"text": 3}, "text") == ""
    )


def test_feedback_fills_its_figures_from_the_brief():
    assert "blames the 7 GB of weights for a failure at 24 GB" in feedback("model")
    assert "about 17 GB went to something else" in feedback("model")  # 24 − 7.25 = 16.75
    assert "first `optimizer.step()`" in feedback("optim")
    assert all(feedback(e) for e in EXPERIMENTS)
    with pytest.raises(ValueError, match="Unknown experiment"):
        feedback("pray")


def _edited(path, value):
    raw = copy.deepcopy(read_json("run_a.json"))
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("scenario", "batch"), 9, "must be even"),
        (("scenario", "larger_device_gb"), 16, "larger device must hold more"),
        (("scenario", "device_gb"), "big", "must be a number"),
        (("feedback",), {"batch": "x"}, "needs exactly these entries"),
        (("feedback", "gpu"), "Costs {price} dollars", "we do not compute: 'price'"),
        (("leak", "base_experiments"), ["pray"], "base experiments"),
        (("measure",), [], "measure"),
        (("budget_launches",), 1, "at least 2"),
    ],
)
def test_bad_content_is_refused_with_a_reason(path, value, message):
    with pytest.raises(ValueError, match=message):
        parse_content(_edited(path, value))


def test_the_data_file_loads():
    content = load_content()
    assert set(content.feedback) == set(EXPERIMENTS) and set(content.phases) == set(PHASES)
    assert len(content.measure) == 4
