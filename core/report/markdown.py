"""The report as a Markdown document for downloading, with learner text that cannot escape its box.

Learner text (records) is untrusted. It is placed inside code fences or code spans long enough
that nothing in the text can close them, so it can never become a link, a heading, an image or HTML.
"""

from __future__ import annotations

import re

from core import lessons
from core.report.contents import SYNTHESIS_HEADINGS, MarkedLine, Report, scaling_progress
from core.run_a import FIRST_EXPERIMENTS
from core.scaling.evidence import EvidenceSummary

REPORT_TITLE = "Reading a Training Run: my report"


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


def _scaling_lines(summary: EvidenceSummary | None) -> list[str]:
    if summary is None:
        return [lessons.sentence("quiz_report", "scaling_not_started")]
    lines = [scaling_progress(summary), ""]
    lines += [
        f"- {heading}: {_cell(summary.choices[name])}"
        for name, heading in SYNTHESIS_HEADINGS.items()
        if name in summary.choices
    ]
    not_done = lessons.sentence("quiz_report", "not_done")
    lines += ["", "My rationale:", "", literal_block(summary.rationale) if summary.rationale else not_done]
    return lines


def render_markdown(report: Report) -> str:
    """The report as a Markdown document for a portfolio or an instructor."""
    not_done = lessons.sentence("quiz_report", "not_done")
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
        report.layer.sentence() if report.layer else not_done,
        "",
        "## The memory budget I left",
        "",
        report.budget.sentence() if report.budget else not_done,
        "",
        "## Run A: my first experiment",
        "",
        *([report.run_a_brief, ""] if report.run_a_brief else []),
        experiment or not_done,
        "",
        "My reasoning:",
        "",
        literal_block(report.reasoning) if report.reasoning else not_done,
        "",
        "## Run B: what I would measure",
        "",
        literal_block(report.run_b_measure) if report.run_b_measure else not_done,
        "",
        "## Scaling out: my plan",
        "",
        *_scaling_lines(report.scaling),
        "",
        "## Parts not done yet",
        "",
        *(
            [f"- {_cell(title_)}" for title_ in report.not_done]
            or [lessons.sentence("quiz_report", "every_part_complete_report")]
        ),
    ]
    return "\n".join(lines) + "\n"
