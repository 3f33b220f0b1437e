"""The learner's report as data: marked lines, scores, the figures other pages hand in, and records.

The report does not know how other pages compute their figures. The page hands it small
figure objects (`core.report.figures`); a part the learner has not reached is passed as None
and shows as not done yet, never as an error. `core.report.markdown` writes it as a document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import lessons
from core.predictions import PredictionLine, prediction_lines, predictions_score
from core.progress import Score, check_ids, checks_score, overall_score, part_statuses, quiz_ids, quiz_score
from core.questions import Bank
from core.report.figures import BudgetFigures, LayerFigures
from core.report.moments import readable_time
from core.run_a import DECISION_RECORD, FIRST_EXPERIMENTS, REFLECTION_RECORD
from core.scaling.evidence import EvidenceSummary, evidence_summary

SYNTHESIS_HEADINGS = {
    "plan": "Recommended plan",
    "rejected": "Rejected alternative",
    "trigger": "What would reopen it",
    "limitation": "Remaining limitation",
}


@dataclass(frozen=True)
class MarkedLine:
    """One marked question in the report: what the learner picked and whether it was right."""

    question_id: str
    label: str
    answer: str | None
    right: bool | None
    correct: str = ""  # the right option's text
    misconception: str | None = None  # what a wrong answer suggests the learner believed
    page: str | None = None  # the page that teaches this question, for a link back

    @property
    def mark(self) -> str:
        """`right`, `wrong` or `not answered`."""
        if self.right is None:
            return "not answered"
        return "right" if self.right else "wrong"


@dataclass(frozen=True)
class Report:
    """Everything the report shows, computed from one snapshot of the learner's state."""

    checks: tuple[MarkedLine, ...]
    quiz: tuple[MarkedLine, ...]
    checks_score: Score
    quiz_score: Score
    overall_score: Score
    layer: LayerFigures | None
    budget: BudgetFigures | None
    first_experiment: str | None
    reasoning: str | None
    run_b_measure: str | None
    not_done: tuple[str, ...]
    handed_in_at: str | None
    scaling: EvidenceSummary | None
    run_a_brief: str = ""  # Run A's figures as the Run A page computes them (core.run_a.brief_sentence)
    predictions: tuple[PredictionLine, ...] = ()
    predictions_score: Score = Score(right=0, answered=0, total=0)

    def marked_rows(self) -> list[dict[str, str]]:
        """Checks then quiz, one row per question, as a table for display; a wrong answer shows the right
        one and the misconception it suggests."""
        return [
            {
                "Question": line.label,
                "Your answer": line.answer or "—",
                "Mark": line.mark,
                "Right answer": line.correct if line.right is False else "",
                "What it suggests": line.misconception or "",
            }
            for line in self.checks + self.quiz
        ]

    def wrong(self) -> tuple[MarkedLine, ...]:
        """The marked questions answered wrongly, in lesson order (each with its page, for a link back)."""
        return tuple(line for line in self.checks + self.quiz if line.right is False)

    def prediction_rows(self) -> list[dict[str, str]]:
        """One row per lesson prediction: the guess, what happened, whether it held and, for a missed guess,
        the misconception it suggests."""
        return [
            {
                "Prediction": line.label,
                "Your guess": line.guess or "—",
                "What happened": line.actual or "—",
                "Mark": line.mark,
                "What it suggests": line.misconception or "",
            }
            for line in self.predictions
        ]

    @property
    def handed_in_text(self) -> str:
        """When the lab was handed in, in words, or that it was not."""
        if self.handed_in_at is None:
            return lessons.sentence("quiz_report", "not_handed_in")
        return lessons.sentence("quiz_report", "handed_in", when=readable_time(self.handed_in_at))


def _marked_lines(
    bank: Bank, answers: Mapping[str, str], question_ids: tuple[str, ...]
) -> tuple[MarkedLine, ...]:
    lines = []
    for qid in question_ids:
        question = bank.question(qid)
        given = answers.get(qid)
        known = given if isinstance(given, str) and given in {o.id for o in question.options} else None
        page = next((part.page for part in bank.parts if part.id == question.part), None)
        lines.append(
            MarkedLine(
                question_id=qid,
                label=question.label,
                answer=question.option_text(known) if known else None,
                right=question.is_correct(known) if known else None,
                correct=question.option_text(question.correct),
                misconception=question.misconception(known) if known else None,
                page=page,
            )
        )
    return tuple(lines)


def _text_field(record: Any, field: str) -> str | None:
    """`record[field]` when it is non-blank text; anything malformed reads as missing."""
    if not isinstance(record, Mapping):
        return None
    value = record.get(field)
    return value.strip() if isinstance(value, str) and value.strip() else None


def build_report(
    bank: Bank,
    snapshot: Mapping[str, Any],
    *,
    layer: LayerFigures | None,
    budget: BudgetFigures | None,
    run_a_brief: str = "",
) -> Report:
    """The report for a state snapshot (answers, settings, records, handed_in_at)."""
    answers = snapshot.get("answers") or {}
    records = snapshot.get("records") or {}
    choice = _text_field(records.get(DECISION_RECORD), "choice")
    return Report(
        checks=_marked_lines(bank, answers, check_ids(bank)),
        quiz=_marked_lines(bank, answers, quiz_ids(bank)),
        checks_score=checks_score(bank, answers),
        quiz_score=quiz_score(bank, answers),
        overall_score=overall_score(bank, answers),
        layer=layer,
        budget=budget,
        first_experiment=FIRST_EXPERIMENTS.get(choice, choice) if choice else None,
        reasoning=_text_field(records.get(DECISION_RECORD), "why"),
        run_b_measure=_text_field(records.get(REFLECTION_RECORD), "text"),
        not_done=tuple(s.title for s in part_statuses(bank, answers, records) if not s.complete),
        handed_in_at=snapshot.get("handed_in_at"),
        scaling=evidence_summary(records, (snapshot.get("settings") or {}).get("scaling") or {}),
        run_a_brief=run_a_brief,
        predictions=prediction_lines(bank, records),
        predictions_score=predictions_score(bank, records),
    )


def scaling_progress(summary: EvidenceSummary) -> str:
    """How far the Scaling out lab got, in one sentence (the page and the Markdown report share it)."""
    figures = {"parts_current": summary.parts_current, "parts_total": summary.parts_total}
    if summary.ready:
        return lessons.sentence("quiz_report", "scaling_ready", **figures)
    return lessons.sentence("quiz_report", "scaling_not_ready", **figures)


def unanswered_quiz(bank: Bank, answers: Mapping[str, str]) -> tuple[str, ...]:
    """Labels of the quiz questions still without an answer (these block handing in)."""
    return tuple(bank.question(qid).label for qid in quiz_ids(bank) if qid not in answers)
