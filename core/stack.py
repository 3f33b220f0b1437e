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
class Symptom:
    """Something a learner observes, the layers that can cause it and the measurement that separates them."""

    id: str
    label: str
    causes: tuple[Cause, ...]
    first_measurement: str

    def layer_ids(self) -> tuple[str, ...]:
        """The layers that can cause this symptom."""
        return tuple(c.layer_id for c in self.causes)


@dataclass(frozen=True)
class Stack:
    """The layers in order, top to bottom, and the symptoms."""

    layers: tuple[Layer, ...]
    symptoms: tuple[Symptom, ...]

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
    """Build and validate the stack; every cause must name a known layer."""
    layers = tuple(Layer(**layer) for layer in raw["layers"])
    layer_ids = {layer.id for layer in layers}
    require(len(layer_ids) == len(layers) == 5, "The stack has exactly five distinct layers.")
    symptoms = []
    for item in raw["symptoms"]:
        causes = tuple(Cause(layer_id=c["layer"], how=c["how"]) for c in item["causes"])
        require(bool(causes), f"Symptom {item['id']} names no layer.")
        unknown = [c.layer_id for c in causes if c.layer_id not in layer_ids]
        require(not unknown, f"Symptom {item['id']} names unknown layers: {', '.join(unknown)}.")
        require(bool(item["first_measurement"].strip()), f"Symptom {item['id']} needs a first measurement.")
        symptoms.append(
            Symptom(
                id=item["id"], label=item["label"], causes=causes, first_measurement=item["first_measurement"]
            )
        )
    ids = [s.id for s in symptoms]
    require(len(set(ids)) == len(ids), "Symptom ids repeat.")
    return Stack(layers=layers, symptoms=tuple(symptoms))


@lru_cache(maxsize=1)
def load_stack() -> Stack:
    """The stack from `data/stack.json`, validated once per process."""
    return parse_stack(read_json("stack.json"))


def symptom_ids() -> tuple[str, ...]:
    """The ids of every symptom, in order (the choices of the symptom picker)."""
    return tuple(s.id for s in load_stack().symptoms)
