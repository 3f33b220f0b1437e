"""Decisions of parts C to E that the evidence rules out, on the numbers worked in test_scaling_narrative."""

from core import lessons
from core.scaling import decisions, layout, pipeline, quality
from core.scaling.scenarios import load_scaling, track

DATA = load_scaling()
CASES = DATA.cases
LAB = DATA.fleets["lab_64"]


def _layouts(alternative):
    return layout.layout_contrast(
        fleet=LAB,
        case=CASES.layout,
        alternative=alternative,
        efficiency=CASES.compute_efficiency,
        dtype=CASES.dtype,
    )


def _said(refusals):
    return {
        decision: lessons.sentence("scaling", name, **figures)
        for decision, (name, figures) in refusals.items()
    }


def test_part_c_rules_out_the_slower_of_the_baseline_and_the_selected_layout():
    # Two stages: 672.9 ms against 743.5 ms, so keeping TP inside the node alone is the slower choice.
    assert list(decisions.placement_refusals(_layouts("pipeline"))) == ["within"]
    # TP over two nodes: 5,643.4 ms against 743.5 ms, so switching to it is ruled out.
    across = _said(decisions.placement_refusals(_layouts("cross")))
    assert list(across) == ["alternative"] and "5,643.4 ms" in across["alternative"]


def test_part_d_rules_out_a_count_that_overflows_hbm_and_staying_put_when_more_fits():
    # 8 micro-batches on 8 stages: 99.9 GB of 85.9 GB, so that count is ruled out.
    over = pipeline.pipeline_contrast(fleet=LAB, cases=CASES, micro_batches=8)
    assert not over.result.verdict.fits
    said = _said(decisions.pipeline_refusals(over))
    assert list(said) == ["selected"] and "99.9 GB" in said["selected"]
    fitting = [
        count
        for count in range(CASES.pipeline.baseline_micro_batches + 1, 9)
        if pipeline.pipeline_contrast(fleet=LAB, cases=CASES, micro_batches=count).result.verdict.fits
    ]
    for count in fitting:  # a larger count that fits shrinks the bubble: the baseline is ruled out
        contrast = pipeline.pipeline_contrast(fleet=LAB, cases=CASES, micro_batches=count)
        assert list(decisions.pipeline_refusals(contrast)) == ["baseline"]
    same = pipeline.pipeline_contrast(
        fleet=LAB, cases=CASES, micro_batches=CASES.pipeline.baseline_micro_batches
    )
    assert decisions.pipeline_refusals(same) == {}


def test_part_e_rules_out_the_policy_that_reaches_the_target_later():
    cloud = track("cloud")
    # Long steps (3,288.8 ms): strict 0.859 days against dropping's 1.33 days.
    slow = quality.compare_policies(
        step_ms=3288.8, global_batch=256, convergence=cloud.convergence, straggler=cloud.straggler
    )
    said = _said(decisions.straggler_refusals(slow))
    assert list(said) == ["drop"] and "1.33 days" in said["drop"] and "0.859 days" in said["drop"]
    # Short steps: the 10 ms lag outweighs 55% more steps, so strict synchronisation is ruled out.
    short = quality.compare_policies(
        step_ms=5.0, global_batch=256, convergence=cloud.convergence, straggler=cloud.straggler
    )
    assert short.winner == "drop" and list(decisions.straggler_refusals(short)) == ["strict"]


def test_part_e_refuses_nothing_on_a_tie():
    # 100 s against 100.5 s: within 1% of each other.
    tie = quality.QualityComparison(
        global_batch=256,
        strict=quality.PolicyResult("strict", 100.0, 1000),
        drop=quality.PolicyResult("drop", 100.0, 1005),
    )
    assert tie.winner == "tie" and decisions.straggler_refusals(tie) == {}
