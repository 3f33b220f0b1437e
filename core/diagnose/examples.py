"""The example logs the app ships (`data/logs/`), listed with how each was made in `manifest.json`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import data_path, read_json, require
from core.diagnose.detectors import KINDS

LOG_DIR = "logs"
OUTCOMES = (*KINDS, "healthy")


@dataclass(frozen=True)
class Example:
    """One shipped log: its file, a title, the verdict it was made to show, the class count and its story."""

    file: str
    title: str
    intended: str
    classes: int
    how: str
    measured: str


def _example(raw: Mapping[str, Any]) -> Example:
    texts = {name: raw.get(name) for name in ("file", "title", "intended", "how", "measured")}
    for name, value in texts.items():
        require(isinstance(value, str) and value.strip() != "", f"Every example log needs a '{name}'.")
    require(texts["intended"] in OUTCOMES, f"Example {texts['file']}: unknown intended verdict.")
    require(data_path(f"{LOG_DIR}/{texts['file']}").is_file(), f"Example log {texts['file']} is missing.")
    classes = raw.get("classes")
    if not isinstance(classes, int) or classes < 2:
        raise ValueError(f"Example {texts['file']}: classes must be 2 or more.")
    return Example(classes=classes, **{name: str(value) for name, value in texts.items()})


@lru_cache(maxsize=1)
def load_examples() -> tuple[Example, ...]:
    """Every shipped example, validated once per process (the same for every learner)."""
    raw = read_json(f"{LOG_DIR}/manifest.json")
    require(
        isinstance(raw, Mapping) and isinstance(raw.get("examples"), list), "manifest.json lists no examples."
    )
    examples = tuple(_example(e) for e in raw["examples"])
    files = [e.file for e in examples]
    require(len(set(files)) == len(files), "manifest.json lists an example twice.")
    return examples


def example(file: str) -> Example:
    """The shipped example stored as `file`."""
    for candidate in load_examples():
        if candidate.file == file:
            return candidate
    raise ValueError(f"There is no example log called {file!r}.")


def example_bytes(file: str) -> bytes:
    """The bytes of a shipped example log."""
    return data_path(f"{LOG_DIR}/{example(file).file}").read_bytes()
