"""The room charts through their Vega-Lite specs: every option drawn, the correct one marked."""

from __future__ import annotations

from charts.rooms import COMPUTED, CORRECT_COLOUR, CORRECT_LABEL, PREDICTED, answers_chart, predictions_chart
from core.questions import load_bank
from core.rooms import LearnerWork, distribution, scaling_predictions

BANK = load_bank()


def _rows(spec: dict) -> list[dict]:
    return next(iter(spec["datasets"].values()))


def test_answer_bars_list_every_option_and_mark_the_correct_one() -> None:
    question = BANK.question("r1")
    works = [LearnerWork(answers={"r1": "mem"}), LearnerWork(answers={"r1": "num"}), LearnerWork(answers={})]
    spec = answers_chart(distribution(question, works)).to_dict()
    rows = _rows(spec)
    assert [r["count"] for r in rows] == [1, 0, 1, 0]
    assert [r["kind"] == CORRECT_LABEL for r in rows] == [o.id == "mem" for o in question.options]
    colour = spec["encoding"]["color"]["scale"]
    assert colour["range"][colour["domain"].index(CORRECT_LABEL)] == CORRECT_COLOUR
    assert {t["field"] for t in spec["encoding"]["tooltip"]} == {"option", "count", "kind"}


def test_prediction_bars_pair_each_option_with_what_came_true() -> None:
    works = [LearnerWork(answers={}, records={"scaling.predictions": {"A": "middle"}})]
    spec = predictions_chart(scaling_predictions(works), "A", "Part A").to_dict()
    rows = _rows(spec)
    assert len(rows) == 2 * 3  # three options in part A, two bars each
    counts = {(r["series"], r["count"]) for r in rows if r["count"]}
    assert counts == {(PREDICTED, 1), (COMPUTED, 1)}
    assert spec["encoding"]["yOffset"]["field"] == "series"


def test_before_anyone_answers_the_axis_counts_whole_learners_from_0_to_1() -> None:
    empty = answers_chart(distribution(BANK.question("r1"), [])).to_dict()["encoding"]["x"]
    assert empty["scale"]["domain"] == [0, 1] and empty["axis"]["format"] == "d"
    works = [LearnerWork(answers={"r1": "mem"}) for _ in range(3)]
    assert answers_chart(distribution(BANK.question("r1"), works)).to_dict()["encoding"]["x"]["scale"] == {
        "domain": [0, 3]
    }
    nobody = predictions_chart(scaling_predictions([]), "A", "Part A").to_dict()["encoding"]["x"]
    assert nobody["scale"]["domain"] == [0, 1]
