"""Run A: the brief from the phase model, each experiment against the H200's run_a.csv, the timeline's
invariants."""

import copy
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.datafiles import read_json
from core.memory.phases import step_phases
from core.memory.setup import StepSetup
from core.memory.timeline import PHASES, step_timeline
from core.memory.verdict import capped
from core.model_config import parse_config
from core.questions import load_bank
from core.run_a import (
    EXPERIMENTS,
    MAX_TEXT_CHARS,
    PAIR_PREDICTION,
    PREDICTED_PAIR,
    REACHES,
    brief_figures,
    budget_series,
    change_rows,
    decision_record,
    estimated_outcome,
    feedback,
    leak,
    load_content,
    map_agreement,
    pair_experiments,
    pair_label,
    pairs,
    parse_content,
    phase_rows,
    reach,
    reach_rows,
    reflection_record,
    run_a_timeline,
    run_experiment,
    run_pair,
    saved_choice_index,
    stored_text,
)
from core.settings_schema import section

# Run A as the H200 ran it: GPT-2 layout, 3072 wide, 16 blocks, 24 heads, 2048 positions, FP32, Adam.
# Parameters: 50,257·3072 + 2048·3072 + 16·(12·3072² + 13·3072) + 2·3072 = 1,973,265,408
# (run_a.csv's n_params).
PARAMETERS = 1_973_265_408
CAP_GB = 24 * 2**30 / 1e9  # 25.769803776


def test_the_configuration_reproduces_the_brief():
    brief = brief_figures()
    assert brief.parameter_count == PARAMETERS
    assert brief.weights_gb == pytest.approx(PARAMETERS * 4 / 1e9)  # 7.893 GB
    assert brief.device_gb == pytest.approx(CAP_GB) and brief.device_gib == 24
    assert brief.other_gb == pytest.approx(CAP_GB - PARAMETERS * 4 / 1e9)
    assert brief.forward_peak_gb < CAP_GB < brief.backward_peak_gb  # forward fits, backward does not
    assert brief.failure_where == "`loss.backward()` of iteration 1, at its start"


def test_run_a_and_its_four_experiments_end_where_the_h200_ended():
    assert estimated_outcome(run_a_timeline()) == "step 1 backward"
    measured = {e: run_experiment(e).measured for e in EXPERIMENTS}
    assert measured == {
        "batch": "step 1 optimizer.step",
        "optim": "step 1 backward",
        "gpu": "ok",
        "model": "ok",
    }
    assert {e: estimated_outcome(run_experiment(e).timeline) for e in EXPERIMENTS} == measured


def test_the_estimate_places_every_run_of_the_grid_where_the_h200_died():
    agree, total = map_agreement()
    assert total == 51 and agree == total


def test_shrinking_the_model_keeps_nine_blocks_as_the_h200_run_did():
    assert run_experiment("model").timeline.setup.model.layers == 9


def test_phase_table_of_run_a():
    rows = phase_rows(run_a_timeline())
    assert [r["Outcome"] for r in rows] == [
        "fits",
        "fits",
        "over the device: the run dies here",
        "never reached",
    ]


def test_outcome_tables_have_one_row_per_experiment_with_the_measurement():
    outcomes = [run_experiment(e) for e in EXPERIMENTS]
    reached = reach_rows(outcomes)
    assert [r["On the H200 (run_a.csv)"] for r in reached] == [
        "step 1 optimizer.step",
        "step 1 backward",
        "ok",
        "ok",
    ]
    assert [r["Experiment"] for r in reached] == [
        "Half the tokens",
        "SGD instead of Adam",
        "The bigger device",
        "A smaller model",
    ]
    changed = change_rows(outcomes)
    # Half the tokens asks 5 × 7.893 + 0.268 = 39.73 GB in its first step; SGD stops at backward's 25.89 GB.
    assert [r["Peak needed, reserve in (GB)"] for r in changed][:2] == ["39.73", "25.89"]
    assert [r["Iteration 1 completes"] for r in changed] == ["no", "no", "yes", "yes"]


