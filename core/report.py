"""The learner's report: built from a state snapshot, rendered as Markdown for downloading.

The report does not know how other pages compute their figures. The page hands it small
figure objects (`LayerFigures`, `BudgetFigures`); a part the learner has not reached is
passed as None and shows as not done yet, never as an error.

Learner text (records) is untrusted. In Markdown it is placed inside code fences or code
spans long enough that nothing in the text can close them, so it can never become a link,
a heading, an image or HTML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.predictions import PredictionLine, prediction_lines, predictions_score
from core.progress import Score, check_ids, checks_score, overall_score, part_statuses, quiz_ids, quiz_score
from core.questions import Bank
from core.run_a import DECISION_RECORD, FIRST_EXPERIMENTS, REFLECTION_RECORD
from core.scaling.evidence import EvidenceSummary, evidence_summary

NOT_DONE = "Not done yet."
SCALING_NOT_STARTED = "Not started. Scaling out is a second lab, separate from this one."
REPORT_TITLE = "Reading a Training Run: my report"


@dataclass(frozen=True)
class LayerFigures:
    """The linear layer the learner configured, and its cost for one forward pass."""

    n_in: int
    m_out: int
    batch: int
    flops: float

    @property
    def gflops(self) -> float:
        """Forward-pass cost in billions of floating-point operations."""
        return self.flops / 1e9

    def sentence(self) -> str:
        """One line describing the layer and its cost."""
        return (
            f"A {self.n_in:,} → {self.m_out:,} linear layer at batch {self.batch:,} does "
            f"{readable_flops(self.flops)} in one forward pass."
        )


FLOP_UNITS = ((1e12, "TFLOPs"), (1e9, "GFLOPs"), (1e6, "MFLOPs"), (1e3, "kFLOPs"))


def readable_flops(flops: float) -> str:
    """A FLOP count to three significant figures in the largest unit it fills, e.g. `131 MFLOPs`."""
    if not (flops >= 0 and flops != float("inf")):
        raise ValueError(f"A FLOP count must be a finite number of at least zero, got {flops!r}.")
    for size, unit in FLOP_UNITS:
        if flops >= size:
            return f"{_significant(flops / size)} {unit}"
    return f"{_significant(flops)} FLOPs"


def _significant(value: float) -> str:
    """Three significant figures without scientific notation (1.07, 13.4, 537)."""
    digits = max(0, 2 - int(f"{value:e}".split("e")[1])) if value else 0
    return f"{value:,.{digits}f}"


@dataclass(frozen=True)
class BudgetFigures:
    """The training-memory budget the learner left on the memory page (decimal GB)."""

    parameters: float
    total_gb: float
    device_gb: float
    activations_gb: float
    optimizer_gb: float

    @property
    def fits(self) -> bool:
        """Whether the whole budget fits in the device's memory."""
        return self.total_gb <= self.device_gb

    @property
    def parameters_billion(self) -> float:
        """The parameter count in billions."""
        return self.parameters / 1e9

    def sentence(self) -> str:
        """One line: size, total against the device, whether it fits, and the two big terms."""
        verdict = "it fits" if self.fits else "it does not fit"
        return (
            f"{self.parameters_billion:,.2f}B parameters need {self.total_gb:,.1f} GB on a "
            f"{self.device_gb:,.0f} GB device: {verdict}. Activations take {self.activations_gb:,.1f} GB "
            f"and optimizer state {self.optimizer_gb:,.1f} GB."
        )


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
            return "Not handed in yet."
        return f"Handed in on {readable_time(self.handed_in_at)}."


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


def unanswered_quiz(bank: Bank, answers: Mapping[str, str]) -> tuple[str, ...]:
    """Labels of the quiz questions still without an answer (these block handing in)."""
    return tuple(bank.question(qid).label for qid in quiz_ids(bank) if qid not in answers)


def utc_timestamp(now: datetime) -> str:
    """The stored form of a moment (hand-in, export): ISO 8601 in UTC, to the second."""
    if now.tzinfo is None:
        raise ValueError("A timestamp needs a time zone.")
    return now.astimezone(UTC).replace(microsecond=0).isoformat()


