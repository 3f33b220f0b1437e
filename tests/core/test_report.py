"""The report: built from empty, partial and complete sessions; scores; Markdown that cannot be hijacked."""

import re
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import lessons
from core.questions import load_bank
from core.report.contents import build_report, unanswered_quiz
from core.report.figures import BudgetFigures, LayerFigures
from core.report.markdown import literal_block, literal_inline, render_markdown
from core.report.moments import readable_time, utc_timestamp
from core.units import flops_label

BANK = load_bank()
NOT_DONE = lessons.sentence("quiz_report", "not_done")


def says(key: str, **figures: object) -> str:
    """The report's sentence `key` with these figures: a test pins the figures, not the wording."""
    return lessons.sentence("quiz_report", key, **figures)


CORRECT = {q.id: q.correct for q in BANK.questions}
RECORDS = {
    "run_a.decision": {
        "choice": "batch",
        "why": "Activations grow with batch; halving it tells me if they dominate.",
    },
    "run_a.reflection": {"text": "Time spent in the data loader per step."},
}
# nn.Linear(4096, 4096) on a batch of 32: 32 × 4096 × 4096 = 536,870,912 MACs, two FLOPs each.
LAYER = LayerFigures(n_in=4096, m_out=4096, batch=32, flops=2 * 32 * 4096 * 4096)
BUDGET = BudgetFigures(
    parameters=1.3e9,
    total_gb=30.0,
    device_gb=25.769803776,
    activations_gb=12.5,
    optimizer_gb=10.4,
    device_label="24 GiB (25.77 GB) device",
)


def _snapshot(answers=None, records=None, handed_in_at=None):
    return {"answers": answers or {}, "settings": {}, "records": records or {}, "handed_in_at": handed_in_at}


def test_an_empty_session_reports_everything_as_missing_not_as_an_error():
    report = build_report(BANK, _snapshot(), layer=None, budget=None)
    assert (report.checks_score.label, report.quiz_score.label, report.overall_score.label) == (
        "0/9",
        "0/3",
        "0/12",
    )
    assert {line.mark for line in report.checks + report.quiz} == {"not answered"}
    assert report.first_experiment is report.reasoning is report.run_b_measure is None
    assert report.not_done == tuple(p.title for p in BANK.parts)
    text = render_markdown(report)
    assert text.count(NOT_DONE) == 5  # layer, budget, experiment, reasoning, Run B
    assert says("not_handed_in") in text


def test_a_partial_session_scores_what_was_answered():
    # r1 right, r2 wrong (run B is throughput, not memory), q1 right: checks 1/9, quiz 1/3, overall 2/12.
    answers = {"r1": "mem", "r2": "mem", "q1": "b"}
    records = {"run_a.decision": RECORDS["run_a.decision"]}
    report = build_report(BANK, _snapshot(answers, records), layer=LAYER, budget=None)
    assert (report.checks_score.label, report.quiz_score.label, report.overall_score.label) == (
        "1/9",
        "1/3",
        "2/12",
    )
    assert report.checks_score.answered == 2
    assert [line.mark for line in report.checks[:3]] == ["right", "wrong", "not answered"]
    assert report.checks[1].answer == BANK.question("r2").option_text("mem")
    assert report.first_experiment == "Halve the tokens per step (batch × sequence) and run it again"
    assert report.run_b_measure is None
    assert "Run A experiment" in report.not_done and "Four runs" in report.not_done
    assert "1.07 GFLOPs" in render_markdown(report)


def test_a_complete_session_has_full_marks_and_nothing_left():
    at = "2026-11-30T14:05:09+00:00"
    report = build_report(BANK, _snapshot(CORRECT, RECORDS, handed_in_at=at), layer=LAYER, budget=BUDGET)
    assert (report.checks_score.label, report.quiz_score.label, report.overall_score.label) == (
        "9/9",
        "3/3",
        "12/12",
    )
    assert report.not_done == ()
    text = render_markdown(report)
    assert says("handed_in", when="30 November 2026 at 14:05 UTC") in text
    assert "| Overall | 12/12 |" in text
    assert NOT_DONE not in text
    assert says("every_part_complete_report") in text
    assert RECORDS["run_a.reflection"]["text"] in text


