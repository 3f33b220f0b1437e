"""Two variants of the app under the same load, run in turn so that neither always goes first.

    python -m bench.compare --b-env LAB_BATCH_WAKEUPS=0                  # a setting off
    python -m bench.compare --b-dir ../before --rounds 3                 # another checkout
    python -m bench.compare --mode think --sessions 200 --b-args=--gc=on

On this shared 2-core machine, of two identical runs back to back the second often did better (by
4% and 15% in two pairs), so a before/after pair always run in that order credits the change with
the drift. Here each round runs A, B, B, A: each variant goes first once, and the geometric mean of
B ÷ A over the pairs cancels a steady first/second effect, which the report estimates on its own
(second ÷ first), and a steady drift. Not every drift is steady: the same code against itself, two
rounds, came out up to 16% apart (docs/performance.md); only larger effects show.

Each run is `python -m bench.run_load` in the variant's checkout, with its environment and extra
arguments; its JSON and output go to the comparison's folder. Reports figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.paths import RESULTS_DIR
from bench.report import cpu_per_run_ms, reruns_per_s

SIDES = ("a", "b")
# Per round: each variant once first and once second.
ROUND_ORDER = ("a", "b", "b", "a")


@dataclass(frozen=True)
class Variant:
    """One side of a comparison: a checkout, its extra environment and extra run_load arguments."""

    name: str
    directory: Path
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Figures:
    """What one load run says about the server: throughput, waits and CPU per script run."""

    reruns_per_s: float
    p50_ms: float
    p95_ms: float
    cpu_ms_per_run: float

    @classmethod
    def of(cls, result: dict[str, Any]) -> Figures:
        """The figures of one run_load result (its JSON); ValueError if it served no rerun."""
        rerun = result["rerun"]
        cpu = cpu_per_run_ms(result)
        if not rerun["count"] or cpu is None:
            raise ValueError(f"The run {result.get('label', '?')} served no rerun, so it has no figures.")
        return cls(reruns_per_s(result), rerun["p50_ms"], rerun["p95_ms"], cpu)


FIGURE_NAMES = {
    "reruns_per_s": "reruns served a second",
    "p50_ms": "rerun p50 ms",
    "p95_ms": "rerun p95 ms",
    "cpu_ms_per_run": "server CPU ms per script run",
}


def schedule(rounds: int) -> list[str]:
    """The sides in the order they run: A B B A, `rounds` times."""
    if rounds < 1:
        raise ValueError(f"A comparison needs at least one round; got {rounds}.")
    return list(ROUND_ORDER) * rounds


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive ratios (the mean of their logarithms, back again)."""
    if not values or any(v <= 0 for v in values):
        raise ValueError("A geometric mean needs at least one value, all of them positive.")
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class Comparison:
    """B against A over adjacent pairs of runs: the change and the order effect, per figure."""

    b_over_a: dict[str, list[float]]  # per pair, in run order
    effect: dict[str, float]  # geometric mean of B ÷ A
    second_over_first: dict[str, float]  # geometric mean over pairs, whichever side went first


def compare(runs: Sequence[tuple[str, Figures]]) -> Comparison:
    """Pair runs 1-2, 3-4, …; each pair holds one A and one B. The order effect cancels in `effect`
    when A and B go first equally often, as `schedule` arranges."""
    if len(runs) < 2 or len(runs) % 2:
        raise ValueError("A comparison needs whole pairs of runs.")
    b_over_a: dict[str, list[float]] = {name: [] for name in FIGURE_NAMES}
    second_over_first: dict[str, list[float]] = {name: [] for name in FIGURE_NAMES}
    for (first_side, first), (second_side, second) in zip(runs[::2], runs[1::2], strict=True):
        if {first_side, second_side} != set(SIDES):
            raise ValueError("Each pair of runs must hold one run of A and one of B.")
        a, b = (first, second) if first_side == "a" else (second, first)
        for name in FIGURE_NAMES:
            b_over_a[name].append(getattr(b, name) / getattr(a, name))
            second_over_first[name].append(getattr(second, name) / getattr(first, name))
    return Comparison(
        b_over_a=b_over_a,
        effect={name: geometric_mean(ratios) for name, ratios in b_over_a.items()},
        second_over_first={name: geometric_mean(ratios) for name, ratios in second_over_first.items()},
    )


def load_command(load_args: Sequence[str], variant: Variant, out: Path) -> list[str]:
    """The run_load command line for one run of `variant`."""
    return [sys.executable, "-m", "bench.run_load", *load_args, *variant.args, "--out", str(out)]


