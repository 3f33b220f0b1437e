"""What each page's settings may be: names, kinds, ranges, choices and defaults.

One schema per page section lives in `data/settings/<section>.json`. Pages build their widgets
from it, share links and progress files are checked against it, so a value the page could not
show never gets into a session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core import validate
from core.datafiles import DATA_DIR, read_json, require
from core.gpus import DTYPES, gpu_names
from core.measured import measured_ids
from core.memory import BudgetOptimizer, SweepAxis
from core.memory.settings import DETAILED_PRECISIONS as LESSON_PRECISIONS
from core.memory.settings import (
    PRECISIONS,
    Attention,
    AttentionKind,
    LessonDtype,
    LoraTarget,
    Method,
    Optimizer,
    OptimizerImpl,
    Recomputation,
    Recompute,
    Sharding,
    Stack,
)
from core.models import model_names
from core.run_a import EXPERIMENTS
from core.run_a import pairs as run_a_pairs
from core.scaling.scenarios import track_keys
from core.scaling.throughput import Mode
from core.stack import symptom_ids

KINDS = ("int", "float", "choice", "bool")

# Choice lists that come from another data table: a schema names one with "choices_from".
CHOICE_SOURCES: dict[str, Callable[[], tuple[str, ...]]] = {
    "gpus": gpu_names,
    "models": model_names,
    "symptoms": symptom_ids,
    "measured": measured_ids,
    "stacks": Stack.ids,
    "conventions": lambda: PRECISIONS,
    "phase_attentions": Attention.ids,
    "phase_recomputations": Recompute.ids,
    "phase_optimizers": Optimizer.ids,
    "optimizer_impls": OptimizerImpl.ids,
    "methods": Method.ids,
    "lora_targets": LoraTarget.ids,
    "shardings": Sharding.ids,
    "lesson_dtypes": LessonDtype.ids,
    "lesson_optimizers": BudgetOptimizer.ids,
    "lesson_precisions": lambda: tuple(LESSON_PRECISIONS),
    "recomputations": Recomputation.ids,
    "attentions": AttentionKind.ids,
    "sweep_axes": SweepAxis.ids,
    "scaling_modes": Mode.ids,
    "dtypes": lambda: DTYPES,
    "tracks": track_keys,
    "run_a_experiments": lambda: EXPERIMENTS,
    "run_a_pairs": run_a_pairs,
}


@dataclass(frozen=True)
class Field:
    """One setting: its kind and what values it accepts."""

    name: str
    kind: str
    default: Any
    min: float | None = None
    max: float | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()

    def check(self, value: Any) -> Any:
        """`value` if it is exactly acceptable (strict, for progress files); else ValueError."""
        if self.kind == "bool":
            require(isinstance(value, bool), f"'{self.name}' must be true or false.")
            return value
        if self.kind == "choice":
            require(
                isinstance(value, str) and value in self.choices,
                f"'{self.name}' must be one of: {', '.join(self.choices)}.",
            )
            return value
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        kind_words = f"a {'whole ' if self.kind == 'int' else ''}number"
        require(is_number, f"'{self.name}' must be {kind_words}.")
        # The range comes first: Python compares a huge int with a float exactly, but float() of
        # an int with hundreds of digits overflows.
        require(
            self.min <= value <= self.max, f"'{self.name}' must be between {self.min:g} and {self.max:g}."
        )
        whole = isinstance(value, int) or float(value).is_integer()
        require(self.kind == "float" or whole, f"'{self.name}' must be {kind_words}.")
        require(self._on_step(value), f"'{self.name}' must be a multiple of {self.step:g} from {self.min:g}.")
        return int(value) if self.kind == "int" else float(value)

    def from_text(self, text: str) -> Any:
        """The nearest acceptable value for text from a URL (clamped, snapped); ValueError if unreadable."""
        if self.kind == "choice":
            # Never echo the link's text: notes are shown as Markdown and a link can be hostile.
            require(text in self.choices, f"'{self.name}' is not one of this page's options.")
            return text
        if self.kind == "bool":
            require(text.lower() in ("true", "false"), f"'{self.name}' must be true or false.")
            return text.lower() == "true"
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"'{self.name}' must be a number.") from None
        require(number == number and abs(number) != float("inf"), f"'{self.name}' must be a finite number.")
        low, high, step = self.bounds()
        clamped = min(max(number, low), high)
        snapped = min(low + round((clamped - low) / step) * step, high)
        return int(round(snapped)) if self.kind == "int" else snapped

    def to_text(self, value: Any) -> str:
        """`value` written for a URL, so that `from_text` reads it back unchanged."""
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return f"{value:g}"
        return str(value)

    def bounds(self) -> tuple[float, float, float]:
        """min, max and step of a number setting; ValueError for a choice or a true/false one."""
        if self.min is None or self.max is None or self.step is None:
            raise ValueError(f"'{self.name}' is not a number setting.")
        return self.min, self.max, self.step

    def _on_step(self, value: float) -> bool:
        low, _, step = self.bounds()
        steps = (value - low) / step
        return abs(steps - round(steps)) < 1e-9


@dataclass(frozen=True)
class Section:
    """The settings of one page."""

    name: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field:
        """The field with this name."""
        for field in self.fields:
            if field.name == name:
                return field
        raise ValueError(f"The {self.name} settings have no '{name}'.")

    def defaults(self) -> dict[str, Any]:
        """Every field at its default."""
        return {f.name: f.default for f in self.fields}

    def check(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Strictly validated values: known names only, each acceptable (missing ones are fine)."""
        require(isinstance(values, Mapping), f"The {self.name} settings must be an object.")
        unknown = sorted(set(values) - {f.name for f in self.fields})
        require(not unknown, f"Unknown {self.name} settings: {', '.join(map(str, unknown))[:200]}.")
        return {name: self.field(name).check(value) for name, value in values.items()}


