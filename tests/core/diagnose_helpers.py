"""Building hand-made logs for the diagnosis tests."""

from __future__ import annotations

from collections.abc import Sequence

from core.diagnose.columns import RunLog, run_log
from core.diagnose.formats import Table


def make_run(steps: Sequence[float] | None = None, **columns: Sequence[float]) -> RunLog:
    """A RunLog whose columns are named after their roles (loss=..., memory=... in GB), one row per step."""
    length = len(next(iter(columns.values())))
    step_values = list(steps) if steps is not None else list(range(length))
    roles = ("step", *columns)
    names = tuple(f"{r}_gb" if r == "memory" else r for r in roles)
    rows = tuple(
        (float(step_values[i]), *(float(values[i]) for values in columns.values())) for i in range(length)
    )
    table = Table(format="test", columns=names, rows=rows, ignored=())
    mapping: dict[str, str | None] = dict(zip(roles, names, strict=True))
    return run_log(table, mapping, device_gb=None)
