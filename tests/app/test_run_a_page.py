"""The Run A page: the brief from core, the decision and reflection forms, feedback, experiments,
persistence."""

import json
from collections.abc import Callable

import pytest

from core import lessons
from core.run_a import (
    EXPERIMENTS,
    PAIR_PREDICTION,
    brief_figures,
    feedback,
    run_experiment,
    run_pair,
    short_label,
)
from core.run_a.decision import decision_record, reflection_record
from tests.app.conftest import open_page, predict

PAGE = "pages/run_a.py"
HOSTILE = "<b>x</b> [link](http://x) **bold** <script>alert(1)</script>"


def submit_decision(at, choice, why):
    """Fill the decision form and press its button."""
    if choice is not None:
        at.radio(key="run_a.decision.choice").set_value(choice)
    at.text_area(key="run_a.decision.why").input(why)
    next(b for b in at.button if b.label == lessons.sentence("run_a", "save_decision")).click()
    return at.run()


def submit_reflection(at, text):
    at.text_area(key="run_a.reflection.text").input(text)
    next(b for b in at.button if b.label == lessons.sentence("run_a", "submit_answer")).click()
    return at.run()


def warnings(at):
    return [w.value for w in at.warning]


def records(at):
    return at.session_state["records"]


def markdown_text(at):
    return "\n".join(m.value for m in at.markdown)


def test_the_brief_is_computed_and_experiments_wait_for_a_decision():
    at = open_page(PAGE)
    assert not at.exception
    brief = brief_figures()
    text = markdown_text(at)
    # The brief's figures: 24 GiB (25.77 GB), 7.89 GB of weights, forward's 25.58 GB, backward's 25.89 GB.
    figures = [f"{gb:.2f} GB" for gb in (brief.device_gb, brief.weights_gb, brief.forward_peak_gb)]
    assert all(figure in text for figure in ["24 GiB", *figures, f"{brief.backward_peak_gb:.2f} GB"])
    assert at.radio(key="run_a.decision.choice").value is None  # nothing chosen for the learner
    assert "run_a.experiment" not in [r.key for r in at.radio]
    assert any("Save a decision" in i.value for i in at.info)
    timeline = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert timeline["title"] == lessons.sentence("run_a", "timeline_title")
    assert len(at.table) == 2  # three answers and the phases; measure rather than guess is a list
    answers = at.table[0].value
    assert list(answers["Answer"])[0] == "The lesson's rough rule"
    assert "out of memory in step 1 backward" in list(answers["Verdict"])
    # The rough rule's 12·H² per block leaves out the embeddings: 50,257·3072 + 2048·3072 + 2·3072
    # = 161,326,080 parameters, told below the table, where a phone has the width for it.
    assert "Why" not in answers.columns and "161,326,080 parameters short" in markdown_text(at)


def _refusal(make_record: Callable[..., object], **form: object) -> str:
    """The sentence core refuses this form with: the page must show it, as it is, and store nothing."""
    with pytest.raises(ValueError) as refused:
        make_record(**form)
    return str(refused.value)


def test_a_choice_and_reasoning_are_both_required():
    at = open_page(PAGE)
    submit_decision(at, None, "")
    assert warnings(at) == [_refusal(decision_record, choice=None, why="")]
    submit_decision(at, "batch", "   ")
    assert warnings(at) == [_refusal(decision_record, choice="batch", why="   ")]
    assert "run_a.decision" not in records(at)
    assert not at.exception


@pytest.mark.parametrize("choice", EXPERIMENTS)
def test_each_choice_gets_its_feedback_and_is_stored(choice):
    at = submit_decision(open_page(PAGE), choice, "Because it separates the hypotheses.")
    assert not at.exception and warnings(at) == []
    assert records(at)["run_a.decision"] == {"choice": choice, "why": "Because it separates the hypotheses."}
    shown = [i.value for i in at.info]
    assert feedback(choice) in shown
    assert [f for f in (feedback(e) for e in EXPERIMENTS) if f in shown] == [feedback(choice)]


def test_the_decision_can_be_changed_until_hand_in():
    at = submit_decision(open_page(PAGE), "gpu", "More memory.")
    submit_decision(at, "batch", "Activations scale with batch; the rest does not.")
    assert records(at)["run_a.decision"]["choice"] == "batch"
    assert lessons.sentence("run_a", "decision_intro") in markdown_text(at)


def test_choice_and_text_are_still_there_after_another_page():
    at = submit_decision(open_page(PAGE), "optim", "Adam's state is big.")
    submit_reflection(at, "Data-loader wait per step.")
    open_page("pages/four_runs.py", at=at)
    open_page(PAGE, at=at)
    assert not at.exception
    assert at.radio(key="run_a.decision.choice").value == "optim"
    assert at.text_area(key="run_a.decision.why").value == "Adam's state is big."
    assert at.text_area(key="run_a.reflection.text").value == "Data-loader wait per step."
    assert {"Adam's state is big.", "Data-loader wait per step."} <= {t.value for t in at.text}


def test_learner_text_is_shown_literally():
    at = submit_decision(open_page(PAGE), "batch", HOSTILE)
    submit_reflection(at, "[link](http://x) and <b>x</b>")
    shown = [t.value for t in at.text]
    assert HOSTILE in shown and "[link](http://x) and <b>x</b>" in shown
    assert "<b>x</b>" not in markdown_text(at) and "http://x" not in markdown_text(at)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_each_experiment_shows_its_computed_outcome(experiment):
    at = submit_decision(open_page(PAGE), "batch", "Activations scale with batch.")
    at.radio(key="run_a.experiment").set_value(experiment).run()
    assert not at.exception
    outcome = run_experiment(experiment)
    assert f"**{outcome.change_title}.** {outcome.summary}" in markdown_text(at)
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    title = lessons.sentence("run_a", "experiment_chart_title", experiment=short_label(experiment))
    assert title in [c.get("title") for c in charts]
    table = at.table[2].value
    assert list(table["Experiment"]) == [run_experiment(e).label for e in EXPERIMENTS]
    assert list(at.table[3].value["Experiment"]) == [short_label(e) for e in EXPERIMENTS]
    assert at.session_state["settings"]["run_a"]["experiment"] == experiment


