"""The learner's records on the Run A page: the first experiment with its reasoning, its feedback, and
the reflection on Run B."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core import lessons
from core.datafiles import require
from core.learner_text import MAX_CHARS
from core.run_a.brief import brief_figures
from core.run_a.experiments import EXPERIMENTS, check_experiment

DECISION_RECORD = "run_a.decision"
REFLECTION_RECORD = "run_a.reflection"
MAX_TEXT_CHARS = MAX_CHARS


def _text(value: Any, *, empty: str, what: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    require(text != "", empty)
    require(
        len(text) <= MAX_TEXT_CHARS,
        f"{what} is {len(text):,} characters long; please keep it to {MAX_TEXT_CHARS:,}.",
    )
    return text


def decision_record(*, choice: str | None, why: str | None) -> dict[str, str]:
    """The `run_a.decision` record for a submitted form, or a ValueError telling the learner what is
    missing."""
    if choice is None or choice not in EXPERIMENTS:
        raise ValueError("Pick one of the four experiments first.")
    return {
        "choice": choice,
        "why": _text(
            why,
            empty="Add your reasoning: why this experiment, and what would each result rule out?",
            what="Your reasoning",
        ),
    }


def reflection_record(*, text: str | None) -> dict[str, str]:
    """The `run_a.reflection` record for a submitted form, or a ValueError asking for text."""
    return {
        "text": _text(text, empty="Write a sentence or two about Run B, then submit.", what="Your answer")
    }


def stored_text(record: Any, field: str) -> str:
    """The text a stored record holds in `field` ("" when there is none), to refill its form."""
    value = record.get(field) if isinstance(record, Mapping) else None
    return value if isinstance(value, str) else ""


def saved_choice_index(record: Any) -> int | None:
    """Where a stored decision's choice sits among the experiments (None when nothing valid is stored)."""
    choice = record.get("choice") if isinstance(record, Mapping) else None
    return EXPERIMENTS.index(choice) if choice in EXPERIMENTS else None


def feedback(choice: str) -> str:
    """The feedback for one first experiment (data/lessons/run_a/feedback_*.md), its figures filled from Run
    A's computed brief."""
    check_experiment(choice)
    brief = brief_figures()
    match choice:
        case "batch":
            return lessons.text("run_a", "feedback_batch")
        case "optim":
            return lessons.text("run_a", "feedback_optim")
        case "gpu":
            return lessons.text("run_a", "feedback_gpu")
        case _:  # "model", the last of EXPERIMENTS (a test checks each experiment gets its own text)
            return lessons.text(
                "run_a",
                "feedback_model",
                weights_gb=brief.weights_gb,
                device=brief.device,
                other_gb=brief.other_gb,
                activations_gb=brief.activations_gb,
            )
