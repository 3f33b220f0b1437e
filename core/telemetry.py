"""Synthetic but deterministic telemetry for the four runs, shaped so each failure shows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from core import lessons, validate
from core.datafiles import positive_number, read_json, require

KINDS = ("oom", "starved", "nan", "stuck")
COLUMNS = ("x", "memory_gb", "utilisation_pct", "loss", "accuracy_pct")
# Where an x value falls, in words: the sentence in data/lessons/four_runs that says it.
AT_STEP = "at_step"
IN_STEP_ONE = "in_step_one"


@dataclass(frozen=True)
class Run:
    """One of the four runs: its card facts, its marked question and its telemetry recipe."""

    id: str
    title: str
    question_id: str
    facts: tuple[str, ...]
    recipe: dict[str, Any]


@dataclass(frozen=True)
class Telemetry:
    """What a dashboard would have recorded for one run."""

    run_id: str
    x_label: str
    device_memory_gb: float
    frame: pd.DataFrame  # columns: COLUMNS
    failure_x: float | None  # where the run died or went bad, in x units
    failure_label: str | None
    x_position: str  # where an x value falls: AT_STEP or IN_STEP_ONE
    chance_loss: float | None = None  # ln(classes) for a run that names its classes: guessing's loss

    @property
    def failure_text(self) -> str | None:
        """What went wrong and where, in words ("loss becomes nan at step 2,000"), or None."""
        if self.failure_x is None:
            return None
        return f"{self.failure_label} {lessons.sentence('four_runs', self.x_position, x=self.failure_x)}"

    @property
    def has_loss(self) -> bool:
        """Whether any loss was logged at all."""
        return bool(self.frame["loss"].notna().any())


def _noise(seed: int, size: int, scale: float) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, scale, size)


def _decay(steps: np.ndarray, start: float, end: float, total: float) -> np.ndarray:
    return end + (start - end) * np.exp(-4.0 * steps / total)


def _oom(device_gb: float) -> tuple[pd.DataFrame, float, str]:
    # Run A's first step as the phase model plays it out (core.run_a), sampled at every moment it reaches:
    # x is the percent of the step's planned moments, so the curve stops where the allocator refused.
    from core.run_a import run_a_timeline  # Run A is one run: the Four runs card reads the Run A page's model

    timeline = run_a_timeline()
    points = [p for p in timeline.ran if p.iteration == 1]
    x = np.array([100 * p.position for p in points])
    memory = np.minimum([p.total_gb for p in points], device_gb)
    utilisation = np.clip(94 + _noise(1, x.size, 2.0), 0, 100)
    frame = pd.DataFrame(
        {"x": x, "memory_gb": memory, "utilisation_pct": utilisation, "loss": np.nan, "accuracy_pct": np.nan}
    )
    failure = timeline.failure
    in_backward = failure is not None and failure.phase == "backward"
    label = (
        lessons.sentence("four_runs", "oom_in_backward")
        if in_backward
        else lessons.sentence("four_runs", "oom_in_step_one")
    )
    return frame, float(x[-1]), label


def _training(recipe: dict[str, Any], device_gb: float, seed: int) -> pd.DataFrame:
    steps = np.linspace(0, recipe["steps"], recipe["samples"])
    utilisation = np.clip(recipe["utilisation_pct"] + _noise(seed, steps.size, 3.0), 0, 100)
    memory = np.full(steps.size, recipe["memory_fraction"] * device_gb) + _noise(seed + 1, steps.size, 0.05)
    return pd.DataFrame({"x": steps, "memory_gb": memory, "utilisation_pct": utilisation})


def _with_loss(frame: pd.DataFrame, recipe: dict[str, Any], seed: int) -> pd.DataFrame:
    steps = frame["x"].to_numpy()
    loss = _decay(steps, recipe["start_loss"], recipe["end_loss"], recipe["steps"]) + _noise(
        seed + 2, steps.size, 0.03
    )
    accuracy = np.clip(100 * (1 - loss / recipe["start_loss"]) + 10, 0, 100)
    return frame.assign(loss=loss, accuracy_pct=accuracy)


def _stuck(frame: pd.DataFrame, recipe: dict[str, Any], seed: int) -> pd.DataFrame:
    # Chance-level loss for k classes is ln(k); it is reached by `flat_from_step` and stays there.
    chance_loss = math.log(recipe["classes"])
    steps = frame["x"].to_numpy()
    early = recipe["start_loss"] - (recipe["start_loss"] - chance_loss) * steps / recipe["flat_from_step"]
    loss = np.where(steps < recipe["flat_from_step"], early, chance_loss) + _noise(seed + 2, steps.size, 0.01)
    accuracy = 100.0 / recipe["classes"] + _noise(seed + 3, steps.size, 0.5)
    return frame.assign(loss=loss, accuracy_pct=accuracy)


def telemetry(run: Run, device_memory_gb: float) -> Telemetry:
    """The recorded series for one run (same numbers every call)."""
    recipe, seed = run.recipe, ord(run.id)
    kind = recipe["kind"]
    if kind == "oom":
        frame, failure_x, oom = _oom(device_memory_gb)
        return Telemetry(
            run.id, "time through step 1 (%)", device_memory_gb, frame, failure_x, oom, IN_STEP_ONE
        )
    frame = _training(recipe, device_memory_gb, seed)
    failure_at: float | None = None
    label: str | None = None
    if kind == "stuck":
        frame = _stuck(frame, recipe, seed)
        failure_at = float(recipe["flat_from_step"])
        label = lessons.sentence("four_runs", "loss_stops_moving")
    else:
        frame = _with_loss(frame, recipe, seed)
        if kind == "nan":
            frame.loc[frame["x"] >= recipe["nan_step"], "loss"] = np.nan
            frame.loc[frame["x"] >= recipe["nan_step"], "accuracy_pct"] = np.nan
            failure_at = float(recipe["nan_step"])
            label = lessons.sentence("four_runs", "loss_becomes_nan")
    chance = math.log(recipe["classes"]) if "classes" in recipe else None
    return Telemetry(run.id, "step", device_memory_gb, frame, failure_at, label, AT_STEP, chance)


def _run(raw: dict[str, Any]) -> Run:
    where = f"Run {raw.get('id')}"
    recipe = validate.mapping(raw.get("telemetry"), f"{where}: needs a telemetry recipe.")
    validate.choice(recipe.get("kind"), KINDS, f"{where}: telemetry kind")
    for key, value in recipe.items():
        if key != "kind":
            positive_number(value, f"{where}: telemetry '{key}'")
    facts = validate.items(raw.get("facts"), f"{where}: needs a list of facts.", at_least=1)
    require(all(isinstance(f, str) and f for f in facts), f"{where}: needs a list of facts.")
    return Run(
        id=raw["id"], title=raw["title"], question_id=raw["question"], facts=tuple(facts), recipe=dict(recipe)
    )


@lru_cache(maxsize=1)
def load_runs() -> tuple[tuple[Run, ...], float]:
    """The four runs from `data/runs.json` and the device memory they ran on (decimal GB), validated once."""
    raw = read_json("runs.json")
    device_gb = positive_number(raw.get("device_memory_gib"), "runs.json: device_memory_gib") * 2**30 / 1e9
    runs = tuple(_run(r) for r in raw.get("runs", []))
    ids = [r.id for r in runs]
    require(len(runs) == 4 and len(set(ids)) == 4, "runs.json must describe four distinct runs.")
    return runs, device_gb


def device_gib(device_gb: float) -> float:
    """The lesson's device in the GiB the card reports (a page names it in GiB, then decimal GB)."""
    return device_gb * 1e9 / 2**30


@lru_cache(maxsize=len(KINDS))
def recorded(run_id: str) -> Telemetry:
    """One of the four runs' series on the lesson's device, computed once per process (the same for
    everyone)."""
    runs, device_gb = load_runs()
    by_id = {run.id: run for run in runs}
    if run_id not in by_id:
        raise ValueError(f"There is no run {run_id!r}; the runs are {', '.join(sorted(by_id))}.")
    return telemetry(by_id[run_id], device_gb)
