"""Marked answers: the first answer to a question is the one that counts."""

from __future__ import annotations

from collections.abc import Mapping


def record_first(answers: Mapping[str, str], question_id: str, option_id: str) -> tuple[dict[str, str], bool]:
    """A copy of `answers` with this answer added, and whether it was accepted (not already locked)."""
    if not question_id or not option_id:
        raise ValueError("An answer needs both a question and an option.")
    if question_id in answers:
        return dict(answers), False
    return {**answers, question_id: option_id}, True
