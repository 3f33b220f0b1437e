"""The marked-question bank and the lab's parts, loaded from `data/lab.json` and validated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core import validate
from core.datafiles import read_json, require


@dataclass(frozen=True)
class Option:
    """One answer a learner can pick."""

    id: str
    text: str


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


def _question(raw: Mapping[str, Any], part_ids: set[str]) -> Question:
    qid = validate.text(raw, "id", "A question")
    where = f"Question {qid}"
    part = validate.text(raw, "part", where)
    require(part in part_ids, f"{where}: part {part!r} is not one of the lab's parts.")
    raw_options = validate.items(raw.get("options"), f"{where}: needs at least two options.", at_least=2)
    options = tuple(
        Option(id=validate.text(o, "id", where), text=validate.text(o, "text", where)) for o in raw_options
    )
    option_ids = [o.id for o in options]
    require(len(set(option_ids)) == len(option_ids), f"{where}: option ids repeat.")
    correct = validate.text(raw, "correct", where)
    require(correct in option_ids, f"{where}: the correct option {correct!r} is not among its options.")
    return Question(
        id=qid,
        part=part,
        label=validate.text(raw, "label", where),
        prompt=validate.text(raw, "prompt", where),
        options=options,
        correct=correct,
        explanation=validate.text(raw, "explanation", where),
    )


def parse_bank(raw: Mapping[str, Any]) -> Bank:
    """Build and validate a bank from its JSON form; any problem raises ValueError."""
    raw = validate.mapping(raw, "The question bank must be a JSON object.")
    raw_parts = validate.items(raw.get("parts"), "The question bank needs a list of parts.", at_least=1)
    raw_questions = validate.items(raw.get("questions"), "The question bank needs a list of questions.")
    part_ids = [validate.text(p, "id", "A part") for p in raw_parts]
    require(len(set(part_ids)) == len(part_ids), "Part ids repeat in the question bank.")
    questions = tuple(_question(q, set(part_ids)) for q in raw_questions)
    ids = [q.id for q in questions]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    require(not duplicates, f"Duplicate question ids: {', '.join(duplicates)}.")
    parts = tuple(
        Part(
            id=p["id"],
            title=validate.text(p, "title", f"Part {p['id']}"),
            question_ids=tuple(q.id for q in questions if q.part == p["id"]),
            records=tuple(_records(p)),
            page=p.get("page"),
        )
        for p in raw_parts
    )
    return Bank(parts=parts, questions=questions)


def _records(raw_part: Mapping[str, Any]) -> Sequence[str]:
    message = f"Part {raw_part['id']}: 'records' must be a list of names."
    records = validate.items(raw_part.get("records", []), message)
    require(all(isinstance(r, str) and r for r in records), message)
    return records


@lru_cache(maxsize=1)
def load_bank() -> Bank:
    """The lab's bank from `data/lab.json`, read and validated once per process."""
    return parse_bank(read_json("lab.json"))
