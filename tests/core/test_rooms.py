"""The class view's aggregates, worked by hand on small classes, plus properties over any class."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.questions import load_bank
from core.rooms import (
    MAX_NAME_CHARS,
    LearnerWork,
    check_display_name,
    common_wrong_answers,
    csv_safe,
    distribution,
    distributions,
    export_rows,
    join_link,
    may_see_distribution,
    parse_room_code,
    part_counts,
    run_a_decisions,
    scaling_predictions,
    visible_distributions,
)
from core.scaling.outcomes import graded_outcomes

BANK = load_bank()
DECISION = "run_a.decision"


def _class() -> list[LearnerWork]:
    # Three learners: r1's right answer is "mem"; c1's is "b".
    return [
        LearnerWork(answers={"r1": "mem", "c1": "a"}),
        LearnerWork(answers={"r1": "speed", "c1": "a"}, records={DECISION: {"choice": "batch", "why": "x"}}),
        LearnerWork(answers={"r1": "mem"}, records={DECISION: {"choice": "batch", "why": "  "}}),
    ]


def test_distribution_counts_first_answers_and_marks_the_correct_option() -> None:
    dist = distribution(BANK.question("r1"), _class())
    assert [(o.option_id, o.count, o.correct) for o in dist.options] == [
        ("mem", 2, True),
        ("speed", 1, False),
        ("num", 0, False),
        ("learn", 0, False),
    ]
    assert (dist.answered, dist.right) == (3, 2)


def test_most_common_wrong_answers_come_first() -> None:
    wrong = common_wrong_answers(distributions(BANK, _class()))
    # c1 "a" was chosen twice, r1 "speed" once: c1 first although r1 comes first in the bank.
    assert [(w.question_id, w.option_id, w.count) for w in wrong] == [("c1", "a", 2), ("r1", "speed", 1)]


def test_part_counts_started_and_complete() -> None:
    counts = {c.part_id: c for c in part_counts(BANK, _class())}
    assert (counts["four_runs"].started, counts["four_runs"].complete) == (3, 0)
    assert (counts["stack"].started, counts["stack"].complete) == (2, 2)  # c1 is the stack's only question
    assert (counts["run_a"].started, counts["run_a"].complete) == (2, 0)  # the reflection is missing
    assert counts["quiz"].started == 0


def test_run_a_decisions_count_reasons_not_blank_text() -> None:
    counts = {d.choice: (d.count, d.with_reasons) for d in run_a_decisions(_class())}
    assert counts == {"batch": (2, 1), "optim": (0, 0), "gpu": (0, 0), "model": (0, 0)}


def test_run_a_decisions_ignore_records_of_the_wrong_shape() -> None:
    odd = [
        LearnerWork(answers={}, records={DECISION: "batch"}),
        LearnerWork(answers={}, records={DECISION: {}}),
    ]
    assert sum(d.count for d in run_a_decisions(odd)) == 0


def test_scaling_predictions_sit_beside_each_learners_computed_answer() -> None:
    # At the defaults part A's efficiency falls below half (computed here from the page's own core).
    assert graded_outcomes({})["A"] == "below-half"
    works = [
        LearnerWork(answers={}, records={"scaling.predictions": {"A": "middle"}}),
        LearnerWork(answers={}, records={"scaling.predictions": {"A": "below-half", "B": "oom"}}),
        LearnerWork(answers={}),
    ]
    rows = {(r.part, r.option_id): (r.predicted, r.computed) for r in scaling_predictions(works)}
    assert rows[("A", "middle")] == (1, 0)
    assert rows[("A", "below-half")] == (1, 2)
    assert rows[("B", "oom")] == (1, 0)
    assert rows[("B", graded_outcomes({})["B"])] == (0, 1)


def test_a_scaling_prediction_is_counted_on_the_track_it_was_locked_on() -> None:
    # Locked on TinyML, now looking at Cloud: part E is graded on TinyML's short steps, where dropping
    # slow workers wins (see tests/core/test_scaling_outcomes.py), not on Cloud's, where it loses.
    work = LearnerWork(
        answers={},
        records={"scaling.predictions": {"E": "drop"}, "scaling.prediction_tracks": {"E": "tinyml"}},
        settings={"scaling": {"track": "cloud"}},
    )
    rows = {(r.part, r.option_id): (r.predicted, r.computed) for r in scaling_predictions([work])}
    assert rows[("E", "drop")] == (1, 1)
    assert graded_outcomes({"track": "cloud"})["E"] == "strict"


def test_reveal_needs_both_the_switch_and_an_answer() -> None:
    assert may_see_distribution(revealed=True, answered=True)
    assert not may_see_distribution(revealed=True, answered=False)
    assert not may_see_distribution(revealed=False, answered=True)
    found = distributions(BANK, _class())
    seen = visible_distributions(found, revealed={"r1", "c1"}, answers={"r1": "mem", "c2": "b"})
    assert [d.question_id for d in seen] == ["r1"]


def test_display_names() -> None:
    assert check_display_name("  Ada \n Lovelace ") == "Ada Lovelace"
    assert check_display_name("") is None
    assert check_display_name(None) is None
    assert check_display_name("a\u202eb") == "ab"  # a right-to-left override could disguise a name
    assert check_display_name("x" * MAX_NAME_CHARS) == "x" * MAX_NAME_CHARS
    with pytest.raises(ValueError, match="at most 40 characters"):
        check_display_name("x" * (MAX_NAME_CHARS + 1))


def test_room_codes() -> None:
    assert parse_room_code("IOL-ABC") is None  # look-alike letters are not in the alphabet
    assert parse_room_code("k7m-2pq") == "K7M2PQ"
    assert parse_room_code("K7M2P") is None
    assert parse_room_code("K7M2P0") is None  # 0 is not in the alphabet


def test_export_has_one_row_per_learner_and_question_and_names_only_if_given() -> None:
    works = [LearnerWork(answers={"r1": "mem"}, name="=HYPERLINK()"), LearnerWork(answers={"r1": "num"})]
    rows = export_rows(BANK, works)
    assert len(rows) == 2 * len(BANK.questions)
    first = rows[0]
    assert first == {
        "learner": "1",
        "display_name": "'=HYPERLINK()",
        "question": "r1",
        "label": BANK.question("r1").label,
        "answer": "mem",
        "correct": "true",
    }
    second = rows[len(BANK.questions)]
    assert (second["display_name"], second["answer"], second["correct"]) == ("", "num", "false")
    assert rows[1]["answer"] == "" and rows[1]["correct"] == ""
    assert csv_safe("Ada") == "Ada"


QUESTION_IDS = [q.id for q in BANK.questions]
OPTION_IDS = sorted({o.id for q in BANK.questions for o in q.options} | {"bogus"})
answers_strategy = st.dictionaries(st.sampled_from(QUESTION_IDS), st.sampled_from(OPTION_IDS), max_size=11)


@given(st.lists(answers_strategy, max_size=30))
def test_distributions_never_count_more_than_the_learners_who_answered(
    all_answers: list[dict[str, str]],
) -> None:
    works = [LearnerWork(answers=a) for a in all_answers]
    for dist in distributions(BANK, works):
        valid = {o.option_id for o in dist.options}
        assert dist.answered == sum(a.get(dist.question_id) in valid for a in all_answers)
        assert 0 <= dist.right <= dist.answered <= len(works)
    wrong = common_wrong_answers(distributions(BANK, works))
    assert [w.count for w in wrong] == sorted((w.count for w in wrong), reverse=True)
    assert all(w.count > 0 for w in wrong)


@given(st.lists(answers_strategy, max_size=10), st.sets(st.sampled_from(QUESTION_IDS)), answers_strategy)
def test_a_learner_never_sees_an_unrevealed_or_unanswered_question(
    all_answers: list[dict[str, str]], revealed: set[str], own: dict[str, str]
) -> None:
    found = distributions(BANK, [LearnerWork(answers=a) for a in all_answers])
    seen = {d.question_id for d in visible_distributions(found, revealed=revealed, answers=own)}
    assert seen == revealed & set(own)


@given(st.text(max_size=60))
def test_display_names_are_short_single_line_or_refused(typed: str) -> None:
    try:
        name = check_display_name(typed)
    except ValueError:
        return
    assert name is None or (0 < len(name) <= MAX_NAME_CHARS and "\n" not in name and name == name.strip())


@pytest.mark.parametrize(
    ("page_url", "link"),
    [
        ("https://lab.example.org/instructor", "https://lab.example.org/?room=K7M2PQ"),
        ("http://127.0.0.1:8501/instructor", "http://127.0.0.1:8501/?room=K7M2PQ"),
        ("https://example.org/lab/instructor?x=1", "https://example.org/lab/?room=K7M2PQ"),
        ("", "/?room=K7M2PQ"),
    ],
)
def test_join_link_points_at_the_apps_root(page_url: str, link: str) -> None:
    assert join_link(page_url, "K7M2PQ") == link
