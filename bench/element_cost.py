"""What one element of each kind costs a server while a class clicks at once: a page's price list.

    python -m bench.element_cost                                   # every kind, about 9 minutes
    python -m bench.element_cost --kinds markdown,radio --count 20 --duration-s 25

For each kind, `bench/element_page.py` draws the hello page's two elements and then `--count`
elements of that kind, and `--sessions` learners rerun it all at once (`bench.run_load`'s burst, every
script run logged). The page with no extra element runs first and last, as the yardstick and to show
the drift between. Each kind's row gives its messages a run, the server's CPU a script run, the
reruns served a second and the rerun p95, and the extra server CPU each element adds over the bare
page: (CPU a run − the bare page's) ÷ (messages a run − the bare page's). Reports figures; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.element_page import ENV, KINDS, ONE_MARKDOWN, parse
from bench.paths import RESULTS_DIR
from bench.report import cpu_per_run_ms, reruns_per_s
from bench.run_load import LoadConfig, run
from tests.harness.server import throwaway_store

BARE = "none"
ALL_KINDS = (*KINDS, ONE_MARKDOWN)


@dataclass(frozen=True)
class Priced:
    """One load run of the element page: its kind and what the server spent on it."""

    kind: str
    messages: float  # queued a script run, from the run log
    server_cpu_ms: float  # a script run, all of the server's threads
    reruns_per_s: float
    p95_ms: float

    @classmethod
    def of(cls, kind: str, result: dict[str, Any]) -> Priced:
        """The figures of one run_load result (its JSON, with a run log); ValueError if it served nothing."""
        cpu = cpu_per_run_ms(result)
        runs = (result.get("script_runs") or {}).get("kinds", {}).get("whole")
        if cpu is None or not result["rerun"]["count"] or runs is None:
            raise ValueError(f"The {kind} run served no rerun, so it has no figures.")
        return cls(kind, runs["messages_mean"], cpu, reruns_per_s(result), result["rerun"]["p95_ms"])


def per_element_ms(priced: Priced, bare: Priced) -> float | None:
    """The server CPU each message beyond the bare page's adds to a run; None for a page that adds none."""
    extra = priced.messages - bare.messages
    return (priced.server_cpu_ms - bare.server_cpu_ms) / extra if extra >= 0.5 else None


def yardstick(runs: Sequence[Priced]) -> Priced:
    """The bare page's figures: the mean of its runs (the first and the last), so drift between them
    shows as the gap between those two rows rather than in every other row."""
    bare = [r for r in runs if r.kind == BARE]
    if not bare:
        raise ValueError("The price list needs a run of the bare page to compare with.")
    return Priced(
        BARE,
        sum(r.messages for r in bare) / len(bare),
        sum(r.server_cpu_ms for r in bare) / len(bare),
        sum(r.reruns_per_s for r in bare) / len(bare),
        sum(r.p95_ms for r in bare) / len(bare),
    )


def table(runs: Sequence[Priced], count: int) -> str:
    """The price list as a Markdown table, in run order."""
    bare = yardstick(runs)
    lines = [
        f"| kind ({count} of it after the bare page's two elements) | messages a run | server CPU ms a run "
        "| extra CPU ms an element | reruns a second | rerun p95 ms | p95 ÷ bare page |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        extra = per_element_ms(r, bare)
        extra_cell = "—" if extra is None else f"{extra:.2f}"
        lines.append(
            f"| {r.kind} | {r.messages:.0f} | {r.server_cpu_ms:.1f} | {extra_cell} "
            f"| {r.reruns_per_s:.0f} | {r.p95_ms:,.0f} | {r.p95_ms / bare.p95_ms:.2f} |"
        )
    return "\n".join(lines)


def schedule(kinds: Sequence[str]) -> list[str]:
    """The runs in order: the bare page first and last, each asked-for kind once between."""
    return [BARE, *(kind for kind in kinds if kind != BARE), BARE]


def price(kind: str, count: int, sessions: int, duration_s: float, out: Path) -> Priced:
    """One burst of `sessions` learners against the element page drawing `count` of `kind`; its result
    goes to `out` (JSON) and its run log beside it."""
    spec = f"{kind}:{count}"
    parse(spec)
    os.environ[ENV] = spec  # the server started next inherits it
    config = LoadConfig(
        target="elements",
        sessions=sessions,
        mode="burst",
        duration_s=duration_s,
        post_script_gc=False,
    )
    return Priced.of(kind, run(config, out, run_log=out.with_suffix(".runs.jsonl")))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kinds", default=",".join(k for k in ALL_KINDS if k != BARE))
    parser.add_argument("--count", type=int, default=20, help="elements of the kind on the page")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--duration-s", type=float, default=25.0)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "element_cost")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    kinds = [kind for kind in args.kinds.split(",") if kind]
    for kind in kinds:
        parse(f"{kind}:{args.count}")  # a misspelt kind fails before the first run, not after an hour
    throwaway_store("bench-element-cost-")
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for index, kind in enumerate(schedule(kinds)):
        out = args.out / f"{index:02d}-{kind}.json"
        runs.append(price(kind, args.count, args.sessions, args.duration_s, out))
        print(f"  {kind}: {runs[-1]}", flush=True)
    (args.out / "price_list.json").write_text(json.dumps([asdict(r) for r in runs], indent=1))
    print(table(runs, args.count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
