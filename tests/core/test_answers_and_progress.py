"""First answers lock; scores and completion follow from answers and records alone."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.answers import record_first
from core.progress import checks_score, overall_score, part_statuses, quiz_score
from core.questions import load_bank

BANK = load_bank()
QUESTION_IDS = [q.id for q in BANK.questions]


def test_first_answer_is_kept_and_a_second_is_refused():
    answers, accepted = record_first({}, "r1", "mem")
    assert accepted and answers == {"r1": "mem"}
    again, accepted = record_first(answers, "r1", "speed")
    assert not accepted and again == {"r1": "mem"}


def test_empty_answer_is_refused():
    with pytest.raises(ValueError):
        record_first({}, "r1", "")


@given(
    st.lists(st.tuples(st.sampled_from(QUESTION_IDS), st.sampled_from(["a", "b", "c", "mem"])), max_size=30)
)
def test_whatever_the_sequence_the_first_answer_to_each_question_stands(attempts):
    answers: dict[str, str] = {}
    for qid, option in attempts:
        answers, _ = record_first(answers, qid, option)
    first: dict[str, str] = {}
    for qid, option in attempts:
        first.setdefault(qid, option)
    assert answers == first


def test_scores_count_right_answers_over_each_group():
    # r1 right, r2 wrong, c1 right; q2 right, q3 wrong.
    answers = {"r1": "mem", "r2": "num", "c1": "b", "q2": "c", "q3": "a"}
    assert checks_score(BANK, answers).label == "2/9"
    assert checks_score(BANK, answers).answered == 3
    assert quiz_score(BANK, answers).label == "1/3"
    assert overall_score(BANK, answers).label == "3/12"


def test_a_part_is_complete_when_its_questions_and_records_are_all_there():
    answers = {"r1": "mem", "r2": "speed", "r3": "num", "r4": "mem"}
    statuses = {s.part_id: s for s in part_statuses(BANK, answers, {"run_a.decision": {"choice": "batch"}})}
    assert statuses["four_runs"].complete  # answered, even if one is wrong
    assert not statuses["stack"].complete
    assert statuses["run_a"].records_done == 1 and not statuses["run_a"].complete
    done = part_statuses(BANK, answers, {"run_a.decision": {}, "run_a.reflection": {}})
    assert {s.part_id: s for s in done}["run_a"].complete


@given(st.dictionaries(st.sampled_from(QUESTION_IDS), st.sampled_from(["a", "b", "c", "mem", "num"])))
def test_scores_never_exceed_what_was_answered(answers):
    total = overall_score(BANK, answers)
    assert 0 <= total.right <= total.answered <= total.total == 12
    assert checks_score(BANK, answers).right + quiz_score(BANK, answers).right == total.right
