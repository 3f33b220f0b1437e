"""The progress file: a versioned JSON export of a learner's state, and its strict import.

A file is refused, with a sentence saying why, unless every part of it is something this
lab could have written itself: the right format and version, known keys only, bounded
text and lists, answers that are options of the current question bank, settings the page
schemas accept and records the lab knows. Importing is pure: it returns a new merged state
and never touches the one it was given, so a refused file changes nothing.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.learner_text import MAX_CHARS
from core.questions import Bank
from core.report import DECISION_RECORD, FIRST_EXPERIMENTS, REFLECTION_RECORD, build_report, readable_time
from core.scaling.evidence import PREDICTIONS, SNAPSHOTS, SYNTHESIS
from core.settings_schema import Section
from core.signing import SIGNATURE_FIELD, UNSIGNED, Verdict, is_signature_text, sign, verify

FORMAT = "reading-a-training-run/progress"
VERSION = 1
PROGRESS_FILE_NAME = "training-run-progress.json"
REPORT_FILE_NAME = "training-run-report.md"

MAX_FILE_BYTES = 200_000
MAX_DEPTH = 8
MAX_TEXT_CHARS = MAX_CHARS
MAX_ITEMS = 50
MAX_KEY_CHARS = 80

TOP_KEYS = ("format", "version", "exported_at", "state", SIGNATURE_FIELD)
STATE_KEYS = ("answers", "settings", "records", "handed_in_at")

# Records saved by pages that are not listed under a part in data/lab.json. Part records are
# added by `known_records`, so a new part's records are accepted as soon as lab.json names them.
EXTRA_RECORDS: tuple[str, ...] = (
    PREDICTIONS,
    SNAPSHOTS,
    SYNTHESIS,
)  # the scaling lab, which is not a marked part

# The fields of records whose content we know: a tuple lists the allowed values, `str` is text.
# Any other known record only has to be bounded JSON.
RECORD_FIELDS: dict[str, dict[str, Any]] = {
    DECISION_RECORD: {"choice": tuple(FIRST_EXPERIMENTS), "why": str},
    REFLECTION_RECORD: {"text": str},
}


class RefusedFile(ValueError):
    """A progress file that cannot be used; the message says why in plain words."""


def _refuse(condition: bool, message: str) -> None:
    if not condition:
        raise RefusedFile(message)


def known_records(bank: Bank) -> tuple[str, ...]:
    """Every record name a progress file may carry: each part's records, then EXTRA_RECORDS."""
    return tuple(name for part in bank.parts for name in part.records) + EXTRA_RECORDS


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


def _bounded(value: Any, where: str) -> None:
    """Refuse oversized text, lists and objects, and numbers that are not finite, anywhere in `value`."""
    if isinstance(value, str):
        _refuse(
            len(value) <= MAX_TEXT_CHARS, f"{where} holds text longer than {MAX_TEXT_CHARS:,} characters."
        )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RefusedFile(f"{where} holds text with invalid characters.") from None
    elif isinstance(value, float):
        _refuse(math.isfinite(value), f"{where} holds a number too large to use.")
    elif isinstance(value, list):
        _refuse(len(value) <= MAX_ITEMS, f"{where} holds a list longer than {MAX_ITEMS} items.")
        for item in value:
            _bounded(item, where)
    elif isinstance(value, dict):
        _refuse(len(value) <= MAX_ITEMS, f"{where} holds an object with more than {MAX_ITEMS} keys.")
        for key, item in value.items():
            _refuse(len(key) <= MAX_KEY_CHARS, f"{where} holds a key longer than {MAX_KEY_CHARS} characters.")
            _bounded(item, where)


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


def _answers(raw: Any, bank: Bank) -> dict[str, str]:
    answers = _object(raw, "The answers")
    _refuse(
        set(answers) <= {q.id for q in bank.questions}, "The answers name a question this lab does not have."
    )
    for qid, option in answers.items():
        options = [o.id for o in bank.question(qid).options]
        _refuse(
            isinstance(option, str) and option in options, f"The answer to {qid} is not one of its options."
        )
    return dict(answers)


