"""A workshop room's class view, as pure functions of the work its learners stored.

The instructor sees aggregates: how far each part got, the first answers to every marked
question, Run A's decisions, the Scaling out predictions beside the computed answers, and the
most common wrong answers; the CSV export adds each learner's first answers under a room-local
number and the display name they gave, if any (data/lessons/rooms/what_instructor_sees.md tells
learners exactly this). A learner sees a question's class distribution only once the instructor
revealed it and the learner answered it. Nothing here returns what a learner wrote.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from core.datafiles import require
from core.progress import part_statuses
from core.questions import Bank, Question
from core.run_a import DECISION_RECORD, FIRST_EXPERIMENTS
from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS, SETTINGS_SECTION, prediction_of
from core.scaling.outcomes import graded_outcomes
from core.scaling.scenarios import load_scaling
from core.scaling.wording import PARTS

MAX_NAME_CHARS = 40
ROOM_CODE_CHARS = 6
# No look-alike letters or digits (0/O, 1/I/L), so a code read off a projector is typed right.
ROOM_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
_ROOM_CODE = re.compile(rf"[{ROOM_CODE_ALPHABET}]{{{ROOM_CODE_CHARS}}}")


@dataclass(frozen=True)
class LearnerWork:
    """What one learner of a room stored: answers, records, settings, and the name they typed."""

    answers: Mapping[str, str]
    records: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    name: str | None = None


@dataclass(frozen=True)
class PartCount:
    """How many learners started and finished one part of the lab."""

    part_id: str
    title: str
    started: int
    complete: int


@dataclass(frozen=True)
class OptionCount:
    """How many learners gave one option as their first answer."""

    option_id: str
    text: str
    count: int
    correct: bool


@dataclass(frozen=True)
class Distribution:
    """The first answers to one question, every option listed in the bank's order."""

    question_id: str
    label: str
    options: tuple[OptionCount, ...]

    @property
    def answered(self) -> int:
        """How many learners answered."""
        return sum(option.count for option in self.options)

    @property
    def right(self) -> int:
        """How many answered correctly."""
        return sum(option.count for option in self.options if option.correct)


@dataclass(frozen=True)
class WrongAnswer:
    """One wrong option and how many learners chose it first."""

    question_id: str
    label: str
    option_id: str
    text: str
    count: int


@dataclass(frozen=True)
class DecisionCount:
    """How many learners chose one first experiment for Run A, and how many of them gave reasons."""

    choice: str
    label: str
    count: int
    with_reasons: int


@dataclass(frozen=True)
class PredictionCount:
    """For one Scaling out part and option: how many predicted it and for how many it came true."""

    part: str
    option_id: str
    label: str
    predicted: int
    computed: int


def check_display_name(typed: object) -> str | None:
    """The display name to store (None for anonymous); ValueError for one over 40 characters."""
    if typed is not None and not isinstance(typed, str):
        raise ValueError("A display name must be text.")
    text = unicodedata.normalize("NFC", typed or "")
    # Control and formatting characters (newlines, bidi overrides) could disguise a name.
    text = "".join(c for c in text if unicodedata.category(c)[0] != "C")
    text = " ".join(text.split())
    require(
        len(text) <= MAX_NAME_CHARS,
        f"A display name can be at most {MAX_NAME_CHARS} characters; yours has {len(text)}.",
    )
    return text or None


MAX_TYPED_CODE_CHARS = 40  # a code with spaces and dashes typed in; anything longer is not one


def parse_room_code(typed: object) -> str | None:
    """A typed room code in stored form (upper case, no spaces or dashes), or None if it cannot be one."""
    if not isinstance(typed, str) or len(typed) > MAX_TYPED_CODE_CHARS:
        return None
    code = re.sub(r"[\s-]", "", typed.upper())
    return code if _ROOM_CODE.fullmatch(code) else None


JOIN_PARAM = "room"


def join_link(page_url: str, code: str, *, page_path: str = "instructor") -> str:
    """The app's root URL with the room code as `?room=`, made from the URL of the page showing it."""
    parts = urlsplit(page_url)
    path = parts.path.removesuffix(page_path)
    return urlunsplit((parts.scheme, parts.netloc, path or "/", urlencode({JOIN_PARAM: code}), ""))


def part_counts(bank: Bank, works: Iterable[LearnerWork]) -> tuple[PartCount, ...]:
    """For each part in lesson order: learners who did anything in it, and who completed it."""
    statuses = [part_statuses(bank, work.answers, work.records) for work in works]
    return tuple(
        PartCount(
            part_id=part.id,
            title=part.title,
            started=sum(
                learner[index].questions_answered + learner[index].records_done > 0 for learner in statuses
            ),
            complete=sum(learner[index].complete for learner in statuses),
        )
        for index, part in enumerate(bank.parts)
    )


