"""Lesson predictions: a guess locked before a page reveals the result, kept as a record and scored
apart from the marked questions.

Each prediction is stored as its own record, `predict.<id>`, holding the learner's `choice` and the
`actual` outcome the page computed from the settings in force when the guess was locked, so a
later change of settings never rewrites whether a guess held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.datafiles import require
from core.progress import Score
from core.questions import Bank, Prediction

RECORD_PREFIX = "predict."


def record_name(prediction_id: str) -> str:
    """The record a prediction is kept under."""
    return f"{RECORD_PREFIX}{prediction_id}"


def record_names(bank: Bank) -> tuple[str, ...]:
    """Every prediction record a learner can have, in lesson order."""
    return tuple(record_name(p.id) for p in bank.predictions)


def record_fields(bank: Bank) -> dict[str, dict[str, tuple[str, ...]]]:
    """For each prediction record, the values its two fields may take (for checking imported files)."""
    return {record_name(p.id): {"choice": p.option_ids(), "actual": p.option_ids()} for p in bank.predictions}


def locked(prediction: Prediction, record: Any) -> tuple[str, str] | None:
    """(choice, actual) from a stored record, or None when there is no usable one."""
    if not isinstance(record, Mapping):
        return None
    choice, actual = record.get("choice"), record.get("actual")
    ids = prediction.option_ids()
    return (choice, actual) if choice in ids and actual in ids else None


def lock(prediction: Prediction, existing: Any, *, choice: str, actual: str) -> dict[str, str] | None:
    """The record to store for a new guess, or None when one is already locked (the first guess stands)."""
    ids = prediction.option_ids()
    require(choice in ids, f"{choice!r} is not one of the options of this prediction.")
    require(actual in ids, f"The outcome {actual!r} is not one of the options of this prediction.")
    if locked(prediction, existing) is not None:
        return None
    return {"choice": choice, "actual": actual}


@dataclass(frozen=True)
class PredictionLine:
    """One prediction in the report: the guess, what happened and whether the guess held."""

    prediction_id: str
    part: str
    label: str
    guess: str | None
    actual: str | None
    held: bool | None
    misconception: str | None = None  # what a missed guess suggests, where the bank names it

    @property
    def mark(self) -> str:
        """`held`, `missed` or `not made`."""
        if self.held is None:
            return "not made"
        return "held" if self.held else "missed"


def prediction_lines(bank: Bank, records: Mapping[str, Any]) -> tuple[PredictionLine, ...]:
    """Every lesson prediction with the learner's guess, in lesson order."""
    lines = []
    for prediction in bank.predictions:
        found = locked(prediction, records.get(record_name(prediction.id)))
        lines.append(
            PredictionLine(
                prediction_id=prediction.id,
                part=prediction.part,
                label=prediction.label,
                guess=prediction.option_text(found[0]) if found else None,
                actual=prediction.option_text(found[1]) if found else None,
                held=prediction.holds(*found) if found else None,
                misconception=prediction.misconception(*found) if found else None,
            )
        )
    return tuple(lines)


def predictions_score(bank: Bank, records: Mapping[str, Any]) -> Score:
    """Guesses that held, out of every lesson prediction; kept apart from the marked score."""
    lines = prediction_lines(bank, records)
    return Score(
        right=sum(line.held is True for line in lines),
        answered=sum(line.held is not None for line in lines),
        total=len(lines),
    )
