"""Run A's configuration and the Run A page's content, read from `data/run_a.json` and validated, and
Run A's timeline on its own device."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from core.datafiles import positive_number, read_json, require
from core.memory.setup import StepSetup
from core.memory.timeline import StepTimeline, step_timeline
from core.memory.verdict import Capacity, capped
from core.model_config import parse_config
from core.run_a.experiments import EXPERIMENTS


@dataclass(frozen=True)
class Scenario:
    """Run A's configuration: the model and how it is run, and the two memory caps in play (GiB)."""

    setup: StepSetup
    device_gib: float
    larger_device_gib: float

    @property
    def capacity(self) -> Capacity:
        """Run A's device: the H200 run capped at `device_gib`."""
        return capped(self.device_gib)


def _scenario(raw: Mapping[str, Any]) -> Scenario:
    require(isinstance(raw, Mapping), "run_a.json needs a 'scenario' object.")
    config = raw.get("config")
    if not isinstance(config, Mapping):
        raise ValueError("run_a.json: the scenario needs a 'config' object (a config.json).")
    setup = StepSetup(
        model=parse_config(config),
        batch=raw.get("batch"),  # type: ignore[arg-type]  # StepSetup checks every value itself
        seq_len=raw.get("seq_len"),  # type: ignore[arg-type]
        precision=raw.get("precision"),  # type: ignore[arg-type]
        attention=raw.get("attention"),  # type: ignore[arg-type]
        optimizer=raw.get("optimizer"),  # type: ignore[arg-type]
        optimizer_impl=raw.get("optimizer_impl"),  # type: ignore[arg-type]
    )
    device_gib = positive_number(raw.get("device_gib"), "Run A's device memory")
    larger_gib = positive_number(raw.get("larger_device_gib"), "The larger device's memory")
    require(larger_gib > device_gib, "The larger device must hold more memory than Run A's.")
    return Scenario(setup=setup, device_gib=device_gib, larger_device_gib=larger_gib)


@dataclass(frozen=True)
class RunAContent:
    """Everything the Run A page reads from `data/run_a.json`, validated: the scenario and the settings of
    its budget-against-leak story (the page's texts are in `data/lessons/run_a/`)."""

    scenario: Scenario
    budget_launches: int
    leak_experiments: tuple[str, ...]
    leak_max_iterations: int


def parse_content(raw: Any) -> RunAContent:
    """Validated page content from the JSON form of `data/run_a.json`."""
    require(isinstance(raw, Mapping), "run_a.json must hold an object.")
    leak = raw.get("leak")
    require(isinstance(leak, Mapping), "run_a.json needs a 'leak' object.")
    base = leak.get("base_experiments")
    require(
        isinstance(base, list) and all(e in EXPERIMENTS for e in base),
        f"The leak's base experiments must come from {', '.join(EXPERIMENTS)}.",
    )
    launches = raw.get("budget_launches")
    require(
        isinstance(launches, int) and launches >= 2,
        "run_a.json: 'budget_launches' must be a whole number of at least 2.",
    )
    require(
        isinstance(leak.get("max_iterations"), int) and leak["max_iterations"] > 2,
        "The leak needs a whole 'max_iterations' above 2.",
    )
    return RunAContent(
        scenario=_scenario(raw.get("scenario")),
        budget_launches=launches,
        leak_experiments=tuple(base),
        leak_max_iterations=leak["max_iterations"],
    )


@lru_cache(maxsize=1)
def load_content() -> RunAContent:
    """The Run A page's content, read and validated once per process."""
    return parse_content(read_json("run_a.json"))


@cache
def run_a_timeline() -> StepTimeline:
    """Run A as briefed: its configuration on its own device."""
    scenario = load_content().scenario
    return step_timeline(scenario.setup, capacity=scenario.capacity)