def test_reflection_requires_text():
    at = submit_reflection(open_page(PAGE), "  ")
    assert warnings(at) == [_refusal(reflection_record, text="  ")]
    submit_reflection(at, "GPU idle time between kernels.")
    assert records(at)["run_a.reflection"] == {"text": "GPU idle time between kernels."}


def test_after_hand_in_the_forms_are_closed():
    at = submit_decision(open_page(PAGE), "model", "Smaller is cheaper.")
    at.session_state["handed_in_at"] = "2026-01-01T00:00:00+00:00"
    at.run()
    assert not at.exception
    assert at.radio(key="run_a.decision.choice").disabled and at.text_area(key="run_a.decision.why").disabled
    assert at.text_area(key="run_a.reflection.text").disabled
    assert not at.radio(key="run_a.experiment").disabled  # which timeline to show: a view, not an answer
    assert all(
        b.disabled
        for b in at.button
        if b.label in (lessons.sentence("run_a", "save_decision"), lessons.sentence("run_a", "submit_answer"))
    )
    assert lessons.sentence("run_a", "handed_in") in [c.value for c in at.caption]


def test_the_pair_waits_for_a_locked_prediction_that_stays_locked_and_reaches_the_report():
    at = submit_decision(open_page(PAGE), "batch", "Activations scale with the tokens.")
    # Before the guess: no pair to pick, no pair chart, only the four experiments' table.
    assert "run_a.pair" not in [s.key for s in at.selectbox] and len(at.table) == 4
    assert at.radio(key=f"predict.{PAIR_PREDICTION}").value is None
    predict(at, PAIR_PREDICTION, "step")
    assert not at.exception
    # Half the tokens and SGD: 16.67 GB of 25.77 GB, so it runs; the guess "dies in the step" missed.
    assert records(at)[f"predict.{PAIR_PREDICTION}"] == {"choice": "step", "actual": "runs"}
    assert at.selectbox(key="run_a.pair").value == "batch+optim" and len(at.table) == 6
    locked = next(c.value for c in at.caption if "You predicted" in c.value)
    assert "(missed)" in locked and "The trap:" in locked
    open_page("pages/four_runs.py", at=at)
    open_page(PAGE, at=at)
    assert not at.exception and "run_a.pair" in [s.key for s in at.selectbox]
    assert f"predict.{PAIR_PREDICTION}" not in [r.key for r in at.radio]  # locked: no form to guess again
    report = open_page("pages/quiz_report.py", at=at)
    rows = report.table[1].value.to_dict("records")
    assert [r["Mark"] for r in rows] == ["not made"] * 5 + ["missed"]
    # A missed guess names its misconception: "dies in the step" blames the gradients, not Adam's state.
    assert "optimizer's state" in rows[-1]["What it suggests"] and rows[0]["What it suggests"] == ""
    assert [m.value for m in report.main.metric][3] == "0/6"


def test_two_experiments_together_show_the_second_wall_on_one_timeline_and_table():
    at = submit_decision(open_page(PAGE), "batch", "Activations scale with the tokens.")
    predict(at, PAIR_PREDICTION, "runs")
    pick = at.selectbox(key="run_a.pair")
    assert pick.value == "batch+optim" and pick.options == [
        "Half the tokens + SGD instead of Adam",
        "Half the tokens + the bigger device",
        "Half the tokens + a smaller model",
        "SGD instead of Adam + the bigger device",
        "SGD instead of Adam + a smaller model",
        "The bigger device + a smaller model",
    ]
    pair = run_pair("batch+optim")
    text = markdown_text(at)
    assert f"**{pair.together.change_title}.** {pair.verdict}" in text
    titles = [json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")]
    assert titles.count(lessons.sentence("run_a", "pair_chart_title")) == 1
    # The comparison line is half the tokens alone: it climbs to 39.73 GB in the first optimizer step.
    compared = lessons.sentence("run_a", "compared_alone", experiment="half the tokens")
    assert lessons.sentence("run_a", "pair_caption", compared=compared) in [c.value for c in at.caption]
    table = at.table[4].value
    assert list(table["Experiment"]) == [
        run_experiment("batch").label,
        run_experiment("optim").label,
        "Half the tokens + SGD instead of Adam",
    ]
    assert list(table["Iteration 1 completes"]) == ["no", "no", "yes"]
    assert list(table["Peak needed, reserve in (GB)"]) == ["39.73", "25.89", "16.67"]
    assert "16.67 GB" in pair.verdict and "25.77 GB" in pair.verdict  # the sentence and the table agree


def test_the_pair_is_a_setting_that_survives_another_page():
    at = submit_decision(open_page(PAGE), "gpu", "More memory.")
    predict(at, PAIR_PREDICTION, "backward")
    at.selectbox(key="run_a.pair").select("optim+gpu").run()
    assert not at.exception
    assert at.session_state["settings"]["run_a"]["pair"] == "optim+gpu"
    # SGD on the 40 GiB cap peaks at 25.89 GB of 42.95 GB: the verdict shown is that pair's.
    assert run_pair("optim+gpu").verdict in markdown_text(at) and "42.95 GB" in run_pair("optim+gpu").verdict
    open_page("pages/four_runs.py", at=at)
    open_page(PAGE, at=at)
    assert at.selectbox(key="run_a.pair").value == "optim+gpu"
