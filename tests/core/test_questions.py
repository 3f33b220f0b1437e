"""The question bank: the lesson's answers, and validation that catches broken banks at load."""

import copy

import pytest

from core.datafiles import read_json
from core.diagnose.examples import example
from core.questions import load_bank, parse_bank

# The correct options of every marked question, as the source lesson marks them.
LESSON_ANSWERS = {
    "r1": "mem",
    "r2": "speed",
    "r3": "num",
    "r4": "learn",
    "c1": "b",
    "c2": "b",
    "c3": "b",
    "c4": "b",
    "q1": "b",
    "q2": "c",
    "q3": "b",
}
# Questions the lab adds beyond the lesson, with the answer our own example was made to show.
LAB_ANSWERS = {"y1": "mem"}  # Your run: the shipped leak example (data/logs/manifest.json says "resource")


def test_bank_has_every_marked_question_with_the_lessons_answer():
    bank = load_bank()
    assert {q.id: q.correct for q in bank.questions} == LESSON_ANSWERS | LAB_ANSWERS


def test_bank_parts_are_in_lesson_order():
    assert [p.id for p in load_bank().parts] == [
        "four_runs",
        "your_run",
        "stack",
        "linear",
        "memory",
        "run_a",
        "quiz",
    ]


def test_question_knows_its_option_texts():
    question = load_bank().question("r3")
    assert question.option_text("num").startswith("Numerical")
    assert question.is_correct("num") and not question.is_correct("mem")
    with pytest.raises(ValueError, match="no option"):
        question.option_text("nope")


def test_unknown_question_is_a_readable_error():
    with pytest.raises(ValueError, match="no marked question"):
        load_bank().question("zz")


def _broken(edit):
    raw = copy.deepcopy(read_json("lab.json"))
    edit(raw)
    return raw


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda raw: raw["questions"].append(copy.deepcopy(raw["questions"][0])),
            "Duplicate question ids: r1",
        ),
        (lambda raw: raw["questions"][0].update(correct="zzz"), "not among its options"),
        (lambda raw: raw["questions"][1].update(explanation="  "), "'explanation' must be non-empty"),
        (lambda raw: raw["questions"][2].update(part="nowhere"), "not one of the lab's parts"),
        (
            lambda raw: raw["questions"][3].update(options=raw["questions"][3]["options"][:1]),
            "at least two options",
        ),
        (lambda raw: raw["questions"][3]["options"][1].update(id="mem"), "option ids repeat"),
        (lambda raw: raw["parts"].append(dict(raw["parts"][0])), "Part ids repeat"),
        (lambda raw: raw["questions"][0]["options"][1].pop("misconception"), "option speed: 'misconception'"),
        (
            lambda raw: raw["questions"][0]["options"][0].update(misconception="x"),
            "correct option 'mem' has a misconception",
        ),
    ],
)
def test_broken_banks_are_refused_with_a_clear_message(edit, message):
    with pytest.raises(ValueError, match=message):
        parse_bank(_broken(edit))


def test_every_wrong_option_names_its_misconception_and_the_right_one_none():
    for question in load_bank().questions:
        for option in question.options:
            named = question.misconception(option.id)
            assert (named is None) == question.is_correct(option.id), (question.id, option.id)


def test_a_misconception_is_read_by_option():
    question = load_bank().question("c2")
    [raw] = [q for q in read_json("lab.json")["questions"] if q["id"] == "c2"]
    [option_a] = [o for o in raw["options"] if o["id"] == "a"]
    assert question.misconception("a") == option_a["misconception"]
    with pytest.raises(ValueError, match="no option"):
        question.misconception("zz")


def test_the_your_run_question_and_its_example_log_name_no_answer_before_it_is_given():
    question = load_bank().question("y1")
    shown_first = " ".join((example("leak.tfevents").title, question.prompt, question.label)).lower()
    # The right answer's words and the log's own story (a list of kept losses, memory growing each step).
    for giveaway in ("memory", "leak", "keeps", "grows", "list", "resource"):
        assert giveaway not in shown_first, giveaway
