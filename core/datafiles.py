"""Reading the plain data files in `data/`, with errors a person can act on."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def data_path(name: str) -> Path:
    """The path of a file in `data/`."""
    return DATA_DIR / name


def read_json(name: str) -> Any:
    """Parse a JSON file from `data/`; a syntax error names the file and line."""
    path = data_path(name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{name} is not valid JSON (line {err.lineno}): {err.msg}") from err


def read_csv_rows(name: str) -> list[dict[str, str]]:
    """Rows of a CSV file from `data/` as dicts keyed by the header; comment lines start with #."""
    with data_path(name).open(encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if not line.lstrip().startswith("#")]
    return list(csv.DictReader(lines))


def require(condition: bool, message: str) -> None:
    """Raise ValueError with `message` unless `condition` holds (validation of loaded data)."""
    if not condition:
        raise ValueError(message)


def positive_number(value: Any, what: str) -> float:
    """`value` as a float, or a ValueError saying `what` must be a positive number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    require(
        number > 0 and number == number and number != float("inf"),
        f"{what} must be a positive number, got {value!r}",
    )
    return number