def test_the_phase_table_leaves_what_happens_to_the_text_beside_it():
    # Four narrow columns, so it fits a phone: 8.16 GB at the start is the weights and the 0.268 GB reserve.
    rows = phase_rows(run_a_timeline())
    assert list(rows[0]) == ["Phase", "Live at its peak", "Peak needed, reserve in (GB)", "Outcome"]
    assert rows[0]["Peak needed, reserve in (GB)"] == f"{WEIGHTS_GB + RESERVE_GB:.2f}" == "8.16"


def test_budget_series_is_flat_and_fails_every_launch():
    series = budget_series()
    assert len(set(series.peak_gb)) == 1 and all(series.fails)


def test_leak_series_rises_until_it_fails():
    example = leak()
    # Half of Run A's 1 × 1,536 tokens, on the 40 GiB cap instead of 24 GiB.
    assert all(figure in example.change for figure in ("1 × 1,536", "1 × 768", "24 GiB", "40 GiB"))
    assert example.retained_mb_per_iteration == pytest.approx(768 * 3072 * 4 / 1e6)  # one FP32 B·S·H tensor
    series = example.series
    assert series.failed_at == series.x[-1] and series.fails[-1] and not any(series.fails[:-1])
    assert all(later > earlier for earlier, later in zip(series.peak_gb, series.peak_gb[1:], strict=False))


# The phase model's terms for Run A's 1,973,265,408 parameters in FP32 (4 bytes each), on a 24 GiB cap:
WEIGHTS_GB = 4 * PARAMETERS / 1e9  # 7.893 GB; the gradients are the same size
RESERVE_GB = 2**28 / 1e9  # the allocator's 256 MiB, 0.268 GB
HEAD_GRADIENT_GB = 50_257 * 3_072 * 4 / 1e9  # 0.618 GB: the tied embedding's gradient, made apart


def test_pairs_are_every_two_different_experiments_and_the_settings_offer_them_all():
    assert pairs() == ("batch+optim", "batch+gpu", "batch+model", "optim+gpu", "optim+model", "gpu+model")
    assert section("run_a").field("pair").choices == pairs()
    assert section("run_a").field("pair").default == "batch+optim"
    assert pair_experiments("optim+gpu") == ("optim", "gpu")
    assert pair_label("batch+optim") == "Half the tokens + SGD instead of Adam"
    for bad in ("optim+batch", "batch+batch", "batch", ""):
        with pytest.raises(ValueError, match="Unknown pair of experiments"):
            pair_experiments(bad)


def test_half_the_tokens_with_sgd_clears_both_walls():
    pair = run_pair("batch+optim")
    # Half the tokens alone dies in the first optimizer.step(): weights 4 + gradients 4 + Adam's two moments 8
    # + foreach's state-sized copy 4 = 20 bytes per parameter, 39.73 GB, over the 25.77 GB cap.
    failure = pair.first.timeline.failure
    assert failure is not None and failure.where(16) == (
        "the first `optimizer.step()`, while it creates the optimizer state"
    )
    assert pair.first.timeline.peak_reached_gb == pytest.approx(5 * WEIGHTS_GB + RESERVE_GB)
    # SGD alone still dies where Run A died: the optimizer state does not exist yet at backward's start.
    assert estimated_outcome(pair.second.timeline) == "step 1 backward"
    # Together, SGD keeps no state: the peak is backward's end, weights + gradients + the embedding's
    # gradient made apart: 7.893 + 7.893 + 0.618 + 0.268 = 16.67 GB, 9.10 GB under the cap.
    together = pair.together.timeline
    assert together.failure is None
    assert together.peak_reached_gb == pytest.approx(2 * WEIGHTS_GB + HEAD_GRADIENT_GB + RESERVE_GB)
    assert f"{together.peak_reached_gb:.2f}" == "16.67"
    assert all(figure in pair.together.change for figure in ("1 × 1,536", "1 × 768", "Adam", "SGD"))
    assert pair.wall_mover is pair.first
    # The verdict reads the same figures: 16.67 GB of 25.77 GB, 9.10 GB to spare; and the two walls in
    # order, Run A's at backward's start, then half the tokens' in the first optimizer step.
    verdict = pair.verdict
    assert all(figure in verdict for figure in ("16.67 GB", "25.77 GB", "9.10 GB"))
    base = run_a_timeline().failure
    assert base is not None
    first_wall, second_wall = base.where(16), failure.where(16)
    assert first_wall in verdict and second_wall in verdict
    assert verdict.rindex(first_wall) < verdict.rindex(second_wall)