def test_malformed_records_read_as_missing():
    records = {"run_a.decision": ["not", "an", "object"], "run_a.reflection": {"text": "   "}}
    report = build_report(BANK, _snapshot(records=records), layer=None, budget=None)
    assert report.first_experiment is report.reasoning is report.run_b_measure is None


def test_layer_sentence_states_the_hand_worked_gflops():
    # 2 × 536,870,912 = 1,073,741,824 FLOPs = 1.07 GFLOPs.
    assert LAYER.gflops == pytest.approx(1.073741824)
    assert LAYER.sentence() == says(
        "layer", article="A", n_in=4096, m_out=4096, batch=32, flops="1.07 GFLOPs"
    )


def test_budget_fits_up_to_the_device_and_not_beyond():
    assert not BUDGET.fits
    figures = {
        "total_gb": 30,
        "device": "24 GiB (25.77 GB) device",
        "activations_gb": 12.5,
        "optimizer_gb": 10.4,
    }
    assert BUDGET.sentence() == says("budget_does_not_fit", parameters_billion=1.3, **figures)
    exactly = BudgetFigures(
        parameters=1e9,
        total_gb=24.0,
        device_gb=24.0,
        activations_gb=1.0,
        optimizer_gb=8.0,
        device_label="24 GB device",
    )
    figures = {"total_gb": 24, "device": "24 GB device", "activations_gb": 1, "optimizer_gb": 8}
    assert exactly.fits and exactly.sentence() == says("budget_fits", parameters_billion=1, **figures)


def test_unanswered_quiz_names_the_questions_left():
    assert unanswered_quiz(BANK, {"q2": "c", "r1": "mem"}) == (
        BANK.question("q1").label,
        BANK.question("q3").label,
    )
    assert unanswered_quiz(BANK, CORRECT) == ()


