"""What each column of a log measures: recognised by name, corrected by the learner, read in fixed units.

A role is one quantity the detectors use (loss, GPU memory, time waiting for data...). Names are
normalised (lower case, `/ . - : space` and brackets as `_`, camelCase split, a W&B or TensorBoard
prefix kept, binary units such as `MiB` kept whole) and matched against the spellings common
loggers use; the first matching pattern of a role wins.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from core import lessons
from core.diagnose.formats import Table


@dataclass(frozen=True)
class Role:
    """One quantity a detector reads, the unit it is read in, and the names that usually hold it."""

    id: str
    label: str
    unit: str
    patterns: tuple[str, ...]


# Order matters twice: roles are filled in this order, and within a role the first pattern that
# matches any column wins (so `memory_allocated` beats `memory_reserved`).
ROLES: tuple[Role, ...] = (
    Role(
        "step",
        "step",
        "steps",
        (
            r"(global_)?step",
            r"_step",
            r"(train|trainer)_global_step",
            r"iter(ation)?",
            r"steps",
            r"(train|optimizer)_step",
            r"epoch",  # logs written once an epoch (timm's summary.csv) have no step column
        ),
    ),
    Role(
        "loss",
        "training loss",
        "",
        (
            r"(train(ing)?_)?loss(_step)?",
            r"loss_train",
            r"train_loss_step",
            r"(train(ing)?_)?(ce|cross_entropy|lm)_loss",
        ),
    ),
    Role(
        "eval_loss",
        "evaluation loss",
        "",
        (r"(eval|val|valid|validation|test)_loss(_.*)?", r"loss_(eval|val|valid|validation|test)"),
    ),
    Role("grad_norm", "gradient norm", "", (r"(train_)?grad(ient)?_norm(_.*)?", r".*grad.*norm.*")),
    Role("learning_rate", "learning rate", "", (r"(train_)?(learning_rate|lr)(_.*)?", r".*learning_rate.*")),
    Role(
        "memory",
        "memory",
        "GB",
        (
            r".*mem(ory)?_?alloc.*",
            r".*alloc.*mem.*",
            r".*mem(ory)?_?reserv.*",
            r".*reserv.*",
            r".*rss.*",
            r".*(memory|mem)(_.*)?",
        ),
    ),
    Role(
        "utilisation",
        "GPU utilisation",
        "%",
        (r".*(utili[sz]ation|util)(_.*)?", r".*gpu_\d+_gpu", r"gpu_(busy|percent|pct)"),
    ),
    Role(
        "tokens_per_s",
        "tokens per second",
        "tokens/s",
        (r".*tok(en)?s_?(per_?(s|sec|second)|_s)", r"tps", r"throughput_tokens.*"),
    ),
    Role(
        "samples_per_s",
        "samples per second",
        "samples/s",
        (r".*(samples|examples|sequences|images|imgs)_?(per_?(s|sec|second)|_s)", r"throughput(_.*)?"),
    ),
    Role(
        "data_time",
        "time waiting for data",
        "s",
        (
            r".*data_?(loading_?)?time.*",
            r".*data_?wait.*",
            r".*dataloader_?time.*",
            r"(train_)?data_?(load(ing)?_?)?(ms|millis(econds)?|s|secs?|seconds)",
        ),
    ),
    Role(
        "step_time",
        "step time",
        "s",
        (
            r"(train_)?(step|batch|iter(ation)?)_?(time|duration)(_.*)?",
            # `iter_ms`, `step_s`, `batch_seconds`: the unit alone says it is a duration.
            r"(train_)?(step|batch|iter(ation)?)_(ms|millis(econds)?|s|secs?|seconds)",
            r"time_per_(step|iter|batch)(_.*)?",
            r"sec(onds)?_per_(step|iter)",
        ),
    ),
    Role(
        "accuracy",
        "accuracy",
        "%",
        (r"(train_)?(acc(uracy)?|top_?1)(_?\d+)?(_.*)?", r".*(acc(uracy)?|top_?1)(_.*)?"),
    ),
)
ROLE_IDS = tuple(role.id for role in ROLES)

_MEMORY_UNITS_GB = (  # name hint, unit, GB per unit (a binary unit is a power of 1,024 bytes)
    (re.compile(r"(^|_)gib($|_)"), "GiB", 2**30 / 1e9),
    (re.compile(r"(^|_)gb($|_)"), "GB", 1.0),
    (re.compile(r"(^|_)mib($|_)"), "MiB", 2**20 / 1e9),
    (re.compile(r"(^|_)mb($|_)"), "MB", 1e-3),
    (re.compile(r"(^|_)kib($|_)"), "KiB", 2**10 / 1e9),
    (re.compile(r"(^|_)kb($|_)"), "kB", 1e-6),
    (re.compile(r"bytes|(^|_)b($|_)"), "bytes", 1e-9),
)
_PERCENT = re.compile(r"percent|pct|(^|_)%|gpu_\d+_memory(allocated)?$")


# A binary unit as PyTorch and nvidia-smi write it (`MiB`, `GiB`), in any name: set apart as one word
# before camelCase is split, which would otherwise read `cuda_mem_MiB` as `mi` and `b` (bytes).
_BINARY_UNIT = re.compile(r"([KMGT])iB(?![a-z])")
_SEPARATORS = re.compile(r"[\s/.\-:_()\[\]{},;|]+")


def normalise(name: str) -> str:
    """A column name in the form the patterns expect: lower case, separators as single underscores."""
    units_apart = _BINARY_UNIT.sub(lambda unit: f"_{unit.group(1).lower()}ib_", name.strip())
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", units_apart)
    return _SEPARATORS.sub("_", snake.lower()).strip("_") or name.lower()


def role(role_id: str) -> Role:
    """The role called `role_id`."""
    for candidate in ROLES:
        if candidate.id == role_id:
            return candidate
    raise ValueError(f"There is no column role called {role_id!r}.")


def guess_mapping(columns: tuple[str, ...]) -> dict[str, str | None]:
    """For each role, the column whose name says it holds that quantity (None when no name does)."""
    taken: set[str] = set()
    mapping: dict[str, str | None] = {}
    normalised = {column: normalise(column) for column in columns}
    for candidate in ROLES:
        mapping[candidate.id] = None
        for pattern in candidate.patterns:
            found = [c for c in columns if c not in taken and re.fullmatch(pattern, normalised[c])]
            if found:
                mapping[candidate.id] = found[0]
                taken.add(found[0])
                break
    return mapping


def columns_signature(columns: tuple[str, ...]) -> str:
    """A short stable name for a set of columns, so a mapping made for one file is not applied to another."""
    return hashlib.sha256("\x00".join(columns).encode()).hexdigest()[:12]


def check_mapping(table: Table, mapping: Mapping[str, str | None]) -> dict[str, str | None]:
    """The mapping with every role present, each column one the table has and used once; else ValueError."""
    unknown = sorted(set(mapping) - set(ROLE_IDS))
    if unknown:
        raise ValueError(f"Unknown column roles: {', '.join(unknown)}.")
    checked = {role_id: mapping.get(role_id) for role_id in ROLE_IDS}
    used = [c for c in checked.values() if c is not None]
    for column in used:
        if column not in table.columns:
            raise ValueError(f"The log has no column called {column!r}.")
    repeated = sorted({c for c in used if used.count(c) > 1})
    if repeated:
        raise ValueError(f"Each column can stand for one quantity only: {', '.join(repeated)} is used twice.")
    return checked


@dataclass(frozen=True)
class Series:
    """One quantity over the run in the role's unit: steps and values, nan and inf kept as logged."""

    role: str
    column: str
    steps: tuple[float, ...]
    values: tuple[float, ...]
    unit_note: str  # how the column's unit was read, shown to the learner


