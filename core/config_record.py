"""The learner's config.json as the learner store keeps it: only the fields its family reads, as compact
JSON text, so a real config fits a record and reads back as the same model.

A published config.json carries much the count never reads (token ids, label maps, a vision tower);
keeping only what `core.model_config` reads leaves a few hundred characters for every family we know.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from core.datafiles import require
from core.learner_text import MAX_CHARS
from core.model_config import load_config_text, parse_config, read_config_text

CONFIG_RECORD = "memory.config_json"  # the record name: the config in use on the Memory budget page
MAX_STORED_CHARS = MAX_CHARS  # what any text a learner keeps may hold


class _Reads(Mapping[str, Any]):
    """A config that notes each field read from it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def kept_config_text(text: str) -> str:
    """The config.json in `text`, validated, cut to the fields its family reads, as compact JSON; a
    ValueError a learner can read if it is refused or still too long to keep."""
    data = read_config_text(text)
    reads = _Reads(data)
    parse_config(reads)
    kept = {key: value for key, value in data.items() if key in reads.read}
    compact = json.dumps(kept, separators=(",", ":"), ensure_ascii=False)
    require(
        len(compact) <= MAX_STORED_CHARS,
        f"The fields of this config that the count reads take {len(compact):,} characters; "
        f"at most {MAX_STORED_CHARS:,} can be kept.",
    )
    return compact


def check_config_record(value: Any) -> str | None:
    """`value` if it may be stored as the config in use: None (none in use) or a config's kept text."""
    if value is None:
        return None
    require(isinstance(value, str), "The config in use must be text.")
    require(
        len(value) <= MAX_STORED_CHARS, f"The config in use is longer than {MAX_STORED_CHARS:,} characters."
    )
    load_config_text(value)
    return value
