"""Reading a training log into a table of numbers: CSV, W&B CSV export, JSON Lines,
Hugging Face `trainer_state.json` and TensorBoard event files.

Every reader returns the same `Table`: column names and rows of numbers (None where a row has no
value). Anything that cannot be read raises ValueError with one sentence a learner can act on.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 10_000_000  # a long run logged every step is well under this as CSV
MAX_ROWS = 100_000
MAX_COLUMNS = 500
# Rows times columns: 100,000 rows of 20 columns, or 4,000 rows of 500. Without it a sparse JSON
# Lines file of 1 MB (each line a different one of 500 names) would fill a table of 50 million cells.
MAX_VALUES = 2_000_000
# Lines of a text log, blank ones included, counted before any is parsed: 10 MB of empty lines
# would otherwise be ten million turns of the reader's loop. A log with a blank line after every
# row is a quarter of this.
MAX_LINES = 8 * MAX_ROWS
MAX_NESTING = 4  # JSON objects nested deeper than this are not a metrics log
# Objects and lists a JSON file may open, counted before it is parsed (so that an empty `{}` or
# `[]` repeated through 10 MB is refused before Python builds millions of them): a trainer_state
# with 100,000 entries, each with a nested object or two, is far below this.
MAX_JSON_CONTAINERS = 5 * MAX_ROWS
# Commas of a JSON file, likewise counted first: every value but the last in a list or object
# follows one, so ten million `1,` cannot become a list of ten million numbers before a row is read.
MAX_JSON_COMMAS = MAX_VALUES

FORMATS = ("CSV", "W&B CSV export", "JSON Lines", "Hugging Face trainer_state.json", "TensorBoard events")

_WANDB_EXTRA = re.compile(r"__(MIN|MAX)$")
_WANDB_PREFIXED = re.compile(r"^.+ - (.+)$")
_TOO_DEEP = "This log nests objects too deeply to be a table of measurements."

logger = logging.getLogger(__name__)


class Unreadable(ValueError):
    """A log the lab refuses; its message is one sentence of ours a learner can act on."""


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
    if isinstance(value, str):
        try:
            return float(value)  # accepts nan, inf, -inf and Infinity, as loggers write them
        except ValueError:
            text = value.strip()
            return None if text == "" or text.lower() in ("none", "null") else text
    if value is None or isinstance(value, bool):
        return None if value is None else str(value)
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # more digits than a float holds: infinite, as float() reads such text
            return math.copysign(math.inf, value)
    return _number(str(value))


class _TableBuilder:
    """A table filled one record at a time, each limit checked before the record is kept.

    Columns are kept as lists of numbers; a column that holds text is dropped as soon as it does,
    so that memory is the numbers' alone.
    """

    def __init__(self, fmt: str, names: Iterable[str] = ()) -> None:
        self.fmt = fmt
        self.columns: dict[str, list[float | None] | None] = {}  # None: the column holds text
        self.rows = 0
        for name in names:
            self._new_column(name)

    def _new_column(self, name: str) -> None:
        if len(self.columns) >= MAX_COLUMNS:
            raise Unreadable(
                f"This log has more than {MAX_COLUMNS} columns; the lab reads at most {MAX_COLUMNS}."
            )
        self.columns[name] = [None] * self.rows

    def _next_row(self) -> None:
        if self.rows >= MAX_ROWS:
            raise Unreadable(
                f"This log has more than {MAX_ROWS:,} rows; the lab reads at most {MAX_ROWS:,}. "
                "Keep every tenth step, or cut the log to the part you want to read."
            )
        if (self.rows + 1) * len(self.columns) > MAX_VALUES:
            raise Unreadable(
                f"This log has {self.rows + 1:,} rows of {len(self.columns)} columns; the lab reads at most "
                f"{MAX_VALUES:,} values. Keep fewer steps or fewer columns."
            )
        self.rows += 1

    def add(self, record: Mapping[str, Any]) -> None:
        """Keep one row; Unreadable past MAX_ROWS rows, MAX_COLUMNS columns or MAX_VALUES cells."""
        for name in record:
            if name not in self.columns:
                self._new_column(name)
        self.add_cells([record.get(name) for name in self.columns])

    def add_cells(self, cells: Sequence[Any]) -> None:
        """Keep one row given as cells in the order of the columns (a CSV row under its header)."""
        self._next_row()
        for (name, column), cell in zip(self.columns.items(), cells, strict=True):
            if column is not None:
                number = _number(cell)
                if isinstance(number, str):
                    self.columns[name] = None
                else:
                    column.append(number)

    def table(self) -> Table:
        """The rows kept; columns that are not all numbers are ignored."""
        if not self.rows:
            raise Unreadable(f"This {self.fmt} file holds no rows of measurements.")
        numeric = [
            name
            for name, column in self.columns.items()
            if column is not None and any(v is not None for v in column)
        ]
        if not numeric:
            raise Unreadable(f"This {self.fmt} file has no column of numbers, so there is nothing to plot.")
        kept = [self.columns[name] for name in numeric]
        rows = tuple(zip(*kept, strict=True))
        ignored = tuple(name for name in self.columns if name not in numeric)
        return Table(format=self.fmt, columns=tuple(numeric), rows=rows, ignored=ignored)


def _table(fmt: str, records: Iterable[Mapping[str, Any]]) -> Table:
    """Build a Table from records (dicts of column to cell), read one at a time within the limits."""
    builder = _TableBuilder(fmt)
    for record in records:
        builder.add(record)
    return builder.table()


def _flatten(record: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Nested objects become `outer/inner` columns, as loggers name them."""
    if depth > MAX_NESTING:
        raise Unreadable(_TOO_DEEP)
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
        raise Unreadable(
            "This file is not text (CSV or JSON) and not a TensorBoard event file, so it cannot be read."
        ) from None