@dataclass(frozen=True)
class RunLog:
    """A log ready for the detectors: its series by role and where its steps come from."""

    format: str
    series: Mapping[str, Series]
    step_column: str | None
    rows: int

    def get(self, role_id: str) -> Series | None:
        """The series for a role, or None when no column is mapped to it or it holds no values."""
        return self.series.get(role_id)


def _memory_scale(column: str, values: list[float], device_gb: float | None) -> tuple[float, str]:
    name = normalise(column)
    if _PERCENT.search(name):
        if device_gb is None:
            return 1.0, lessons.sentence("diagnose", "unit_percent_needs_device")
        return device_gb / 100.0, lessons.sentence("diagnose", "unit_percent_of_device", device_gb=device_gb)
    for hint, unit, gb_per_unit in _MEMORY_UNITS_GB:
        if hint.search(name):
            return gb_per_unit, lessons.sentence("diagnose", "unit_from_name", unit=unit)
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    if largest > 1e6:
        return 1e-9, lessons.sentence("diagnose", "unit_bytes_by_size")
    if largest > 1e3:
        return 1e-3, lessons.sentence("diagnose", "unit_mb_by_size")
    return 1.0, lessons.sentence("diagnose", "unit_gb_by_default")


def _fraction_scale(values: list[float]) -> tuple[float, str]:
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    if largest <= 1.0:
        return 100.0, lessons.sentence("diagnose", "unit_fractions")
    return 1.0, lessons.sentence("diagnose", "unit_percent")


def _time_scale(column: str) -> tuple[float, str]:
    name = normalise(column)
    if re.search(r"(^|_)ms($|_)|millis", name):
        return 1e-3, lessons.sentence("diagnose", "unit_milliseconds")
    return 1.0, lessons.sentence("diagnose", "unit_seconds")


def _scale(role_id: str, column: str, values: list[float], device_gb: float | None) -> tuple[float, str]:
    """Factor from the column's unit to the role's unit, and a note saying how the unit was read."""
    if role_id == "memory":
        return _memory_scale(column, values, device_gb)
    if role_id in ("utilisation", "accuracy"):
        return _fraction_scale(values)
    if role_id in ("step_time", "data_time"):
        return _time_scale(column)
    return 1.0, lessons.sentence("diagnose", "unit_as_logged")


def run_log(table: Table, mapping: Mapping[str, str | None], *, device_gb: float | None = None) -> RunLog:
    """The table's mapped columns as series in each role's unit; rows without a step are left out."""
    checked = check_mapping(table, mapping)
    step_column = checked["step"]
    steps_by_row = (
        table.column(step_column) if step_column else tuple(float(i) for i in range(len(table.rows)))
    )
    series: dict[str, Series] = {}
    for role_id, column in checked.items():
        if column is None or role_id == "step":
            continue
        pairs = [
            (step, value)
            for step, value in zip(steps_by_row, table.column(column), strict=True)
            if step is not None and math.isfinite(step) and value is not None
        ]
        if not pairs:
            continue
        scale, note = _scale(role_id, column, [v for _, v in pairs], device_gb)
        pairs.sort(key=lambda pair: pair[0])
        series[role_id] = Series(
            role=role_id,
            column=column,
            steps=tuple(s for s, _ in pairs),
            values=tuple(v * scale for _, v in pairs),
            unit_note=note,
        )
    return RunLog(format=table.format, series=series, step_column=step_column, rows=len(table.rows))