def _choices(raw: Mapping[str, Any], where: str) -> tuple[str, ...]:
    if "choices_from" in raw:
        source = raw["choices_from"]
        require(source in CHOICE_SOURCES, f"{where}: unknown choice source {source!r}.")
        return tuple(CHOICE_SOURCES[source]())
    choices = raw.get("choices", [])
    require(
        isinstance(choices, list) and all(isinstance(c, str) and c for c in choices),
        f"{where}: choices must be a list of names.",
    )
    return tuple(choices)


def parse_field(raw: Mapping[str, Any], section: str) -> Field:
    """Build and validate one field from its JSON form."""
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"A field of '{section}' has no name.")
    where = f"Setting {section}.{name}"
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}.")
    if kind in ("int", "float"):
        low, high, step = (raw.get(k) for k in ("min", "max", "step"))
        if not (
            isinstance(low, int | float) and isinstance(high, int | float) and isinstance(step, int | float)
        ):
            raise ValueError(f"{where}: needs numeric min, max and step.")
        require(low < high and step > 0, f"{where}: needs min < max and a positive step.")
        field = Field(name=name, kind=kind, default=raw.get("default"), min=low, max=high, step=step)
    else:
        choices = _choices(raw, where) if kind == "choice" else ()
        require(kind == "bool" or len(choices) >= 1, f"{where}: needs at least one choice.")
        field = Field(name=name, kind=kind, default=raw.get("default"), choices=choices)
    field.check(field.default)
    return field


def parse_section(name: str, raw: Any) -> Section:
    """Build and validate one section's schema."""
    raw = validate.items(raw, f"Settings '{name}' must be a non-empty list of fields.", at_least=1)
    fields = tuple(parse_field(f, name) for f in raw)
    names = [f.name for f in fields]
    require(len(set(names)) == len(names), f"Settings '{name}' repeat a field name.")
    return Section(name=name, fields=fields)


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Section]:
    """Every section's schema from `data/settings/`, read and validated once per process."""
    return {
        path.stem: parse_section(path.stem, read_json(f"settings/{path.name}"))
        for path in sorted((DATA_DIR / "settings").glob("*.json"))
    }


def section(name: str) -> Section:
    """One section's schema."""
    schema = load_schema()
    require(name in schema, f"There are no settings called '{name}'.")
    return schema[name]