@pytest.mark.parametrize("pair_id", pairs())
def test_each_pair_verdict_agrees_with_its_table(pair_id):
    pair = run_pair(pair_id)
    outcomes = [pair.first, pair.second, pair.together]
    rows = [c | r for c, r in zip(change_rows(outcomes), reach_rows(outcomes), strict=True)]
    assert [r["Experiment"] for r in rows][2] == pair_label(pair_id)
    # Each run's words in the verdict come from its own row: where it fails, or the peak it runs at.
    for row in rows:
        if row["First failure"].startswith("none"):
            assert f"{row['Peak needed, reserve in (GB)']} GB" in pair.verdict
        else:
            assert row["First failure"] in pair.verdict
    # A pair applies each change as it does alone; the smaller model is searched for after the other one.
    first, second = pair_experiments(pair_id)
    if "model" not in (first, second):
        setup = pair.together.timeline.setup
        assert setup.batch * setup.seq_len in (768, 1536) and setup.model.layers == 16


# Run A as briefed (1 × 1,536 tokens, Adam) on caps chosen around its peaks, worked above:
# weights alone 7.893 + reserve 0.268 = 8.16 GB; forward's last block 18.05 GB on the way to its 25.58 GB
# peak; backward's start 25.89 GB; iteration 1's step 5 × 7.893 + 0.268 = 39.73 GB; iteration 2's forward,
# with Adam's two moments now resident, 41.17 GB.
@pytest.mark.parametrize(
    ("gib", "expected"),
    [
        (4, "forward"),  # 4.29 GB: not even the weights fit, which the options count as before backward
        (16, "forward"),  # 17.18 GB: forward runs out part way
        (24, "backward"),  # 25.77 GB: Run A itself, 25.89 GB asked at backward's start
        (37, "step"),  # 39.73 GB: backward fits, the first step needs 39.733 GB, 0.005 GB too many
        (38, "later"),  # 40.80 GB: iteration 1 completes, iteration 2's forward asks 41.17 GB
        (40, "runs"),  # 42.95 GB: the highest peak, 41.68 GB in iteration 2's backward, fits
    ],
)
def test_how_far_run_a_gets_is_read_from_its_own_numbers(gib, expected):
    timeline = step_timeline(run_a_timeline().setup, capacity=capped(gib))
    assert reach(timeline) == expected


def test_the_pair_prediction_is_graded_by_the_phase_model():
    # Its options are the ways a run can end, in the order a step runs.
    assert load_bank().prediction(PAIR_PREDICTION).option_ids() == REACHES
    assert PREDICTED_PAIR in pairs() and pair_label(PREDICTED_PAIR) == "Half the tokens + SGD instead of Adam"
    # Run A dies at backward's start (25.89 GB of 25.77 GB); half the tokens alone gets through backward and
    # dies in the first step (39.73 GB); with SGD as well nothing is ever created there: 16.67 GB, it runs.
    pair = run_pair(PREDICTED_PAIR)
    assert reach(run_a_timeline()) == "backward" and reach(pair.first.timeline) == "step"
    assert reach(pair.second.timeline) == "backward"
    assert (
        reach(pair.together.timeline) == "runs" and f"{pair.together.timeline.peak_reached_gb:.2f}" == "16.67"
    )
    # Every option but the true one names the misconception that picks it.
    prediction = load_bank().prediction(PAIR_PREDICTION)
    assert prediction.misconception("runs", "runs") is None
    assert all(prediction.misconception(o, "runs") for o in REACHES if o != "runs")