def _settings(raw: Any, schema: Mapping[str, Section]) -> dict[str, dict[str, Any]]:
    settings = _object(raw, "The settings")
    _refuse(set(settings) <= set(schema), "The settings name a page this lab does not have.")
    checked = {}
    for name, values in settings.items():
        section = schema[name]
        # Checked here as well as in Section.check so that no name from the file reaches a message.
        _object(values, f"The {name} settings")
        _refuse(
            set(values) <= {f.name for f in section.fields},
            f"The {name} settings name one this page does not have.",
        )
        try:
            checked[name] = section.check(values)
        except ValueError as err:
            raise RefusedFile(f"The {name} settings: {err}") from None
    return checked


def _record(name: str, value: Any) -> Any:
    _bounded(value, f"The record {name}")
    fields = RECORD_FIELDS.get(name)
    if fields is None:
        return value
    record = _object(value, f"The record {name}")
    _refuse(set(record) <= set(fields), f"The record {name} has a field this lab does not know.")
    for field, field_value in record.items():
        allowed = fields[field]
        ok = isinstance(field_value, str) if allowed is str else field_value in allowed
        _refuse(ok, f"The record {name} has an unusable {field}.")
    return record


def _records(raw: Any, bank: Bank) -> dict[str, Any]:
    records = _object(raw, "The records")
    _refuse(set(records) <= set(known_records(bank)), "The file has a record this lab does not know.")
    return {name: _record(name, value) for name, value in records.items()}


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
        "records": _records(state["records"], bank),
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


def _require_signature(document: Mapping[str, Any], key: str) -> None:
    verdict = verify(document, key)
    _refuse(
        verdict is not Verdict.UNSIGNED,
        "This app only restores progress files it signed, and this one is unsigned.",
    )
    _refuse(
        verdict is Verdict.INTACT,
        "This file's signature does not match its content: it was edited after it was saved.",
    )


@dataclass(frozen=True)
class Restored:
    """The state after an import, and what the import changed."""

    state: dict[str, Any]
    answers_added: tuple[str, ...]
    answers_kept: tuple[str, ...]
    kept_labels: tuple[str, ...]

    def summary(self) -> str:
        """One or two sentences telling the learner what happened."""
        added = len(self.answers_added)
        text = f"Progress restored: {added} answer{'' if added == 1 else 's'} added, settings and written work loaded."
        if self.kept_labels:
            text += f" Already locked here, so kept as they were: {'; '.join(self.kept_labels)}."
        if self.state["handed_in_at"] is not None:
            text += f" The file was handed in on {readable_time(self.state['handed_in_at'])}, so the lab is now read-only."
        return text


def restore(
    current: Mapping[str, Any],
    data: bytes,
    *,
    bank: Bank,
    schema: Mapping[str, Section],
    key: str | None,
) -> Restored:
    """Merge an uploaded progress file into `current` (left untouched); RefusedFile if not usable.

    Answers locked in `current` win over the file's; settings and records from the file replace
    the current ones. With a signing key only files this app signed, unedited, are accepted.
    """
    _refuse(
        current.get("handed_in_at") is None,
        "This lab is already handed in, so nothing can be restored into it.",
    )
    document = load_json(data)
    incoming = parse_document(document, bank=bank, schema=schema)
    if key:
        _require_signature(document, key)
    locked = current.get("answers") or {}
    settings = copy.deepcopy(dict(current.get("settings") or {}))
    for section, values in incoming["settings"].items():
        settings[section] = {**settings.get(section, {}), **values}
    records = {**copy.deepcopy(dict(current.get("records") or {})), **incoming["records"]}
    locked_predictions = (current.get("records") or {}).get(PREDICTIONS) or {}
    if locked_predictions:
        # A prediction is locked like an answer: the file may add parts, never replace one.
        records[PREDICTIONS] = {**(incoming["records"].get(PREDICTIONS) or {}), **locked_predictions}
    merged = {
        "answers": {**incoming["answers"], **locked},
        "settings": settings,
        "records": records,
        "handed_in_at": incoming["handed_in_at"],
    }
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
        document = load_json(data)
        state = parse_document(document, bank=bank, schema=schema)
    except RefusedFile as err:
        return Inspection(verdict=None, problem=str(err), summary=None)
    report = build_report(bank, state, layer=None, budget=None)
    summary = (
        f"Checks {report.checks_score.label}, quiz {report.quiz_score.label}, "
        f"overall {report.overall_score.label}. {report.handed_in_text}"
    )
    return Inspection(verdict=verify(document, key), problem=None, summary=summary)