def distribution(question: Question, works: Iterable[LearnerWork]) -> Distribution:
    """The first answers to `question` (answers that are not one of its options are not counted)."""
    counts = Counter(work.answers.get(question.id) for work in works)
    return Distribution(
        question_id=question.id,
        label=question.label,
        options=tuple(
            OptionCount(
                option_id=option.id,
                text=option.text,
                count=counts[option.id],
                correct=question.is_correct(option.id),
            )
            for option in question.options
        ),
    )


def distributions(bank: Bank, works: Sequence[LearnerWork]) -> tuple[Distribution, ...]:
    """Every marked question's distribution, in the bank's order."""
    return tuple(distribution(question, works) for question in bank.questions)


def common_wrong_answers(found: Iterable[Distribution]) -> tuple[WrongAnswer, ...]:
    """Every wrong option chosen at least once, most chosen first (ties in the bank's order)."""
    wrong = [
        WrongAnswer(
            question_id=dist.question_id,
            label=dist.label,
            option_id=option.option_id,
            text=option.text,
            count=option.count,
        )
        for dist in found
        for option in dist.options
        if not option.correct and option.count > 0
    ]
    return tuple(sorted(wrong, key=lambda answer: -answer.count))  # sorted() is stable


def run_a_decisions(works: Iterable[LearnerWork]) -> tuple[DecisionCount, ...]:
    """Run A's first experiments: how many chose each, and how many wrote reasons (never the text)."""
    decisions = [work.records.get(DECISION_RECORD) for work in works]
    valid = [d for d in decisions if isinstance(d, Mapping) and d.get("choice") in FIRST_EXPERIMENTS]
    return tuple(
        DecisionCount(
            choice=choice,
            label=label,
            count=sum(d["choice"] == choice for d in valid),
            with_reasons=sum(
                d["choice"] == choice and isinstance(d.get("why"), str) and d["why"].strip() != ""
                for d in valid
            ),
        )
        for choice, label in FIRST_EXPERIMENTS.items()
    )


def _learner_outcomes(work: LearnerWork) -> dict[str, str]:
    try:
        return graded_outcomes(work.settings.get(SETTINGS_SECTION, {}), work.records.get(PREDICTION_TRACKS))
    except (ValueError, KeyError, TypeError):
        return {}  # settings the current scenarios cannot compute (an older release's values)


def scaling_predictions(works: Iterable[LearnerWork]) -> tuple[PredictionCount, ...]:
    """Per part and option: learners who predicted it, and learners for whose settings it came true.

    Only learners who locked a prediction for a part count on either side, so the two bars of a
    part add up to the same total.
    """
    predicted: Counter[tuple[str, str]] = Counter()
    computed: Counter[tuple[str, str]] = Counter()
    for work in works:
        locked = {part: prediction_of(work.records.get(PREDICTIONS), part) for part in PARTS}
        if not any(locked.values()):
            continue
        outcomes = _learner_outcomes(work)
        for part, option in locked.items():
            if option is not None and part in outcomes:
                predicted[(part, option)] += 1
                computed[(part, outcomes[part])] += 1
    return tuple(
        PredictionCount(
            part=part,
            option_id=option,
            label=label,
            predicted=predicted[(part, option)],
            computed=computed[(part, option)],
        )
        for part, text in load_scaling().parts.items()
        for option, label in text.options.items()
    )


def may_see_distribution(*, revealed: bool, answered: bool) -> bool:
    """A learner sees a question's class distribution only when it is revealed and they answered it."""
    return revealed and answered


def visible_distributions(
    found: Iterable[Distribution], *, revealed: Iterable[str], answers: Mapping[str, str]
) -> tuple[Distribution, ...]:
    """The distributions one learner may see, given the revealed question ids and their own answers."""
    shown = set(revealed)
    return tuple(
        dist
        for dist in found
        if may_see_distribution(revealed=dist.question_id in shown, answered=dist.question_id in answers)
    )


def csv_safe(text: str) -> str:
    """Text a spreadsheet shows as text: a leading =, +, - or @ would make a formula of it."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _mark(question: Question, option_id: str | None) -> str:
    if option_id is None:
        return ""
    return "true" if question.is_correct(option_id) else "false"


EXPORT_COLUMNS = ("learner", "display_name", "question", "label", "answer", "correct")


def export_rows(bank: Bank, works: Sequence[LearnerWork]) -> list[dict[str, str]]:
    """One row per learner and question for the CSV export: a room-local number, the name only if given."""
    return [
        {
            "learner": str(number),
            "display_name": csv_safe(work.name or ""),
            "question": question.id,
            "label": question.label,
            "answer": work.answers.get(question.id, ""),
            "correct": _mark(question, work.answers.get(question.id)),
        }
        for number, work in enumerate(works, start=1)
        for question in bank.questions
    ]