def test_a_pair_with_a_change_that_already_runs_says_it_adds_no_diagnosis():
    pair = run_pair("optim+gpu")
    # SGD on the 40 GiB cap: Run A's backward start, 7.893 GB of weights + 17.73 GB of activations and loss
    # gradients + the reserve, 25.89 GB of 42.95 GB.
    # Together: 25.89 GB of 42.95 GB, 17.06 GB to spare, and the bigger device is named as having run alone.
    assert all(figure in pair.verdict for figure in ("25.89 GB", "42.95 GB", "17.06 GB", "The bigger device"))
    assert pair.wall_mover is None


setups = st.builds(
    lambda hidden, layers, batch, seq, attention, optimizer: StepSetup(
        model=parse_config(
            {
                "model_type": "gpt2",
                "n_embd": hidden,
                "n_layer": layers,
                "n_head": hidden // 64,
                "n_positions": 1024,
                "vocab_size": 50257,
            }
        ),
        batch=batch,
        seq_len=seq,
        precision="fp32",
        attention=attention,
        optimizer=optimizer,
    ),  # fmt: skip
    st.sampled_from([256, 512, 1024]),
    st.integers(1, 6),
    st.integers(1, 4),
    st.sampled_from([128, 256, 512]),
    st.sampled_from(["eager", "sdpa"]),
    st.sampled_from(["adam", "sgd", "sgd_momentum"]),
)


@settings(max_examples=40, deadline=None)
@given(setups, st.floats(0.5, 40))
def test_timeline_invariants(setup, gib):
    timeline = step_timeline(setup, capacity=capped(gib))
    for iteration in (1, 2):
        points = [p for p in timeline.points if p.iteration == iteration]
        assert [p.phase for p in points] == sorted((p.phase for p in points), key=PHASES.index)
        forward = [p.live.activations_bytes for p in points if p.phase == "forward" and p.block]
        assert all(b > a for a, b in zip(forward, forward[1:], strict=False))  # forward only ever saves more
        blocks = [p.live for p in points if p.phase == "backward" and p.block]
        assert all(
            b.activations_bytes < a.activations_bytes and b.gradients_bytes > a.gradients_bytes
            for a, b in zip(blocks, blocks[1:], strict=False)
        )
    failure = timeline.failure
    if failure is None:
        assert all(p.total_gb <= timeline.device_gb for p in timeline.points)
    else:
        assert timeline.ran[-1] == failure and failure.total_gb > timeline.device_gb
        assert all(p.total_gb <= timeline.device_gb for p in timeline.ran[:-1])