def readable_time(iso: str) -> str:
    """An ISO timestamp as words, e.g. `30 November 2026 at 14:05 UTC`."""
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        raise ValueError(f"{str(iso)[:40]!r} is not a date and time.") from None
    if moment.tzinfo is None:
        raise ValueError(f"{iso[:40]!r} has no time zone.")
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 with an offset falls outside the calendar in UTC
        raise ValueError(f"{iso[:40]!r} is not a date and time this lab can read.") from None
    return f"{utc.day} {utc:%B %Y at %H:%M} UTC"


def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)


def literal_block(text: str) -> str:
    """Learner text as a fenced block that Markdown shows exactly as typed."""
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    body = text.replace("\r\n", "\n").replace("\r", "\n")
    return f"{fence}text\n{body}\n{fence}"


def literal_inline(text: str) -> str:
    """Short learner text on one line, as a code span nothing inside can break out of."""
    flat = " ".join(text.split())
    ticks = "`" * (_longest_run(flat, "`") + 1)
    return f"{ticks} {flat} {ticks}"


def _cell(text: str) -> str:
    """Our own text (question labels, options) made safe for a table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _marked_table(lines: tuple[MarkedLine, ...]) -> list[str]:
    rows = ["| Question | Your answer | Mark | Right answer |", "| --- | --- | --- | --- |"]
    rows += [
        f"| {_cell(line.label)} | {_cell(line.answer or '—')} | {line.mark} | "
        f"{_cell(line.correct) if line.right is False else ''} |"
        for line in lines
    ]
    return rows


def _predictions_table(report: Report) -> list[str]:
    rows = [
        "| Prediction | Your guess | What happened | Mark | What it suggests |",
        "| --- | --- | --- | --- | --- |",
    ]
    rows += [
        "| " + " | ".join(_cell(value) for value in row.values()) + " |" for row in report.prediction_rows()
    ]
    return rows


SYNTHESIS_HEADINGS = {
    "plan": "Recommended plan",
    "rejected": "Rejected alternative",
    "trigger": "What would reopen it",
    "limitation": "Remaining limitation",
}


def _scaling_lines(summary: EvidenceSummary | None) -> list[str]:
    if summary is None:
        return [SCALING_NOT_STARTED]
    lines = [
        f"Evidence current for {summary.parts_current} of {summary.parts_total} parts; "
        f"the synthesis is {'ready' if summary.ready else 'not ready yet'}.",
        "",
    ]
    lines += [
        f"- {heading}: {_cell(summary.choices[name])}"
        for name, heading in SYNTHESIS_HEADINGS.items()
        if name in summary.choices
    ]
    lines += ["", "My rationale:", "", literal_block(summary.rationale) if summary.rationale else NOT_DONE]
    return lines


def render_markdown(report: Report) -> str:
    """The report as a Markdown document for a portfolio or an instructor."""
    experiment = report.first_experiment
    if experiment is not None and experiment not in FIRST_EXPERIMENTS.values():
        experiment = literal_inline(experiment)
    lines = [
        f"# {REPORT_TITLE}",
        "",
        report.handed_in_text,
        "",
        "## Scores",
        "",
        "| | Score |",
        "| --- | --- |",
        f"| Marked checks | {report.checks_score.label} |",
        f"| Quiz | {report.quiz_score.label} |",
        f"| Overall | {report.overall_score.label} |",
        f"| Predictions that held (not marked) | {report.predictions_score.label} |",
        "",
        "## Marked checks",
        "",
        *_marked_table(report.checks),
        "",
        "## Quiz",
        "",
        *_marked_table(report.quiz),
        "",
        "## Predictions",
        "",
        *_predictions_table(report),
        "",
        "## The layer I built",
        "",
        report.layer.sentence() if report.layer else NOT_DONE,
        "",
        "## The memory budget I left",
        "",
        report.budget.sentence() if report.budget else NOT_DONE,
        "",
        "## Run A: my first experiment",
        "",
        *([report.run_a_brief, ""] if report.run_a_brief else []),
        experiment or NOT_DONE,
        "",
        "My reasoning:",
        "",
        literal_block(report.reasoning) if report.reasoning else NOT_DONE,
        "",
        "## Run B: what I would measure",
        "",
        literal_block(report.run_b_measure) if report.run_b_measure else NOT_DONE,
        "",
        "## Scaling out: my plan",
        "",
        *_scaling_lines(report.scaling),
        "",
        "## Parts not done yet",
        "",
        *([f"- {_cell(title_)}" for title_ in report.not_done] or ["None: every part is complete."]),
    ]
    return "\n".join(lines) + "\n"