def run_once(variant: Variant, load_args: Sequence[str], out: Path) -> dict[str, Any]:
    """One load run of `variant` in its checkout; its result. RuntimeError if run_load failed."""
    log = out.with_suffix(".log")
    with log.open("w") as output:
        finished = subprocess.run(
            load_command(load_args, variant, out),
            cwd=variant.directory,
            env={**os.environ, **variant.env},
            stdout=output,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if finished.returncode != 0:
        raise RuntimeError(f"run_load for {variant.name} exited with {finished.returncode}; see {log}.")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_schedule(
    variants: dict[str, Variant],
    load_args: Sequence[str],
    rounds: int,
    folder: Path,
    say: Callable[[str], None] = print,
) -> list[tuple[str, Figures]]:
    """Every run of the schedule, in order; each side's figures."""
    folder.mkdir(parents=True, exist_ok=True)
    runs = []
    for position, side in enumerate(schedule(rounds), start=1):
        variant = variants[side]
        figures = Figures.of(run_once(variant, load_args, folder / f"run-{position:02d}-{side}.json"))
        say(f"run {position} ({side.upper()}, {variant.name}): {_figure_cells(figures)}")
        runs.append((side, figures))
    return runs


def _figure_cells(figures: Figures) -> str:
    return (
        f"{figures.reruns_per_s:,.1f} reruns/s, p50 {figures.p50_ms:,.0f} ms, "
        f"p95 {figures.p95_ms:,.0f} ms, {figures.cpu_ms_per_run:.1f} ms CPU a run"
    )


def report(variants: dict[str, Variant], runs: Sequence[tuple[str, Figures]], result: Comparison) -> str:
    """The runs in order, then B ÷ A per pair, their geometric mean, and the order effect (Markdown)."""
    a, b = variants["a"].name, variants["b"].name
    lines = [
        "| run | variant | " + " | ".join(FIGURE_NAMES.values()) + " |",
        "|---|---|" + "---|" * len(FIGURE_NAMES),
    ]
    for position, (side, figures) in enumerate(runs, start=1):
        cells = (f"{getattr(figures, name):,.1f}" for name in FIGURE_NAMES)
        lines.append(f"| {position} | {side.upper()} ({variants[side].name}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"| figure | {b} ÷ {a}, each pair | geometric mean | second ÷ first in a pair (order) |",
        "|---|---|---|---|",
    ]
    for name, title in FIGURE_NAMES.items():
        pairs = ", ".join(f"{r:.2f}" for r in result.b_over_a[name])
        lines.append(
            f"| {title} | {pairs} | {result.effect[name]:.2f} | {result.second_over_first[name]:.2f} |"
        )
    return "\n".join(lines)


def comparison_record(
    variants: dict[str, Variant],
    load_args: Sequence[str],
    mode: str,
    sessions: int,
    runs: Sequence[tuple[str, Figures]],
    result: Comparison,
) -> dict[str, Any]:
    """Everything about one comparison as plain data, for comparison.json (bench.report reads it)."""
    return {
        "variants": {side: {**asdict(v), "directory": str(v.directory)} for side, v in variants.items()},
        "load_args": list(load_args),
        "mode": mode,
        "sessions": sessions,
        "runs": [{"side": side, **asdict(figures)} for side, figures in runs],
        "comparison": asdict(result),
    }


def _env_pairs(pairs: Sequence[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"An environment setting reads NAME=value; got {pair!r}.")
        env[name] = value
    return env


def _variant(args: argparse.Namespace, side: str) -> Variant:
    directory = Path(getattr(args, f"{side}_dir")).resolve()
    if not (directory / "bench" / "run_load.py").is_file():
        raise ValueError(f"{directory} is not a checkout of this project (no bench/run_load.py).")
    return Variant(
        name=getattr(args, f"{side}_name") or side.upper(),
        directory=directory,
        env=_env_pairs(getattr(args, f"{side}_env")),
        args=tuple(getattr(args, f"{side}_args").split()),
    )


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for side in SIDES:
        parser.add_argument(f"--{side}-name", default="", help=f"what to call {side.upper()} in the report")
        parser.add_argument(f"--{side}-dir", default=".", help="its checkout (default: this one)")
        parser.add_argument(
            f"--{side}-env", action="append", default=[], metavar="NAME=value", help="repeatable"
        )
        parser.add_argument(f"--{side}-args", default="", help="more run_load arguments, space-separated")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of A B B A")
    parser.add_argument("--target", default="app")
    parser.add_argument("--mode", choices=("think", "burst"), default="burst")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--duration-s", type=float, default=40.0)
    parser.add_argument("--gc", choices=("on", "off"), default="off")
    parser.add_argument("--out", type=Path, default=None, help="folder (default bench/results/compare-A-B)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        variants = {side: _variant(args, side) for side in SIDES}
        schedule(args.rounds)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    load_args = [
        f"--target={args.target}",
        f"--mode={args.mode}",
        f"--sessions={args.sessions}",
        f"--duration-s={args.duration_s:g}",
        f"--gc={args.gc}",
    ]
    folder = (args.out or RESULTS_DIR / f"compare-{variants['a'].name}-{variants['b'].name}").resolve()
    runs = run_schedule(variants, load_args, args.rounds, folder)
    result = compare(runs)
    text = report(variants, runs, result)
    print(text)
    (folder / "comparison.md").write_text(text + "\n")
    record = comparison_record(variants, load_args, args.mode, args.sessions, runs, result)
    (folder / "comparison.json").write_text(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