@settings(max_examples=30, deadline=None)
@given(setups, st.floats(0.5, 40))
def test_fewer_tokens_never_need_more_and_sgd_never_changes_the_first_backward(setup, gib):
    base = step_timeline(setup, capacity=capped(gib))
    if setup.batch >= 2:
        halved = step_timeline(replace(setup, batch=setup.batch // 2), capacity=capped(gib))
        assert all(h.total_gb <= b.total_gb + 1e-9 for h, b in zip(halved.points, base.points, strict=True))
    sgd = step_timeline(replace(setup, optimizer="sgd"), capacity=capped(gib))
    until_step = [p.live for p in base.points if p.iteration == 1 and p.phase != "step"]
    assert until_step == [p.live for p in sgd.points if p.iteration == 1 and p.phase != "step"]


@settings(max_examples=30, deadline=None)
@given(setups, st.floats(0.5, 40), st.floats(0, 20))
def test_more_memory_never_gets_a_run_less_far(setup, gib, more_gib):
    smaller = reach(step_timeline(setup, capacity=capped(gib)))
    larger = reach(step_timeline(setup, capacity=capped(gib + more_gib)))
    assert REACHES.index(smaller) <= REACHES.index(larger)


@pytest.mark.parametrize("gib", [0, -1])
def test_a_device_must_hold_some_memory(gib):
    with pytest.raises(ValueError, match="positive"):
        capped(gib)


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
    # 7.9 GB of weights on a 24 GiB (25.77 GB) device, about 18 GB (25.77 − 7.89) elsewhere, 16.8 GB of it
    # saved activations.
    model = feedback("model")
    assert all(figure in model for figure in ("7.9 GB", "24 GiB (25.77 GB)", "18 GB", "16.8 GB"))
    assert len({feedback(e) for e in EXPERIMENTS}) == len(EXPERIMENTS)  # each experiment has its own
    with pytest.raises(ValueError, match="Unknown experiment"):
        feedback("pray")


def _words(text: str) -> str:
    return " ".join(text.split())


def test_every_feedback_claim_agrees_with_the_experiment_table():
    # The claims each text makes about the runs, checked against the model (reword freely, keep them true).
    feedback_words = {e: _words(feedback(e)) for e in EXPERIMENTS}
    base = run_a_timeline().failure
    halved, sgd = run_experiment("batch").timeline.failure, run_experiment("optim").timeline.failure
    assert base is not None and halved is not None and sgd is not None
    batch = feedback_words["batch"]
    assert "it does pass backward" in batch and "first optimizer.step()" in batch
    assert halved.phase == "step" and halved.iteration == 1
    # It sends the learner on to the pair's prediction without giving its answer away.
    assert "Two changes at once" in batch and "fit" not in batch.split("Two changes")[1]
    assert "dies in exactly the same place" in feedback_words["optim"]
    assert (sgd.iteration, sgd.phase, sgd.block) == (
        base.iteration,
        base.phase,
        base.block,
    )
    assert feedback_words["gpu"].startswith("It runs") and run_experiment("gpu").timeline.failure is None
    assert "the run does fit" in feedback_words["model"] and run_experiment("model").timeline.failure is None


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
        (("scenario", "batch"), 0, "at least 1"),
        (("scenario", "larger_device_gib"), 16, "larger device must hold more"),
        (("scenario", "device_gib"), "big", "must be a number"),
        (("scenario", "config"), {"model_type": "bert"}, "model_type"),
        (("leak", "max_iterations"), 2, "max_iterations"),
        (("leak", "base_experiments"), ["pray"], "base experiments"),
        (("budget_launches",), 1, "at least 2"),
    ],
)
def test_bad_content_is_refused_with_a_reason(path, value, message):
    with pytest.raises(ValueError, match=message):
        parse_content(_edited(path, value))


def test_the_data_file_loads():
    content = load_content()
    setup = content.scenario.setup
    assert (setup.batch, setup.seq_len, content.scenario.device_gib, content.scenario.larger_device_gib) == (
        1,
        1536,
        24,
        40,
    )
    assert content.budget_launches == 4 and content.leak_experiments == ("batch", "gpu")


@settings(max_examples=20, deadline=None)
@given(setups, st.floats(0.5, 40))
def test_a_kept_timeline_is_the_one_worked_out_afresh(setup, gib):
    # The pages rerun on every click, so timelines and phases are kept per setup; an equal setup built
    # anew must get the same answer as working it out from scratch, and a different one its own.
    capacity = capped(gib)
    kept = step_timeline(replace(setup), capacity=capped(gib))
    assert kept is step_timeline(setup, capacity=capacity)
    assert kept == step_timeline.__wrapped__(setup, capacity=capacity)
    assert step_phases(replace(setup)) == step_phases.__wrapped__(setup)
    other = replace(setup, batch=setup.batch + 1)
    assert step_timeline(other, capacity=capacity).setup == other


def test_run_as_steady_peak_names_the_allocator_reserve_where_it_counts_it():
    # Three answers shows the careful count's tensors (41.41 GB); the bigger GPU's run adds the allocator's
    # 256 MiB reserve (0.27 GB): 41.68 GB. Each figure says which it is.
    from core.memory.view import three_answers_rows

    timeline = run_a_timeline()
    careful = three_answers_rows(timeline.setup, capacity=timeline.capacity)[1]
    bigger = run_experiment("gpu")
    reserve_gb = bigger.timeline.capacity.reserve_bytes / 1e9
    peak_gb = bigger.timeline.peak_reached_gb
    assert float(careful["Peak (GB)"]) + reserve_gb == pytest.approx(peak_gb, abs=0.01)
    assert "tensors only" in careful["Why"]
    assert f"the allocator's reserve included, is {bigger.timeline.peak_reached_gb:.2f} GB" in bigger.summary
    assert "Peak needed, reserve in (GB)" in change_rows([bigger])[0]
