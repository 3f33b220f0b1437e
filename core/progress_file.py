"""The progress file: a versioned JSON export of a learner's state, and its strict import.

A file is refused, with a sentence saying why, unless every part of it is something this
lab could have written itself: the right format and version, known keys only, bounded
text and lists, answers that are options of the current question bank, settings the page
schemas accept and records the lab knows. Importing is pure: it returns a new merged state
and never touches the one it was given, so a refused file changes nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core import lessons
from core.client_values import (
    MAX_DEPTH,
    MAX_STATE_BYTES,
    bounded,
    check_answer,
    check_record,
    check_size,
    known_records,
)
from core.predictions import RECORD_PREFIX
from core.questions import Bank
from core.report.contents import build_report
from core.report.moments import readable_time
from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS
from core.settings_schema import Section
from core.signing import SIGNATURE_FIELD, UNSIGNED, Verdict, is_signature_text, sign, verify

FORMAT = "reading-a-training-run/progress"
VERSION = 1
PROGRESS_FILE_NAME = "training-run-progress.json"
REPORT_FILE_NAME = "training-run-report.md"

MAX_FILE_BYTES = MAX_STATE_BYTES

TOP_KEYS = ("format", "version", "exported_at", "state", SIGNATURE_FIELD)
STATE_KEYS = ("answers", "settings", "records", "handed_in_at")


class RefusedFile(ValueError):
    """A progress file that cannot be used; the message says why in plain words."""


def _refuse(condition: bool, message: str) -> None:
    if not condition:
        raise RefusedFile(message)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    _refuse(len(set(keys)) == len(keys), "The file repeats a key inside one object.")
    return dict(pairs)


def _no_constants(name: str) -> None:
    raise RefusedFile(f"The file contains {name}, which is not a number JSON allows.")


# A string (its closing quote optional, so every match succeeds and the scan stays linear on
# hostile input) or one bracket.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.S)


def _check_nesting(text: str) -> None:
    """Refuse deep nesting before parsing, so a hostile file cannot exhaust the parser."""
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        opener = token.group()
        if opener in ("[", "{"):
            depth += 1
            _refuse(depth <= MAX_DEPTH, f"The file is nested more than {MAX_DEPTH} levels deep.")
        elif opener in ("]", "}"):
            depth -= 1


def load_json(data: bytes) -> Any:
    """Parse an uploaded file: size limit, UTF-8, bounded nesting, no repeated keys, finite numbers."""
    _refuse(
        len(data) <= MAX_FILE_BYTES,
        f"The file is larger than {MAX_FILE_BYTES // 1000} kB; a progress file is a few kB.",
    )
    _refuse(len(data) > 0, "The file is empty.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RefusedFile("The file is not UTF-8 text, so it is not a progress file.") from None
    _check_nesting(text)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants)
    except RefusedFile:
        raise
    except (ValueError, RecursionError) as err:
        where = f" (line {err.lineno})" if isinstance(err, json.JSONDecodeError) else ""
        raise RefusedFile(
            f"The file is not valid JSON{where}: it may be cut short or edited by hand."
        ) from None


def _within_limits(document: Any) -> None:
    """Refuse oversized text, keys, lists, objects and numbers anywhere, before anything else reads them."""
    with _refusing():
        bounded(document, "The file")


def _object(value: Any, where: str, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    _refuse(isinstance(value, dict), f"{where} must be a JSON object.")
    if keys is not None:
        _refuse(set(value) <= set(keys), f"{where} has keys this lab does not know.")
        missing = [k for k in keys if k not in value]
        _refuse(not missing, f"{where} is missing {', '.join(missing)}.")
    return value


def _timestamp(value: Any, where: str) -> str:
    _refuse(isinstance(value, str), f"{where} must be a date and time.")
    try:
        readable_time(value)
    except ValueError:
        raise RefusedFile(f"{where} must be a date and time with a time zone.") from None
    return value


@contextmanager
def _refusing(prefix: str = "") -> Iterator[None]:
    """Turn a ValueError from the shared checks into a refusal with the same sentence."""
    try:
        yield
    except RefusedFile:
        raise
    except ValueError as err:
        raise RefusedFile(f"{prefix}{err}") from None


def _answers(raw: Any, bank: Bank) -> dict[str, str]:
    answers = _object(raw, "The answers")
    _refuse(
        set(answers) <= {q.id for q in bank.questions}, "The answers name a question this lab does not have."
    )
    with _refusing():
        return {qid: check_answer(qid, option, bank=bank) for qid, option in answers.items()}


def _settings(raw: Any, schema: Mapping[str, Section]) -> dict[str, dict[str, Any]]:
    settings = _object(raw, "The settings")
    _refuse(set(settings) <= set(schema), "The settings name a page this lab does not have.")
    checked = {}
    for name, values in settings.items():
        section = schema[name]
        # Checked before Section.check so that no name from the file reaches a message.
        _object(values, f"The {name} settings")
        _refuse(
            set(values) <= {f.name for f in section.fields},
            f"The {name} settings name one this page does not have.",
        )
        with _refusing(f"The {name} settings: "):
            checked[name] = section.check(values)
    return checked


def _records(raw: Any, bank: Bank, schema: Mapping[str, Section]) -> dict[str, Any]:
    records = _object(raw, "The records")
    _refuse(set(records) <= set(known_records(bank)), "The file has a record this lab does not know.")
    with _refusing():
        return {name: check_record(name, value, bank=bank, schema=schema) for name, value in records.items()}


def parse_document(document: Any, *, bank: Bank, schema: Mapping[str, Section]) -> dict[str, Any]:
    """The learner state inside a parsed progress file, strictly validated; RefusedFile if not usable."""
    _refuse(
        isinstance(document, dict) and document.get("format") == FORMAT,
        "This is not a progress file from this lab.",
    )
    version = document.get("version")
    _refuse(
        isinstance(version, int) and not isinstance(version, bool), "The file has no usable version number."
    )
    _refuse(version <= VERSION, "The file comes from a newer version of this lab; it cannot be read here.")
    _refuse(version == VERSION, "The file has a version number this lab does not read.")
    _object(document, "The file", TOP_KEYS)
    _timestamp(document["exported_at"], "The export time")
    _refuse(is_signature_text(document[SIGNATURE_FIELD]), "The file's signature field is damaged.")
    state = _object(document["state"], "The saved state", STATE_KEYS)
    handed_in_at = state["handed_in_at"]
    return {
        "answers": _answers(state["answers"], bank),
        "settings": _settings(state["settings"], schema),
        "records": _records(state["records"], bank, schema),
        "handed_in_at": None if handed_in_at is None else _timestamp(handed_in_at, "The hand-in time"),
    }


def export_progress(snapshot: Mapping[str, Any], *, exported_at: str, key: str | None) -> bytes:
    """The progress file for a state snapshot, signed when a key is given."""
    document: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at,
        "state": {name: copy.deepcopy(snapshot.get(name)) for name in STATE_KEYS},
    }
    document[SIGNATURE_FIELD] = sign(document, key) if key else UNSIGNED
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")


# What a score is made of: the answers, the predictions (the Scaling parts', the tracks they were
# locked on, the lessons' `predict.<id>` records) and the hand-in. Only a file this installation
# signed, unedited, may bring them.
_MARK_RECORDS = (PREDICTIONS, PREDICTION_TRACKS)


def _is_mark_record(name: str) -> bool:
    return name in _MARK_RECORDS or name.startswith(RECORD_PREFIX)


def without_marks(state: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed state with its marks left out: settings and written work only."""
    return {
        "answers": {},
        "settings": state["settings"],
        "records": {name: value for name, value in state["records"].items() if not _is_mark_record(name)},
        "handed_in_at": None,
    }


