"""Run A's configuration and the Run A page's content, read from `data/run_a.json` and validated, and
Run A's timeline on its own device."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from core import validate
from core.datafiles import positive_number, read_json, require
from core.memory.setup import StepSetup
from core.memory.timeline import PHASES, StepTimeline, step_timeline
from core.memory.verdict import Capacity, capped
from core.model_config import parse_config
from core.run_a.experiments import EXPERIMENTS

# The figures a feedback text may name; `core.run_a.decision.feedback` fills them from Run A's brief.
FEEDBACK_FIGURES = ("weights_gb", "device_gb", "device_gib", "other_gb", "activations_gb", "backward_peak_gb")


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


def _prose(value: Any, what: str) -> str:
    require(isinstance(value, str) and value.strip() != "", f"run_a.json: '{what}' must be text.")
    return value


def _texts(raw: Any, names: Sequence[str], what: str) -> dict[str, str]:
    require(
        isinstance(raw, Mapping) and set(raw) == set(names),
        f"run_a.json: '{what}' needs exactly these entries: {', '.join(names)}.",
    )
    return {n: _prose(raw[n], f"{what}.{n}") for n in names}


@dataclass(frozen=True)
class RunAContent:
    """Everything the Run A page reads from `data/run_a.json`, validated."""

    scenario: Scenario
    phases: Mapping[str, str]
    feedback: Mapping[str, str]
    short_names: Mapping[str, str]  # each experiment as a few lower-case words, to name a pair
    principle: str
    budget_launches: int
    leak_experiments: tuple[str, ...]
    leak_max_iterations: int
    leak_retained: str
    leak_causes: tuple[str, ...]
    measure: tuple[Mapping[str, str], ...]
    reflection_prompt: str


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
    measure = validate.items(raw.get("measure"), "run_a.json needs a 'measure' table.", at_least=1)
    rows = tuple(_texts(row, ("question", "call", "reading", "source"), "measure") for row in measure)
    causes = raw.get("leak_causes")
    require(isinstance(causes, list) and causes != [], "run_a.json needs a list of 'leak_causes'.")
    launches = raw.get("budget_launches")
    require(
        isinstance(launches, int) and launches >= 2,
        "run_a.json: 'budget_launches' must be a whole number of at least 2.",
    )
    require(
        isinstance(leak.get("max_iterations"), int) and leak["max_iterations"] > 2,
        "The leak needs a whole 'max_iterations' above 2.",
    )
    content = RunAContent(
        scenario=_scenario(raw.get("scenario")),
        phases=_texts(raw.get("phases"), PHASES, "phases"),
        feedback=_texts(raw.get("feedback"), EXPERIMENTS, "feedback"),
        short_names=_texts(raw.get("short_names"), EXPERIMENTS, "short_names"),
        principle=_prose(raw.get("principle"), "principle"),
        budget_launches=launches,
        leak_experiments=tuple(base),
        leak_max_iterations=leak["max_iterations"],
        leak_retained=_prose(leak.get("retained"), "leak.retained"),
        leak_causes=tuple(_prose(c, "leak_causes") for c in causes),
        measure=rows,
        reflection_prompt=_prose(raw.get("reflection_prompt"), "reflection_prompt"),
    )
    for choice in EXPERIMENTS:  # every placeholder must be one we fill
        try:
            content.feedback[choice].format(**{name: 1.0 for name in FEEDBACK_FIGURES})
        except (KeyError, IndexError, ValueError) as err:
            raise ValueError(
                f"run_a.json: the feedback for '{choice}' names a figure we do not compute: {err}."
            ) from None
    return content


@lru_cache(maxsize=1)
def load_content() -> RunAContent:
    """The Run A page's content, read and validated once per process."""
    return parse_content(read_json("run_a.json"))


@cache
def run_a_timeline() -> StepTimeline:
    """Run A as briefed: its configuration on its own device."""
    scenario = load_content().scenario
    return step_timeline(scenario.setup, capacity=scenario.capacity)
