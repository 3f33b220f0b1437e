"""Validators for loaded data and learner input that return the parsed, typed value.

Each one either returns the value, narrowed to the type the caller needs, or raises ValueError with
a sentence a person can act on, so code after a check never has to re-test what was checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from math import isfinite
from typing import Any, Generic, Self, TypeVar

T = TypeVar("T")


def text(raw: Mapping[str, Any], field: str, where: str) -> str:
    """`raw[field]` if it is non-empty text; else a ValueError naming `where` and the field."""
    value = raw.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: '{field}' must be non-empty text.")
    return value


def mapping(value: Any, message: str) -> Mapping[str, Any]:
    """`value` if it is a JSON object (a mapping); else a ValueError with `message`."""
    if not isinstance(value, Mapping):
        raise ValueError(message)
    return value


def items(value: Any, message: str, *, at_least: int = 0) -> list[Any]:
    """`value` if it is a list of at least `at_least` items; else a ValueError with `message`."""
    if not isinstance(value, list) or len(value) < at_least:
        raise ValueError(message)
    return value


def whole_number(value: Any, what: str, *, at_least: int = 1) -> int:
    """`value` if it is a whole number (not a bool) of at least `at_least`; else a readable ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < at_least:
        raise ValueError(f"{what} must be a whole number of at least {at_least}, got {value!r}.")
    return value


def number_in_range(value: Any, what: str, *, low: float, high: float) -> float:
    """`value` as a float if it is a finite number from `low` to `high`; else a readable ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not isfinite(value):
        raise ValueError(f"{what} must be a number, got {value!r}.")
    if not low <= value <= high:
        raise ValueError(f"{what} must be between {low:g} and {high:g}, got {value:g}.")
    return float(value)


def choice(value: Any, options: Iterable[str], what: str) -> str:
    """`value` if it is one of `options`; else a ValueError listing them."""
    known = tuple(options)
    if not isinstance(value, str) or value not in known:
        raise ValueError(f"{what} must be one of {', '.join(known)}, got {value!r}.")
    return value


@dataclass(frozen=True)
class Catalog(Generic[T]):
    """Entries looked up by name, in file order; an unknown name is a ValueError listing the known ones."""

    what: str
    entries: tuple[T, ...]
    name_of: Callable[[T], str]

    def __post_init__(self) -> None:
        names = [self.name_of(entry) for entry in self.entries]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"{self.what} names repeat: {', '.join(repeated)}.")

    @property
    def names(self) -> tuple[str, ...]:
        """Every name in file order."""
        return tuple(self.name_of(entry) for entry in self.entries)

    def get(self, name: str) -> T:
        """The entry called `name`."""
        for entry in self.entries:
            if self.name_of(entry) == name:
                return entry
        raise ValueError(f"There is no {self.what} called {name!r}. Known: {', '.join(self.names)}.")

    def __iter__(self) -> Iterator[T]:
        return iter(self.entries)


class Labelled(StrEnum):
    """A typed id with the words a page shows for it: a member is the id string a setting stores, and
    `label` is its text. Declare members as `NAME = "id", "label"`."""

    label: str

    def __new__(cls, value: str, label: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.label = label
        return member

    @classmethod
    def ids(cls) -> tuple[str, ...]:
        """Every id as a plain string, in declaration order (what a settings schema offers)."""
        return tuple(member.value for member in cls)

    @classmethod
    def of(cls, value: str, what: str) -> Self:
        """The member whose id is `value`; ValueError naming `what` and the ids it may be."""
        for member in cls:
            if member == value:
                return member
        raise ValueError(f"The {what} must be one of: {', '.join(cls.ids())}; got {value!r}.")

    @classmethod
    def label_of(cls, value: str) -> str:
        """The label of the id `value` (a widget's format function)."""
        return cls.of(value, cls.__name__.lower()).label