def _lines(text: str) -> Iterator[str]:
    """The text's lines, ends kept, one at a time (a list of 5 million lines is itself a few hundred
    MB); Unreadable, before the first, for more than MAX_LINES."""
    count = text.count("\n")
    if count > MAX_LINES:
        raise Unreadable(f"This file has {count:,} lines; the lab reads logs of at most {MAX_LINES:,} lines.")
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def _csv_rows(text: str) -> Iterator[list[str]]:
    reader = csv.reader(_lines(text))
    try:
        yield from reader
    except csv.Error:
        raise Unreadable(
            f"Line {reader.line_num} of this CSV file cannot be read: a quote is left open or a cell is "
            "longer than any measurement."
        ) from None


def read_csv(text: str) -> Table:
    """A CSV log with a header row; a W&B export (`run - metric`, `__MIN`/`__MAX`) is told by its header."""
    rows = _csv_rows(text)
    header = next(rows, None)
    if not header or not any(cell.strip() for cell in header):
        raise Unreadable("This CSV file has no header row naming its columns.")
    if len(header) > MAX_COLUMNS:
        raise Unreadable(f"This log has {len(header):,} columns; the lab reads at most {MAX_COLUMNS}.")
    names = [cell.strip() for cell in header]
    if len(set(names)) != len(names):
        raise Unreadable("This CSV file names the same column twice.")
    wandb = _is_wandb(names)
    kept = _wandb_names(names) if wandb else dict(zip(names, range(len(names)), strict=True))
    builder = _TableBuilder("W&B CSV export" if wandb else "CSV", kept)
    indexes = list(kept.values())
    number = 1
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue
        number += 1
        if len(row) != len(names):
            raise Unreadable(
                f"Row {number} of this CSV file has {len(row)} cells; the header names {len(names)} columns."
            )
        builder.add_cells([row[index] for index in indexes])
    return builder.table()


def _is_wandb(names: list[str]) -> bool:
    return bool(names) and names[0] == "Step" and any(_WANDB_PREFIXED.match(n) for n in names[1:])


def _wandb_names(names: list[str]) -> dict[str, int]:
    """W&B's export names each column `<run name> - <metric>` and adds min/max columns; keep the metric
    (the last column of each metric, in the order metrics first appear)."""
    kept: dict[str, int] = {}
    for index, name in enumerate(names):
        if not _WANDB_EXTRA.search(name):
            match = _WANDB_PREFIXED.match(name)
            kept[match.group(1) if match else name] = index
    return kept


def _json_value(text: str) -> Any:
    """One JSON document; integers become floats (a 4,300-digit one reads as infinite, as in CSV)."""
    try:
        return json.loads(text, parse_int=float)
    except RecursionError:
        raise Unreadable(_TOO_DEEP) from None


def _json_lines(text: str) -> Iterator[Mapping[str, Any]]:
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = _json_value(line)
        except json.JSONDecodeError:
            raise Unreadable(f"Line {number} of this JSON Lines file is not valid JSON.") from None
        if not isinstance(record, Mapping):
            raise Unreadable(f"Line {number} of this JSON Lines file is not an object of named values.")
        yield _flatten(record)