def test_timestamps_are_stored_in_utc_and_read_back_in_words():
    moment = datetime(2026, 11, 30, 15, 5, 9, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert utc_timestamp(moment) == "2026-11-30T14:05:09+00:00"
    assert readable_time("2026-11-30T15:05:09+01:00") == "30 November 2026 at 14:05 UTC"
    with pytest.raises(ValueError, match="time zone"):
        utc_timestamp(datetime(2026, 11, 30))
    with pytest.raises(ValueError):
        readable_time("2026-11-30T14:05:09")
    with pytest.raises(ValueError):
        readable_time("yesterday")


HOSTILE = (
    "**bold** [link](https://evil.example) ![img](x.png) <script>x</script>\n# heading\n```\nescaped?\n````"
)


def test_learner_text_lands_inside_a_fence_it_cannot_close():
    records = {"run_a.decision": {"choice": "gpu", "why": HOSTILE}, "run_a.reflection": {"text": HOSTILE}}
    text = render_markdown(build_report(BANK, _snapshot(records=records), layer=None, budget=None))
    fence = "`" * 5  # the text holds a run of four backticks, so five open and close its block
    assert text.count(f"{fence}text\n{HOSTILE}\n{fence}") == 2
    outside = re.sub(f"{fence}text\n.*?\n{fence}", "", text, flags=re.S)
    assert "evil.example" not in outside and "<script>" not in outside


def test_an_unknown_experiment_id_is_shown_as_code():
    records = {"run_a.decision": {"choice": "[x](https://evil.example)", "why": "because"}}
    text = render_markdown(build_report(BANK, _snapshot(records=records), layer=None, budget=None))
    assert "` [x](https://evil.example) `" in text


def _runs(text):
    return {len(run) for run in re.findall("`+", text)}


@given(st.text(max_size=300))
def test_no_line_of_any_text_can_close_its_fence(text):
    block = literal_block(text)
    lines = block.split("\n")
    fence = lines[0].removesuffix("text")
    assert set(fence) == {"`"} and len(fence) >= 3 and lines[-1] == fence
    # CommonMark closes a fence on a line of at least as many backticks; none is that long.
    assert all(run < len(fence) for run in _runs("\n".join(lines[1:-1])))
    assert "\n".join(lines[1:-1]) == text.replace("\r\n", "\n").replace("\r", "\n")


@given(st.text(max_size=200))
def test_no_inline_text_can_close_its_code_span(text):
    span = literal_inline(text)
    ticks = len(span) - len(span.lstrip("`"))
    inner = span[ticks + 1 : -ticks - 1]
    # A code span ends at a backtick run of exactly its opening length; the text has none.
    assert ticks not in _runs(inner)
    assert "\n" not in span and inner == " ".join(text.split())


def test_the_scaling_lab_joins_the_report_with_its_plan_and_literal_rationale():
    from core.scaling.scenarios import load_scaling

    text = load_scaling().synthesis
    plan, rejected = list(text.plans)[:2]
    synthesis = {
        "plan": plan,
        "rejected": rejected,
        "trigger": next(iter(text.triggers)),
        "limitation": next(iter(text.limitations)),
        "rationale": "Efficiency fell to 25% at 32 GPUs. [see](http://x) <b>no</b>",
    }
    report = build_report(
        BANK, {"answers": {}, "records": {"scaling.synthesis": synthesis}}, layer=None, budget=None
    )
    assert report.scaling is not None
    assert report.scaling.parts_current == 0 and report.scaling.parts_total == 5
    assert not report.scaling.ready  # no evidence captured yet
    markdown = render_markdown(report)
    assert f"Recommended plan: {text.plans[plan]}" in markdown
    assert says("scaling_not_ready", parts_current=0, parts_total=5) in markdown
    assert "```text\nEfficiency fell to 25% at 32 GPUs. [see](http://x) <b>no</b>\n```" in markdown


def test_a_session_that_never_opened_the_scaling_lab_says_so():
    report = build_report(BANK, {"answers": {}, "records": {}}, layer=None, budget=None)
    assert report.scaling is None
    assert says("scaling_not_started") in render_markdown(report)


@pytest.mark.parametrize(
    ("flops", "text"),
    [(131_072, "131 kFLOPs"), (1_073_741_824, "1.07 GFLOPs"), (33_554_432, "33.6 MFLOPs"), (5, "5.00 FLOPs")],
)
def test_flops_are_shown_to_three_significant_figures(flops, text):
    assert flops_label(flops) == text


def test_a_small_layer_never_reads_zero_gflops():
    small = LayerFigures(n_in=256, m_out=256, batch=1, flops=2 * 256 * 256)
    assert "131 kFLOPs" in small.sentence() and "0.00" not in small.sentence()


def test_negative_flops_are_refused():
    with pytest.raises(ValueError, match="FLOP count"):
        flops_label(-1)


def test_the_markdown_report_gives_the_right_answer_and_the_predictions_apart():
    snapshot = {
        "answers": {"r1": "num"},
        "settings": {},
        "records": {
            "predict.linear.gelu": {"choice": "compute-bound", "actual": "memory-bound"},
            "predict.run_a.pair": {"choice": "backward", "actual": "runs"},
        },
        "handed_in_at": None,
    }
    text = render_markdown(build_report(load_bank(), snapshot, layer=None, budget=None))
    trap = load_bank().prediction("run_a.pair").misconception("backward", "runs")
    assert trap and f"| missed | {trap} |" in text  # Run A's pair: a missed guess says what it suggests
    assert "| Run A: out of memory in backward | Numerical: values have left the range" in text
    assert "| wrong | Resource: the step asks for more memory than the device holds |" in text
    assert "| Predictions that held (not marked) | 0/6 |" in text
    assert (
        "| GELU: memory- or compute-bound | Compute-bound: the arithmetic units are the limit | Memory-bound"
        in text
    )


def test_an_eight_thousand_input_layer_takes_an_and_a_small_one_reads_in_mflops():
    # 2 × 8,192 × 256 × 1 = 4,194,304 FLOPs: "4.19 MFLOPs", never "0.00 GFLOPs"; "an eight thousand...".
    layer = LayerFigures(n_in=8192, m_out=256, batch=1, flops=2 * 8192 * 256)
    assert layer.sentence().startswith("An 8,192 → 256 linear layer") and "4.19 MFLOPs" in layer.sentence()
