"""Reading a training log into a table of numbers: CSV, W&B CSV export, JSON Lines,
Hugging Face `trainer_state.json` and TensorBoard event files.

Every reader returns the same `Table`: column names and rows of numbers (None where a row has no
value). Anything that cannot be read raises ValueError with one sentence a learner can act on.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 10_000_000  # a long run logged every step is well under this as CSV
MAX_ROWS = 100_000
MAX_COLUMNS = 500
MAX_NESTING = 4  # JSON objects nested deeper than this are not a metrics log

FORMATS = ("CSV", "W&B CSV export", "JSON Lines", "Hugging Face trainer_state.json", "TensorBoard events")

_WANDB_EXTRA = re.compile(r"__(MIN|MAX)$")
_WANDB_PREFIXED = re.compile(r"^.+ - (.+)$")


@dataclass(frozen=True)
class Table:
    """A log as numbers: its format, its numeric columns in file order, and one tuple per row."""

    format: str
    columns: tuple[str, ...]
    rows: tuple[tuple[float | None, ...], ...]
    ignored: tuple[str, ...]  # columns that hold text, not numbers

    def column(self, name: str) -> tuple[float | None, ...]:
        """Every row's value in column `name` (None where the row has none)."""
        index = self.columns.index(name)
        return tuple(row[index] for row in self.rows)


def _number(value: Any) -> float | None | str:
    """A cell as a float, None when empty, or the original text when it is not a number."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value)
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    if text == "" or text.lower() in ("none", "null"):
        return None
    try:
        return float(text)  # accepts nan, inf, -inf and Infinity, as loggers write them
    except ValueError:
        return text


def _table(fmt: str, records: Sequence[Mapping[str, Any]]) -> Table:
    """Build a Table from records (dicts of column to cell); columns that are not all numbers are ignored."""
    if not records:
        raise ValueError(f"This {fmt} file holds no rows of measurements.")
    if len(records) > MAX_ROWS:
        raise ValueError(f"This log has {len(records):,} rows; the lab reads at most {MAX_ROWS:,}.")
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    if len(names) > MAX_COLUMNS:
        raise ValueError(f"This log has {len(names):,} columns; the lab reads at most {MAX_COLUMNS}.")
    parsed = [{name: _number(record.get(name)) for name in names} for record in records]
    numeric = [n for n in names if all(not isinstance(row[n], str) for row in parsed)]
    numeric = [n for n in numeric if any(row[n] is not None for row in parsed)]
    if not numeric:
        raise ValueError(f"This {fmt} file has no column of numbers, so there is nothing to plot.")
    rows = tuple(tuple(_as_float(row[n]) for n in numeric) for row in parsed)
    ignored = tuple(n for n in names if n not in numeric)
    return Table(format=fmt, columns=tuple(numeric), rows=rows, ignored=ignored)


def _as_float(value: float | None | str) -> float | None:
    return value if isinstance(value, float) else None


def _flatten(record: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Nested objects become `outer/inner` columns, as loggers name them."""
    if depth > MAX_NESTING:
        raise ValueError("This log nests objects too deeply to be a table of measurements.")
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}/", depth + 1))
        elif not isinstance(value, list):
            flat[name] = value
    return flat


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(
            "This file is not text (CSV or JSON) and not a TensorBoard event file, so it cannot be read."
        ) from None


def read_csv(text: str) -> Table:
    """A CSV log with a header row; a W&B export (`run - metric`, `__MIN`/`__MAX`) is told by its header."""
    try:
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if not header or not any(cell.strip() for cell in header):
            raise ValueError("This CSV file has no header row naming its columns.")
        body = [row for row in reader if any(cell.strip() for cell in row)]
    except csv.Error as err:
        raise ValueError(f"This CSV file is malformed ({err}).") from None
    names = [cell.strip() for cell in header]
    if len(set(names)) != len(names):
        raise ValueError("This CSV file names the same column twice.")
    for number, row in enumerate(body, start=2):
        if len(row) != len(names):
            raise ValueError(
                f"Row {number} of this CSV file has {len(row)} cells; the header names {len(names)} columns."
            )
    records = [dict(zip(names, row, strict=True)) for row in body]
    return _wandb(records) if _is_wandb(names) else _table("CSV", records)


def _is_wandb(names: list[str]) -> bool:
    return bool(names) and names[0] == "Step" and any(_WANDB_PREFIXED.match(n) for n in names[1:])


def _wandb(records: list[dict[str, str]]) -> Table:
    """W&B's export names each column `<run name> - <metric>` and adds min/max columns; keep the metric."""
    kept = []
    for record in records:
        row: dict[str, str] = {}
        for name, cell in record.items():
            if _WANDB_EXTRA.search(name):
                continue
            match = _WANDB_PREFIXED.match(name)
            row[match.group(1) if match else name] = cell
        kept.append(row)
    return _table("W&B CSV export", kept)


def _json_lines(text: str) -> Iterator[Mapping[str, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"Line {number} of this JSON Lines file is not valid JSON ({err.msg})."
            ) from None
        if not isinstance(record, Mapping):
            raise ValueError(f"Line {number} of this JSON Lines file is not an object of named values.")
        yield record


def read_json_lines(text: str) -> Table:
    """One JSON object per line, as most loggers append them; nested objects become `a/b` columns."""
    return _table("JSON Lines", [_flatten(r) for r in _json_lines(text)])


def read_trainer_state(state: Mapping[str, Any]) -> Table:
    """The `log_history` of a Hugging Face `trainer_state.json`: one row per logged entry."""
    history = state.get("log_history")
    if not isinstance(history, list) or not all(isinstance(e, Mapping) for e in history):
        raise ValueError("This JSON file has no `log_history` list, so it is not a trainer_state.json.")
    return _table("Hugging Face trainer_state.json", [_flatten(e) for e in history])


def _read_json(text: str) -> Table:
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return read_json_lines(text)
    if isinstance(whole, Mapping) and "log_history" in whole:
        return read_trainer_state(whole)
    if isinstance(whole, list) and all(isinstance(e, Mapping) for e in whole):
        return _table("JSON Lines", [_flatten(e) for e in whole])
    if isinstance(whole, Mapping):
        return _table("JSON Lines", [_flatten(whole)])
    raise ValueError("This JSON file is neither a list of logged rows nor a trainer_state.json.")


def _looks_like_tfrecord(data: bytes) -> bool:
    # A TFRecord starts with an 8-byte length; the first record of an event file is short.
    return len(data) >= 16 and int.from_bytes(data[:8], "little") < 1_000 and data[12:13] == b"\x09"


def read_tensorboard(data: bytes) -> Table:
    """Scalars of a TensorBoard event file, one row per step, one column per tag."""
    from core.diagnose.tensorboard_events import scalar_records

    return _table("TensorBoard events", scalar_records(data))


def read_log(data: bytes, name: str) -> Table:
    """Read a log file's bytes; the format is chosen from its name and its first characters."""
    if len(data) > MAX_BYTES:
        raise ValueError(
            f"This file is {len(data) / 1e6:.1f} MB; the lab reads logs up to {MAX_BYTES / 1e6:g} MB. "
            "Log every tenth step, or keep only the columns you need."
        )
    if not data.strip():
        raise ValueError("This file is empty.")
    if "tfevents" in name or _looks_like_tfrecord(data):
        return read_tensorboard(data)
    text = _text(data)
    if text.lstrip().startswith(("{", "[")):
        return _read_json(text)
    return read_csv(text)


def finite(value: float | None) -> bool:
    """Whether a cell holds a finite number."""
    return value is not None and math.isfinite(value)
