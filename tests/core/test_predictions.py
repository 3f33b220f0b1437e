"""Lesson predictions: locking, the first guess standing, tolerance on ordered scales, the separate score."""

import copy

import pytest

from core.datafiles import read_json
from core.predictions import lock, prediction_lines, predictions_score, record_name
from core.questions import load_bank, parse_bank

BANK = load_bank()


def test_the_bank_has_the_lessons_predictions_in_order():
    assert [p.id for p in BANK.predictions] == [
        "linear.layer",
        "linear.matmul",
        "linear.gelu",
        "memory.dominant",
        "memory.breaks",
        "run_a.pair",
    ]


def test_a_first_guess_locks_and_a_second_is_refused():
    gelu = BANK.prediction("linear.gelu")
    first = lock(gelu, None, choice="compute-bound", actual="memory-bound")
    assert first == {"choice": "compute-bound", "actual": "memory-bound"}
    assert lock(gelu, first, choice="memory-bound", actual="memory-bound") is None


def test_an_unknown_guess_is_a_readable_error():
    with pytest.raises(ValueError, match="not one of the options"):
        lock(BANK.prediction("linear.gelu"), None, choice="fast", actual="memory-bound")


def test_breaking_point_guesses_within_one_slider_step_hold():
    # The lesson default breaks at 5,120 tokens (docs/teaching.md); 4,608 and 5,632 are a 512-token step away.
    breaks = BANK.prediction("memory.breaks")
    assert breaks.holds("4608", "5120") and breaks.holds("5632", "5120") and breaks.holds("5120", "5120")
    assert not breaks.holds("4096", "5120")
    assert not BANK.prediction("memory.dominant").holds("activations", "optimizer_state")


def test_predictions_are_scored_apart_from_the_marked_questions():
    records = {
        record_name("linear.gelu"): {"choice": "memory-bound", "actual": "memory-bound"},
        record_name("linear.matmul"): {"choice": "memory-bound", "actual": "compute-bound"},
        record_name("memory.breaks"): {"choice": "nonsense", "actual": "5120"},  # unusable: not made
    }
    score = predictions_score(BANK, records)
    assert (score.right, score.answered, score.total) == (1, 2, 6)
    marks = {line.prediction_id: line.mark for line in prediction_lines(BANK, records)}
    assert marks == {
        "linear.layer": "not made",
        "linear.matmul": "missed",
        "linear.gelu": "held",
        "memory.dominant": "not made",
        "memory.breaks": "not made",
        "run_a.pair": "not made",
    }


def test_a_missed_guess_names_its_misconception_where_the_bank_has_one():
    pair = BANK.prediction("run_a.pair")
    assert pair.misconception("runs", "runs") is None  # it held: no trap to name
    assert "optimizer's state" in (pair.misconception("step", "runs") or "")
    assert BANK.prediction("linear.gelu").misconception("compute-bound", "memory-bound") is None  # none given


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["predictions"].append(copy.deepcopy(raw["predictions"][0])), "Duplicate prediction"),
        (lambda raw: raw["predictions"][0].update(part="nowhere"), "not one of the lab's parts"),
        (lambda raw: raw["predictions"][4].update(tolerance=-1), "'tolerance'"),
        (lambda raw: raw["predictions"][0]["options"].pop(), "at least two options"),
        (lambda raw: raw["predictions"][5]["options"][0].update(misconception=" "), "misconception"),
    ],
)
def test_broken_predictions_are_refused(edit, message):
    raw = copy.deepcopy(read_json("lab.json"))
    edit(raw)
    with pytest.raises(ValueError, match=message):
        parse_bank(raw)
