"""The one schema for everything a client can store: answers, settings and records.

A widget callback and a restored progress file go through the same checks here before
anything reaches a learner's state: the right type, an option the lab offers, bounded text,
lists and objects. The limits are also what keeps one session's memory small, so they apply
when a value is written, not only when a file is read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from core.config_record import CONFIG_RECORD, check_config_record
from core.datafiles import require
from core.learner_text import MAX_CHARS
from core.predictions import RECORD_PREFIX, record_names
from core.questions import Bank
from core.run_a import DECISION_RECORD, FIRST_EXPERIMENTS, REFLECTION_RECORD
from core.scaling.evidence import (
    PREDICTION_TRACKS,
    PREDICTIONS,
    SETTINGS_SECTION,
    SNAPSHOTS,
    SYNTHESIS,
    SYNTHESIS_CHOICES,
    UPSTREAM_SETTINGS,
)
from core.scaling.scenarios import load_scaling
from core.scaling.wording import PARTS
from core.settings_schema import Section

MAX_STATE_BYTES = 200_000  # the whole state as JSON; also the progress file's limit
MAX_DEPTH = 8
MAX_TEXT_CHARS = MAX_CHARS
MAX_ITEMS = 50
MAX_KEY_CHARS = 80
MAX_WHOLE_NUMBER = 2**53  # beyond this a JSON number loses precision in a browser

# Records saved by pages that are not listed under a part in data/lab.json. Part records are
# added by `known_records`, so a new part's records are accepted as soon as lab.json names them.
# The scaling lab, not a marked part, and the Memory budget page's config.json in use.
EXTRA_RECORDS: tuple[str, ...] = (PREDICTIONS, PREDICTION_TRACKS, SNAPSHOTS, SYNTHESIS, CONFIG_RECORD)

SNAPSHOT_KEYS = ("part", "upstream", "prediction", "inputs", "baseline", "result", "decision")


def known_records(bank: Bank) -> tuple[str, ...]:
    """Every record name a client may store: each part's records, EXTRA_RECORDS, then the lesson
    predictions."""
    return tuple(name for part in bank.parts for name in part.records) + EXTRA_RECORDS + record_names(bank)


def _text(value: Any, where: str) -> None:
    require(isinstance(value, str), f"{where} must be text.")
    require(len(value) <= MAX_TEXT_CHARS, f"{where} holds text longer than {MAX_TEXT_CHARS:,} characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{where} holds text with invalid characters.") from None


def bounded(value: Any, where: str, depth: int = 0) -> None:
    """ValueError unless `value` is plain JSON within the limits on text, keys, lists, objects and numbers."""
    require(depth <= MAX_DEPTH, f"{where} is nested more than {MAX_DEPTH} levels deep.")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        _text(value, where)
    elif isinstance(value, int):
        require(abs(value) <= MAX_WHOLE_NUMBER, f"{where} holds a number too large to use.")
    elif isinstance(value, float):
        require(math.isfinite(value), f"{where} holds a number too large to use.")
    elif isinstance(value, list):
        require(len(value) <= MAX_ITEMS, f"{where} holds a list longer than {MAX_ITEMS} items.")
        for item in value:
            bounded(item, where, depth + 1)
    elif isinstance(value, dict):
        require(len(value) <= MAX_ITEMS, f"{where} holds an object with more than {MAX_ITEMS} keys.")
        for key, item in value.items():
            require(isinstance(key, str), f"{where} holds a key that is not text.")
            require(len(key) <= MAX_KEY_CHARS, f"{where} holds a key longer than {MAX_KEY_CHARS} characters.")
            _text(key, where)
            bounded(item, where, depth + 1)
    else:
        raise ValueError(f"{where} holds something that is not plain JSON.")


def _object(
    value: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    require(isinstance(value, dict), f"{where} must be a JSON object.")
    require(set(value) <= set(allowed), f"{where} has a field this lab does not know.")
    require(set(required) <= set(value), f"{where} is missing a field.")
    return value


def _option(value: Any, options: Mapping[str, str] | tuple[str, ...], where: str) -> str:
    # Type first: a list or an object from a client is not hashable and must not reach `in`.
    require(isinstance(value, str) and value in options, f"{where} is not one of the options.")
    return value


def _decision(value: Any, schema: Mapping[str, Section]) -> Any:
    record = _object(value, "The Run A decision", ("choice", "why"), ("choice", "why"))
    _option(record["choice"], tuple(FIRST_EXPERIMENTS), "The Run A decision's choice")
    _text(record["why"], "The Run A decision's reasoning")
    return record


def _reflection(value: Any, schema: Mapping[str, Section]) -> Any:
    _text(_object(value, "The Run B answer", ("text",), ("text",))["text"], "The Run B answer")
    return value


def _predictions(value: Any, schema: Mapping[str, Section]) -> Any:
    record = _object(value, "The scaling predictions", PARTS)
    for part, option in record.items():
        _option(option, load_scaling().parts[part].options, f"The prediction for part {part}")
    return record


def _prediction_tracks(value: Any, schema: Mapping[str, Section]) -> Any:
    record = _object(value, "The tracks of the scaling predictions", PARTS)
    for part, track_key in record.items():
        _option(track_key, tuple(load_scaling().tracks), f"The track of the prediction for part {part}")
    return record


def _snapshot(part: str, value: Any, settings: Section) -> None:
    where = f"The snapshot of part {part}"
    snapshot = _object(value, where, SNAPSHOT_KEYS, SNAPSHOT_KEYS)
    text = load_scaling().parts[part]
    require(snapshot["part"] == part, f"{where} names another part.")
    _option(snapshot["prediction"], text.options, f"{where}'s prediction")
    _option(snapshot["decision"], text.decisions, f"{where}'s decision")
    names = UPSTREAM_SETTINGS[part]
    upstream = _object(snapshot["upstream"], f"{where}'s settings", names, names)
    for name, setting in upstream.items():
        settings.field(name).check(setting)
    for key in ("inputs", "baseline", "result"):
        require(isinstance(snapshot[key], dict), f"{where} must hold its figures as an object.")


def _snapshots(value: Any, schema: Mapping[str, Section]) -> Any:
    require(SETTINGS_SECTION in schema, "This lab has no scaling settings to check snapshots against.")
    record = _object(value, "The scaling snapshots", PARTS)
    for part, snapshot in record.items():
        _snapshot(part, snapshot, schema[SETTINGS_SECTION])
    return record


def _synthesis(value: Any, schema: Mapping[str, Section]) -> Any:
    data = load_scaling().synthesis
    allowed = {
        "plan": data.plans,
        "rejected": data.plans,
        "trigger": data.triggers,
        "limitation": data.limitations,
    }
    record = _object(value, "The scaling synthesis", (*SYNTHESIS_CHOICES, "rationale"))
    for name, choice in record.items():
        if choice is None:  # a radio the learner left empty
            continue
        if name == "rationale":
            _text(choice, "The rationale")
        else:
            _option(choice, allowed[name], f"The synthesis {name}")
    return record


def _lesson_prediction(prediction_id: str, value: Any, bank: Bank) -> Any:
    where = f"The prediction {bank.prediction(prediction_id).label!r}"
    record = _object(value, where, ("choice", "actual"), ("choice", "actual"))
    options = bank.prediction(prediction_id).option_ids()
    _option(record["choice"], options, f"{where}'s choice")
    _option(record["actual"], options, f"{where}'s outcome")
    return record


# The shape check of every record whose content the lab knows; any other known record only has to
# be bounded JSON. Each check gets the settings schemas, which snapshots refer to.
RECORD_CHECKS: dict[str, Callable[[Any, Mapping[str, Section]], Any]] = {
    DECISION_RECORD: _decision,
    REFLECTION_RECORD: _reflection,
    PREDICTIONS: _predictions,
    PREDICTION_TRACKS: _prediction_tracks,
    SNAPSHOTS: _snapshots,
    SYNTHESIS: _synthesis,
    CONFIG_RECORD: lambda value, schema: check_config_record(value),
}


def check_record(name: str, value: Any, *, bank: Bank, schema: Mapping[str, Section]) -> Any:
    """`value` if it may be stored as record `name`; else ValueError (also for an unknown record)."""
    require(isinstance(name, str) and name in known_records(bank), "This lab does not keep that record.")
    bounded(value, f"The record {name}")
    if name.startswith(RECORD_PREFIX):
        return _lesson_prediction(name.removeprefix(RECORD_PREFIX), value, bank)
    check = RECORD_CHECKS.get(name)
    return value if check is None else check(value, schema)


def check_answer(question_id: Any, option: Any, *, bank: Bank) -> str:
    """`option` if it is one of the options of the bank's question `question_id`; else ValueError."""
    require(
        isinstance(question_id, str) and question_id in {q.id for q in bank.questions},
        "This lab has no such question.",
    )
    return _option(
        option, tuple(o.id for o in bank.question(question_id).options), f"The answer to {question_id}"
    )


def check_setting(section_name: Any, name: Any, value: Any, *, schema: Mapping[str, Section]) -> Any:
    """The setting as the page schema accepts it (strictly); else ValueError."""
    require(isinstance(section_name, str) and section_name in schema, "This lab has no such settings.")
    section = schema[section_name]
    require(
        isinstance(name, str) and name in {f.name for f in section.fields}, "This page has no such setting."
    )
    return section.field(name).check(value)


def check_size(state: Mapping[str, Any]) -> None:
    """ValueError if `state` written as JSON would be larger than a progress file may be."""
    size = len(json.dumps(state, ensure_ascii=False, allow_nan=False, default=str).encode("utf-8", "replace"))
    require(
        size <= MAX_STATE_BYTES, f"That would make your saved work larger than {MAX_STATE_BYTES // 1000} kB."
    )
