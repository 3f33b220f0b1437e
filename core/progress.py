"""Scores and completion, computed from a learner's answers and records only.

Home, the sidebar and the report all call these, so they can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.questions import Bank

QUIZ_PART = "quiz"


@dataclass(frozen=True)
class Score:
    """Right answers out of a number of questions, and how many were answered."""

    right: int
    answered: int
    total: int

    @property
    def label(self) -> str:
        """The score as `right/total`."""
        return f"{self.right}/{self.total}"


@dataclass(frozen=True)
class PartStatus:
    """How far a learner is through one part of the lab."""

    part_id: str
    title: str
    questions_answered: int
    questions_total: int
    records_done: int
    records_total: int

    @property
    def complete(self) -> bool:
        """Every question answered and every required record present."""
        return self.questions_answered == self.questions_total and self.records_done == self.records_total


def score(bank: Bank, answers: Mapping[str, str], question_ids: tuple[str, ...]) -> Score:
    """The score over the given questions."""
    given = [qid for qid in question_ids if qid in answers]
    right = sum(bank.question(qid).is_correct(answers[qid]) for qid in given)
    return Score(right=right, answered=len(given), total=len(question_ids))


def check_ids(bank: Bank) -> tuple[str, ...]:
    """The marked checks spread through the lesson (every question outside the quiz)."""
    return tuple(q.id for q in bank.questions if q.part != QUIZ_PART)


def quiz_ids(bank: Bank) -> tuple[str, ...]:
    """The quiz questions."""
    return tuple(q.id for q in bank.questions if q.part == QUIZ_PART)


def checks_score(bank: Bank, answers: Mapping[str, str]) -> Score:
    """Score over the marked checks."""
    return score(bank, answers, check_ids(bank))


def quiz_score(bank: Bank, answers: Mapping[str, str]) -> Score:
    """Score over the quiz."""
    return score(bank, answers, quiz_ids(bank))


def overall_score(bank: Bank, answers: Mapping[str, str]) -> Score:
    """Score over every marked question."""
    return score(bank, answers, tuple(q.id for q in bank.questions))


def part_statuses(
    bank: Bank, answers: Mapping[str, str], records: Mapping[str, Any]
) -> tuple[PartStatus, ...]:
    """Progress through each part, in lesson order."""
    return tuple(
        PartStatus(
            part_id=part.id,
            title=part.title,
            questions_answered=sum(qid in answers for qid in part.question_ids),
            questions_total=len(part.question_ids),
            records_done=sum(records.get(name) is not None for name in part.records),
            records_total=len(part.records),
        )
        for part in bank.parts
    )