def read_json_lines(text: str) -> Table:
    """One JSON object per line, as most loggers append them; nested objects become `a/b` columns."""
    return _table("JSON Lines", _json_lines(text))


def read_trainer_state(state: Mapping[str, Any]) -> Table:
    """The `log_history` of a Hugging Face `trainer_state.json`: one row per logged entry."""
    history = state.get("log_history")
    if not isinstance(history, list) or not all(isinstance(e, Mapping) for e in history):
        raise Unreadable("This JSON file has no `log_history` list, so it is not a trainer_state.json.")
    return _table("Hugging Face trainer_state.json", (_flatten(e) for e in history))


def _read_json(text: str) -> Table:
    # Upper bounds: brackets and commas inside strings count too.
    containers = text.count("{") + text.count("[")
    if containers > MAX_JSON_CONTAINERS:
        raise Unreadable(
            f"This JSON file opens {containers:,} objects and lists; the lab reads logs with at most "
            f"{MAX_JSON_CONTAINERS:,}."
        )
    commas = text.count(",")
    if commas > MAX_JSON_COMMAS:
        raise Unreadable(
            f"This JSON file holds {commas:,} values; the lab reads logs with at most {MAX_JSON_COMMAS:,}."
        )
    try:
        whole = _json_value(text)
    except json.JSONDecodeError:
        return read_json_lines(text)
    if isinstance(whole, Mapping) and "log_history" in whole:
        return read_trainer_state(whole)
    if isinstance(whole, list) and all(isinstance(e, Mapping) for e in whole):
        return _table("JSON Lines", (_flatten(e) for e in whole))
    if isinstance(whole, Mapping):
        return _table("JSON Lines", [_flatten(whole)])
    raise Unreadable("This JSON file is neither a list of logged rows nor a trainer_state.json.")


def _looks_like_tfrecord(data: bytes) -> bool:
    # A TFRecord starts with an 8-byte length; the first record of an event file is short.
    return len(data) >= 16 and int.from_bytes(data[:8], "little") < 1_000 and data[12:13] == b"\x09"


def read_tensorboard(data: bytes) -> Table:
    """Scalars of a TensorBoard event file, one row per step, one column per tag."""
    from core.diagnose.tensorboard_events import scalar_values

    by_step = scalar_values(data)
    tags = {tag: None for values in by_step.values() for tag in values}
    # Checked before the table is filled in: a sparse file's steps times tags can be far more cells
    # than the values it holds.
    steps, columns = len(by_step), len(tags) + 1  # the step is a column too
    if steps > MAX_ROWS or columns > MAX_COLUMNS or steps * columns > MAX_VALUES:
        raise Unreadable(
            f"This TensorBoard event file has {steps:,} steps and {len(tags):,} tags; the lab reads "
            f"at most {MAX_ROWS:,} steps, {MAX_COLUMNS - 1} tags and {MAX_VALUES:,} values."
        )
    return _table("TensorBoard events", ({"step": step, **by_step[step]} for step in sorted(by_step)))


def _parse(data: bytes, name: str) -> Table:
    if "tfevents" in name or _looks_like_tfrecord(data):
        return read_tensorboard(data)
    text = _text(data)
    if text.lstrip().startswith(("{", "[")):
        return _read_json(text)
    return read_csv(text)


def read_log(data: bytes, name: str) -> Table:
    """Read a log file's bytes; the format is chosen from its name and its first characters.

    Every refusal is an `Unreadable` whose message is one sentence of ours: whatever else a parser
    raises on a crafted file (Python's, protobuf's or numpy's words) is replaced by one.
    """
    if len(data) > MAX_BYTES:
        raise Unreadable(
            f"This file is {len(data) / 1e6:.1f} MB; the lab reads logs up to {MAX_BYTES / 1e6:g} MB. "
            "Log every tenth step, or keep only the columns you need."
        )
    if not data.strip():
        raise Unreadable("This file is empty.")
    try:
        return _parse(data, name)
    except Unreadable:
        raise
    except Exception as err:  # noqa: BLE001  # a crafted file must get a sentence, whatever a parser raises
        # A parser's own words are not shown; the kind is logged so that a new case can be given a
        # sentence of its own.
        logger.warning("a log was refused after its parser raised %s", type(err).__name__)
        raise Unreadable(
            "This file could not be read as a training log; check that it is a whole, unedited CSV, "
            "JSON Lines, trainer_state.json or TensorBoard event file."
        ) from None


def finite(value: float | None) -> bool:
    """Whether a cell holds a finite number."""
    return value is not None and math.isfinite(value)
