"""The marked-question bank and the lab's parts, loaded from `data/lab.json` and validated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import read_json, require


@dataclass(frozen=True)
class Option:
    """One answer a learner can pick; a wrong one names the misconception that would choose it."""

    id: str
    text: str
    misconception: str | None = None


@dataclass(frozen=True)
class Question:
    """A marked question: one answer, then the explanation."""

    id: str
    part: str
    label: str
    prompt: str
    options: tuple[Option, ...]
    correct: str
    explanation: str

    def option_text(self, option_id: str) -> str:
        """The text of one of this question's options."""
        for option in self.options:
            if option.id == option_id:
                return option.text
        raise ValueError(f"Question {self.id} has no option {option_id!r}.")

    def is_correct(self, option_id: str) -> bool:
        """Whether `option_id` is the right answer."""
        return option_id == self.correct

    def misconception(self, option_id: str) -> str | None:
        """The misconception behind a wrong option (None for the right one)."""
        for option in self.options:
            if option.id == option_id:
                return option.misconception
        raise ValueError(f"Question {self.id} has no option {option_id!r}.")


@dataclass(frozen=True)
class Part:
    """A section of the lab and what completes it: its questions and the records it needs."""

    id: str
    title: str
    question_ids: tuple[str, ...]
    records: tuple[str, ...]
    page: str | None  # the page file that teaches this part, relative to Home.py


@dataclass(frozen=True)
class Bank:
    """All parts and questions of the lab, in lesson order."""

    parts: tuple[Part, ...]
    questions: tuple[Question, ...]

    def question(self, question_id: str) -> Question:
        """The question with this id."""
        for question in self.questions:
            if question.id == question_id:
                return question
        raise ValueError(f"There is no marked question called {question_id!r}.")

    def in_part(self, part_id: str) -> tuple[Question, ...]:
        """The questions of one part, in order."""
        return tuple(q for q in self.questions if q.part == part_id)


def _text(raw: Mapping[str, Any], field: str, where: str) -> str:
    value = raw.get(field)
    require(isinstance(value, str) and value.strip() != "", f"{where}: '{field}' must be non-empty text.")
    return value


def _option(raw: Mapping[str, Any], where: str, correct: str) -> Option:
    """One option; every wrong option must say which misconception would pick it, the right one none."""
    option_id = _text(raw, "id", where)
    if option_id == correct:
        require("misconception" not in raw, f"{where}: the correct option {option_id!r} has a misconception.")
        return Option(id=option_id, text=_text(raw, "text", where))
    return Option(
        id=option_id,
        text=_text(raw, "text", where),
        misconception=_text(raw, "misconception", f"{where}, option {option_id}"),
    )


def _question(raw: Mapping[str, Any], part_ids: set[str]) -> Question:
    qid = _text(raw, "id", "A question")
    where = f"Question {qid}"
    part = _text(raw, "part", where)
    require(part in part_ids, f"{where}: part {part!r} is not one of the lab's parts.")
    raw_options = raw.get("options")
    require(isinstance(raw_options, list) and len(raw_options) >= 2, f"{where}: needs at least two options.")
    option_ids = [_text(o, "id", where) for o in raw_options]
    require(len(set(option_ids)) == len(option_ids), f"{where}: option ids repeat.")
    correct = _text(raw, "correct", where)
    require(correct in option_ids, f"{where}: the correct option {correct!r} is not among its options.")
    options = tuple(_option(o, where, correct) for o in raw_options)
    return Question(
        id=qid,
        part=part,
        label=_text(raw, "label", where),
        prompt=_text(raw, "prompt", where),
        options=options,
        correct=correct,
        explanation=_text(raw, "explanation", where),
    )


def parse_bank(raw: Mapping[str, Any]) -> Bank:
    """Build and validate a bank from its JSON form; any problem raises ValueError."""
    require(isinstance(raw, Mapping), "The question bank must be a JSON object.")
    raw_parts = raw.get("parts")
    raw_questions = raw.get("questions")
    require(isinstance(raw_parts, list) and raw_parts, "The question bank needs a list of parts.")
    require(isinstance(raw_questions, list), "The question bank needs a list of questions.")
    part_ids = [_text(p, "id", "A part") for p in raw_parts]
    require(len(set(part_ids)) == len(part_ids), "Part ids repeat in the question bank.")
    questions = tuple(_question(q, set(part_ids)) for q in raw_questions)
    ids = [q.id for q in questions]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    require(not duplicates, f"Duplicate question ids: {', '.join(duplicates)}.")
    parts = tuple(
        Part(
            id=p["id"],
            title=_text(p, "title", f"Part {p['id']}"),
            question_ids=tuple(q.id for q in questions if q.part == p["id"]),
            records=tuple(_records(p)),
            page=p.get("page"),
        )
        for p in raw_parts
    )
    return Bank(parts=parts, questions=questions)


def _records(raw_part: Mapping[str, Any]) -> Sequence[str]:
    records = raw_part.get("records", [])
    require(
        isinstance(records, list) and all(isinstance(r, str) and r for r in records),
        f"Part {raw_part['id']}: 'records' must be a list of names.",
    )
    return records


@lru_cache(maxsize=1)
def load_bank() -> Bank:
    """The lab's bank from `data/lab.json`, read and validated once per process."""
    return parse_bank(read_json("lab.json"))
