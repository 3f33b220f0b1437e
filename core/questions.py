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
    """One answer a learner can pick; a wrong one names the misconception that would choose it."""

    id: str
    text: str
    misconception: str | None = None


def _find_option(options: tuple[Option, ...], option_id: str, owner: str) -> Option:
    for option in options:
        if option.id == option_id:
            return option
    raise ValueError(f"{owner} has no option {option_id!r}.")


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
        return _find_option(self.options, option_id, f"Question {self.id}").text

    def is_correct(self, option_id: str) -> bool:
        """Whether `option_id` is the right answer."""
        return option_id == self.correct

    def misconception(self, option_id: str) -> str | None:
        """The misconception behind a wrong option (None for the right one)."""
        return _find_option(self.options, option_id, f"Question {self.id}").misconception


@dataclass(frozen=True)
class Prediction:
    """A locked guess made before a page shows the result; what is true depends on the learner's settings.

    Options are in order; a guess within `tolerance` options of the truth holds (for ordered scales).
    """

    id: str
    part: str
    label: str
    prompt: str
    options: tuple[Option, ...]
    tolerance: int = 0

    def option_ids(self) -> tuple[str, ...]:
        """The option ids in order."""
        return tuple(o.id for o in self.options)

    def option_text(self, option_id: str) -> str:
        """The text of one of this prediction's options."""
        return _find_option(self.options, option_id, f"Prediction {self.id}").text

    def holds(self, choice: str, actual: str) -> bool:
        """Whether the guess `choice` counts as right when `actual` is what happened."""
        ids = self.option_ids()
        require(
            choice in ids and actual in ids, f"Prediction {self.id} was given an option it does not have."
        )
        return abs(ids.index(choice) - ids.index(actual)) <= self.tolerance

    def misconception(self, choice: str, actual: str) -> str | None:
        """The misconception behind a guess that missed, where the bank names one (None when it held)."""
        if self.holds(choice, actual):
            return None
        return _find_option(self.options, choice, f"Prediction {self.id}").misconception


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
    predictions: tuple[Prediction, ...] = ()

    def prediction(self, prediction_id: str) -> Prediction:
        """The prediction with this id."""
        for prediction in self.predictions:
            if prediction.id == prediction_id:
                return prediction
        raise ValueError(f"There is no prediction called {prediction_id!r}.")

    def question(self, question_id: str) -> Question:
        """The question with this id."""
        for question in self.questions:
            if question.id == question_id:
                return question
        raise ValueError(f"There is no marked question called {question_id!r}.")


def _option(raw: Mapping[str, Any], where: str, correct: str) -> Option:
    """One option; every wrong option must say which misconception would pick it, the right one none."""
    option_id = validate.text(raw, "id", where)
    if option_id == correct:
        require("misconception" not in raw, f"{where}: the correct option {option_id!r} has a misconception.")
        return Option(id=option_id, text=validate.text(raw, "text", where))
    return Option(
        id=option_id,
        text=validate.text(raw, "text", where),
        misconception=validate.text(raw, "misconception", f"{where}, option {option_id}"),
    )


def _question(raw: Mapping[str, Any], part_ids: set[str]) -> Question:
    qid = validate.text(raw, "id", "A question")
    where = f"Question {qid}"
    part = validate.text(raw, "part", where)
    require(part in part_ids, f"{where}: part {part!r} is not one of the lab's parts.")
    raw_options = validate.items(raw.get("options"), f"{where}: needs at least two options.", at_least=2)
    option_ids = [validate.text(o, "id", where) for o in raw_options]
    require(len(set(option_ids)) == len(option_ids), f"{where}: option ids repeat.")
    correct = validate.text(raw, "correct", where)
    require(correct in option_ids, f"{where}: the correct option {correct!r} is not among its options.")
    options = tuple(_option(o, where, correct) for o in raw_options)
    return Question(
        id=qid,
        part=part,
        label=validate.text(raw, "label", where),
        prompt=validate.text(raw, "prompt", where),
        options=options,
        correct=correct,
        explanation=validate.text(raw, "explanation", where),
    )


def _prediction_option(raw: Mapping[str, Any], where: str) -> Option:
    """An option of a prediction; which one is true depends on the settings, so each may name the
    misconception that would pick it when it is wrong."""
    option_id = validate.text(raw, "id", where)
    misconception = (
        validate.text(raw, "misconception", f"{where}, option {option_id}")
        if "misconception" in raw
        else None
    )
    return Option(id=option_id, text=validate.text(raw, "text", where), misconception=misconception)


def _prediction(raw: Mapping[str, Any], part_ids: set[str]) -> Prediction:
    pid = validate.text(raw, "id", "A prediction")
    where = f"Prediction {pid}"
    part = validate.text(raw, "part", where)
    require(part in part_ids, f"{where}: part {part!r} is not one of the lab's parts.")
    raw_options = validate.items(raw.get("options"), f"{where}: needs at least two options.", at_least=2)
    options = tuple(_prediction_option(o, where) for o in raw_options)
    require(len({o.id for o in options}) == len(options), f"{where}: option ids repeat.")
    tolerance = raw.get("tolerance", 0)
    require(
        isinstance(tolerance, int) and not isinstance(tolerance, bool) and 0 <= tolerance < len(options) - 1,
        f"{where}: 'tolerance' must be a whole number of options, at least 0 and fewer than the options.",
    )
    return Prediction(
        id=pid,
        part=part,
        label=validate.text(raw, "label", where),
        prompt=validate.text(raw, "prompt", where),
        options=options,
        tolerance=tolerance,
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
    raw_predictions = raw.get("predictions", [])
    require(isinstance(raw_predictions, list), "The question bank's 'predictions' must be a list.")
    predictions = tuple(_prediction(p, set(part_ids)) for p in raw_predictions)
    prediction_ids = [p.id for p in predictions]
    repeated = sorted({i for i in prediction_ids if prediction_ids.count(i) > 1})
    require(not repeated, f"Duplicate prediction ids: {', '.join(repeated)}.")
    return Bank(parts=parts, questions=questions, predictions=predictions)


def _records(raw_part: Mapping[str, Any]) -> Sequence[str]:
    message = f"Part {raw_part['id']}: 'records' must be a list of names."
    records = validate.items(raw_part.get("records", []), message)
    require(all(isinstance(r, str) and r for r in records), message)
    return records


@lru_cache(maxsize=1)
def load_bank() -> Bank:
    """The lab's bank from `data/lab.json`, read and validated once per process."""
    return parse_bank(read_json("lab.json"))