@dataclass(frozen=True)
class Restored:
    """The state after an import, and what the import changed."""

    state: dict[str, Any]
    answers_added: tuple[str, ...]
    answers_kept: tuple[str, ...]
    kept_labels: tuple[str, ...]
    verdict: Verdict = Verdict.INTACT  # anything else: the file's marks were left out

    def summary(self) -> str:
        """One or two sentences telling the learner what happened."""
        added = len(self.answers_added)
        if self.verdict is not Verdict.INTACT:
            return lessons.sentence("quiz_report", _MARKS_LEFT_OUT[self.verdict])
        sentences = [
            lessons.sentence("quiz_report", "restored_one", added=added)
            if added == 1
            else lessons.sentence("quiz_report", "restored_many", added=added)
        ]
        if self.kept_labels:
            sentences.append(
                lessons.sentence("quiz_report", "kept_as_they_were", labels="; ".join(self.kept_labels))
            )
        if self.state["handed_in_at"] is not None:
            when = readable_time(self.state["handed_in_at"])
            sentences.append(lessons.sentence("quiz_report", "file_handed_in", when=when))
        return " ".join(sentences)


# Why a file's marks were left out, as a sentence in data/lessons/quiz_report/sentences.toml.
_MARKS_LEFT_OUT = {Verdict.UNSIGNED: "restored_unsigned", Verdict.EDITED: "restored_edited"}


