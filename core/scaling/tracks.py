"""The four training tracks: a model, a fleet, pools of workers, and the illustrative convergence and
straggler figures of part E."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import validate
from core.datafiles import positive_number, require
from core.scaling.fleets import Fleet, TrackModel

WORKER_COUNTS_PER_TRACK = 4


@dataclass(frozen=True)
class Convergence:
    """An illustrative batch curve: steps to target = minimum_steps x (1 + critical_batch / batch)."""

    minimum_steps: float
    critical_batch: float


@dataclass(frozen=True)
class StragglerPolicy:
    """Illustrative stragglers: strict synchronisation waits `lag_ms` a step for the slowest GPU (a fixed
    lag of the fleet, however long the step); dropping slow workers skips the wait but needs more steps."""

    lag_ms: float
    work_multiplier: float


@dataclass(frozen=True)
class Track:
    """One training context: what it deploys to, what it trains upstream and on which fleet."""

    key: str
    label: str
    deployment_target: str
    model: TrackModel
    fleet: Fleet
    worker_counts: tuple[int, ...]
    local_batch: int
    global_batch: int
    model_parallel: bool
    note: str
    convergence: Convergence
    straggler: StragglerPolicy

    @property
    def base_workers(self) -> int:
        """The smallest pool, the baseline every speedup is measured against."""
        return self.worker_counts[0]

    @property
    def pools(self) -> tuple[int, ...]:
        """The numbers of the larger pools, 1 for the next size up."""
        return tuple(range(1, len(self.worker_counts)))

    def pool_workers(self, pool: int) -> int:
        """Workers in larger pool number `pool` (1 = the next size up)."""
        require(
            1 <= pool < len(self.worker_counts),
            f"Pick a larger pool between 1 and {len(self.worker_counts) - 1}.",
        )
        return self.worker_counts[pool]

    def pool_label(self, pool: int) -> str:
        """Larger pool number `pool` as the picker shows it, such as '16 GPUs'."""
        return f"{self.pool_workers(pool)} GPUs"


def parse_track(
    raw: Mapping[str, Any], models: Mapping[str, TrackModel], fleets: Mapping[str, Fleet]
) -> Track:
    """One validated track: known model and fleet, four ascending worker counts of whole nodes."""
    key = validate.text(raw, "key", "A track")
    where = f"Track {key}"
    require(raw.get("model") in models, f"{where} names an unknown model {raw.get('model')!r}.")
    require(raw.get("fleet") in fleets, f"{where} names an unknown fleet {raw.get('fleet')!r}.")
    fleet = fleets[raw["fleet"]]
    counts = validate.items(
        raw.get("worker_counts"), f"{where} needs exactly {WORKER_COUNTS_PER_TRACK} worker counts."
    )
    require(
        len(counts) == WORKER_COUNTS_PER_TRACK,
        f"{where} needs exactly {WORKER_COUNTS_PER_TRACK} worker counts.",
    )
    require(
        all(isinstance(c, int) and c >= 1 for c in counts), f"{where}: worker counts must be whole numbers."
    )
    require(counts == sorted(set(counts)), f"{where}: worker counts must rise from the baseline.")
    require(
        all(c <= fleet.gpus_per_node or c % fleet.gpus_per_node == 0 for c in counts),
        f"{where}: a pool larger than a node must use whole nodes.",
    )
    require(
        counts[-1] <= fleet.total_gpus,
        f"{where}: {counts[-1]} workers exceed the {fleet.total_gpus} GPUs of {fleet.name}.",
    )
    require(isinstance(raw.get("model_parallel"), bool), f"{where}: model_parallel must be true or false.")
    convergence, straggler = raw.get("convergence") or {}, raw.get("straggler") or {}
    policy = StragglerPolicy(
        lag_ms=fleet.straggler_lag_ms,
        work_multiplier=positive_number(straggler.get("work_multiplier"), f"{where} work_multiplier"),
    )
    require(policy.work_multiplier >= 1, f"{where}: dropping workers must add work (a multiplier >= 1).")
    return Track(
        key=key,
        label=validate.text(raw, "label", where),
        deployment_target=validate.text(raw, "deployment_target", where),
        model=models[raw["model"]],
        fleet=fleet,
        worker_counts=tuple(counts),
        local_batch=validate.whole_number(raw.get("local_batch"), f"{where}: 'local_batch'"),
        global_batch=validate.whole_number(raw.get("global_batch"), f"{where}: 'global_batch'"),
        model_parallel=raw["model_parallel"],
        note=validate.text(raw, "note", where),
        convergence=Convergence(
            minimum_steps=positive_number(convergence.get("minimum_steps"), f"{where} minimum_steps"),
            critical_batch=positive_number(convergence.get("critical_batch"), f"{where} critical_batch"),
        ),
        straggler=policy,
    )
