"""What one click's write costs the server's CPU, by kind of write, on SQLite and on PostgreSQL.

    python -m bench.store_writes                       # both databases, 2,000 writes of each kind
    python -m bench.store_writes --databases sqlite --writes 500

A click writes on the script thread, so a write's CPU is taken from every other learner's run while a
class clicks at once. For each kind (a setting, a first visit's defaults, an answer, a record, a new
learner) one learner's store writes `--warm-up` times, then `--writes` times under
`time.process_time`: the process's CPU in Python, SQLAlchemy, the driver and the kernel, not the time
spent waiting on disk or on the server. PostgreSQL runs in a throwaway server (tests/harness/postgres.py);
its own CPU is not counted. Reports figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.paths import RESULTS_DIR
from store import LearnerStore
from tests.harness.postgres import temporary_postgres

# One write of each kind, the n-th for a learner: what a click, an answer or a first visit sends.
WRITES: dict[str, Callable[[LearnerStore, str, int], object]] = {
    "setting": lambda store, learner, n: store.put_setting(learner, "linear", "batch", n),
    "first visit's defaults": lambda store, learner, n: store.put_settings_if_absent(
        learner, f"section{n}", {"batch": 8, "seq": 2048}
    ),
    "answer": lambda store, learner, n: store.add_answer(learner, f"q{n}", "mem"),
    "record": lambda store, learner, n: store.put_record(learner, "run_a.reflection", {"text": str(n)}),
    "new learner": lambda store, learner, n: store.new_learner(),
}


@dataclass(frozen=True)
class WriteCost:
    """The CPU one write of a kind took, on average, on one database."""

    database: str
    kind: str
    writes: int
    cpu_us: float


def measure(store: LearnerStore, database: str, *, writes: int, warm_up: int) -> list[WriteCost]:
    """Each kind of write `warm_up` times, then `writes` times timed, for one fresh learner per kind."""
    costs = []
    for kind, write in WRITES.items():
        learner = store.new_learner().id
        for n in range(warm_up):
            write(store, learner, n)
        started = time.process_time()
        for n in range(warm_up, warm_up + writes):
            write(store, learner, n)
        cpu_us = (time.process_time() - started) / writes * 1e6
        costs.append(WriteCost(database=database, kind=kind, writes=writes, cpu_us=cpu_us))
    return costs


@contextlib.contextmanager
def opened(database: str) -> Iterator[LearnerStore]:
    """An empty store of the kind named: an SQLite file in a temporary folder, or a throwaway server."""
    with contextlib.ExitStack() as stack:
        if database == "sqlite":
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            url = f"sqlite:///{folder / 'learners.sqlite3'}"
        else:
            url = stack.enter_context(temporary_postgres())
        store = LearnerStore.open(url)
        stack.callback(store.engine.dispose)
        yield store


def table(costs: Sequence[WriteCost]) -> str:
    """The figures as a Markdown table: one row per kind, one column per database."""
    databases = list(dict.fromkeys(cost.database for cost in costs))
    kinds = list(dict.fromkeys(cost.kind for cost in costs))
    found = {(cost.database, cost.kind): cost.cpu_us for cost in costs}
    lines = [
        "| write | " + " | ".join(f"{database}, CPU µs a write" for database in databases) + " |",
        "| --- |" + " --- |" * len(databases),
    ]
    for kind in kinds:
        lines.append(f"| {kind} | " + " | ".join(f"{found[(db, kind)]:.0f}" for db in databases) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: measure, print the table, save the figures as JSON."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--databases", default="sqlite,postgresql", help="sqlite, postgresql or both")
    parser.add_argument("--writes", type=int, default=2000, help="timed writes of each kind")
    parser.add_argument("--warm-up", type=int, default=200, help="untimed writes of each kind first")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "store_writes.json")
    args = parser.parse_args(argv)
    databases = [name.strip() for name in args.databases.split(",") if name.strip()]
    unknown = set(databases) - {"sqlite", "postgresql"}
    if unknown or not databases or args.writes < 1 or args.warm_up < 0:
        parser.error("Choose sqlite and/or postgresql, at least one timed write and no negative warm-up.")
    costs: list[WriteCost] = []
    for database in databases:
        with opened(database) as store:
            costs += measure(store, database, writes=args.writes, warm_up=args.warm_up)
    print(table(costs))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps([asdict(cost) for cost in costs], indent=2) + "\n")
    print(f"figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