def _read(data: bytes) -> Any:
    """The parsed document, within the limits; nothing else is read first."""
    document = load_json(data)
    _within_limits(document)
    return document


# A hostile file must end in a refusal, never in an exception a page would show: anything our own
# checks did not foresee is reported as this sentence.
UNREADABLE = "The file could not be read as a progress file from this lab."


def restore(
    current: Mapping[str, Any],
    data: bytes,
    *,
    bank: Bank,
    schema: Mapping[str, Section],
    key: str,
) -> Restored:
    """Merge an uploaded progress file into `current` (left untouched); RefusedFile if not usable.

    Answers locked in `current` win over the file's; settings and records from the file replace
    the current ones. Only a file signed with `key` and unedited since brings answers, predictions
    and a hand-in: from any other (unsigned, edited, or signed by another installation) only the
    settings and written work are taken, so an edited file can never raise a score.
    """
    _refuse(
        current.get("handed_in_at") is None,
        "This lab is already handed in, so nothing can be restored into it.",
    )
    try:
        document = _read(data)
        verdict = verify(document, key)
        state = parse_document(document, bank=bank, schema=schema)
        restored = _merge(current, state if verdict is Verdict.INTACT else without_marks(state), bank)
        return dataclasses.replace(restored, verdict=verdict)
    except RefusedFile:
        raise
    except Exception:  # noqa: BLE001 - see UNREADABLE
        raise RefusedFile(UNREADABLE) from None


def _merge(current: Mapping[str, Any], incoming: dict[str, Any], bank: Bank) -> Restored:
    locked = current.get("answers") or {}
    settings = copy.deepcopy(dict(current.get("settings") or {}))
    for section, values in incoming["settings"].items():
        settings[section] = {**settings.get(section, {}), **values}
    records = {**copy.deepcopy(dict(current.get("records") or {})), **incoming["records"]}
    for name in (PREDICTIONS, PREDICTION_TRACKS):
        locked_predictions = (current.get("records") or {}).get(name) or {}
        if locked_predictions:
            # A prediction (and the track it was made on) is locked like an answer: the file may add
            # parts, never replace one.
            records[name] = {**(incoming["records"].get(name) or {}), **locked_predictions}
    for name, value in (current.get("records") or {}).items():
        if name.startswith(RECORD_PREFIX):  # a lesson prediction, locked the same way
            records[name] = copy.deepcopy(value)
    merged = {
        "answers": {**incoming["answers"], **locked},
        "settings": settings,
        "records": records,
        "handed_in_at": incoming["handed_in_at"],
    }
    with _refusing():
        check_size(merged)
    kept = tuple(q for q, option in incoming["answers"].items() if q in locked and locked[q] != option)
    return Restored(
        state=merged,
        answers_added=tuple(q for q in incoming["answers"] if q not in locked),
        answers_kept=kept,
        kept_labels=tuple(bank.question(q).label for q in kept),
    )


@dataclass(frozen=True)
class Inspection:
    """What an instructor learns from an uploaded file: its signature and, if readable, its scores."""

    verdict: Verdict | None
    problem: str | None
    summary: str | None


def inspect_file(data: bytes, *, bank: Bank, schema: Mapping[str, Section], key: str) -> Inspection:
    """Check a submitted progress file's signature with `key` and summarise what it holds."""
    try:
        document = _read(data)
        verdict = verify(document, key)
        state = parse_document(document, bank=bank, schema=schema)
        report = build_report(bank, state, layer=None, budget=None)
    except RefusedFile as err:
        return Inspection(verdict=None, problem=str(err), summary=None)
    except Exception:  # noqa: BLE001 - see UNREADABLE
        return Inspection(verdict=None, problem=UNREADABLE, summary=None)
    summary = lessons.sentence(
        "quiz_report",
        "file_scores",
        checks=report.checks_score.label,
        quiz=report.quiz_score.label,
        overall=report.overall_score.label,
        handed_in=report.handed_in_text,
    )
    return Inspection(verdict=verdict, problem=None, summary=summary)
