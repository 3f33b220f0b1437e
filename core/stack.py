"""The execution stack: its five layers, and which layers can produce each symptom."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import read_json, require


@dataclass(frozen=True)
class Layer:
    """One layer of the stack, from the model down to the hardware."""

    id: str
    name: str
    holds: str
    example: str


@dataclass(frozen=True)
class Cause:
    """How one layer can produce a symptom."""

    layer_id: str
    how: str


@dataclass(frozen=True)
class Fork:
    """Where to look next once you know whether the GPU is busy."""

    idle: str
    busy: str


@dataclass(frozen=True)
class Symptom:
    """Something a learner observes, the layers that can cause it and the measurement that separates them."""

    id: str
    label: str
    causes: tuple[Cause, ...]
    first_measurement: str
    fork: Fork | None = None

    def layer_ids(self) -> tuple[str, ...]:
        """The layers that can cause this symptom."""
        return tuple(c.layer_id for c in self.causes)


@dataclass(frozen=True)
class Stack:
    """The layers in order, top to bottom, what feeds them from outside, and the symptoms."""

    layers: tuple[Layer, ...]
    symptoms: tuple[Symptom, ...]
    outside: tuple[Layer, ...] = ()

    def places(self) -> tuple[Layer, ...]:
        """Everything a cause can name, in reading order: what feeds the stack, then its layers."""
        return self.outside + self.layers

    def symptom(self, symptom_id: str) -> Symptom:
        """The symptom with this id."""
        for symptom in self.symptoms:
            if symptom.id == symptom_id:
                return symptom
        raise ValueError(f"There is no symptom called {symptom_id!r}.")

    def symptom_label(self, symptom_id: str) -> str:
        """The label a learner sees for a symptom id."""
        return self.symptom(symptom_id).label


def parse_stack(raw: dict[str, Any]) -> Stack:
    """Build and validate the stack; every cause must name a known layer or something outside that feeds
    it."""
    layers = tuple(Layer(**layer) for layer in raw["layers"])
    require(
        len({layer.id for layer in layers}) == len(layers) == 5, "The stack has exactly five distinct layers."
    )
    outside = tuple(Layer(**place) for place in raw.get("outside", []))
    layer_ids = {place.id for place in layers + outside}
    require(len(layer_ids) == len(layers) + len(outside), "What feeds the stack repeats a layer's id.")
    symptoms = []
    for item in raw["symptoms"]:
        causes = tuple(Cause(layer_id=c["layer"], how=c["how"]) for c in item["causes"])
        require(bool(causes), f"Symptom {item['id']} names no layer.")
        unknown = [c.layer_id for c in causes if c.layer_id not in layer_ids]
        require(not unknown, f"Symptom {item['id']} names unknown layers: {', '.join(unknown)}.")
        require(bool(item["first_measurement"].strip()), f"Symptom {item['id']} needs a first measurement.")
        symptoms.append(
            Symptom(
                id=item["id"],
                label=item["label"],
                causes=causes,
                first_measurement=item["first_measurement"],
                fork=_fork(item),
            )
        )
    ids = [s.id for s in symptoms]
    require(len(set(ids)) == len(ids), "Symptom ids repeat.")
    return Stack(layers=layers, symptoms=tuple(symptoms), outside=outside)


def _fork(item: dict[str, Any]) -> Fork | None:
    raw = item.get("fork")
    if raw is None:
        return None
    texts = {branch: raw.get(branch) if isinstance(raw, dict) else None for branch in ("idle", "busy")}
    require(
        all(isinstance(text, str) and text.strip() for text in texts.values()),
        f"Symptom {item['id']}: a fork needs text for both an idle and a busy GPU.",
    )
    return Fork(idle=str(texts["idle"]), busy=str(texts["busy"]))


@lru_cache(maxsize=1)
def load_stack() -> Stack:
    """The stack from `data/stack.json`, validated once per process."""
    return parse_stack(read_json("stack.json"))


def symptom_ids() -> tuple[str, ...]:
    """The ids of every symptom, in order (the choices of the symptom picker)."""
    return tuple(s.id for s in load_stack().symptoms)
