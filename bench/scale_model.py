"""A class clicking at once, on R replicas: what the measured CPU per script run predicts.

    python -m bench.scale_model --cpu-ms 20 --learners 100 --replicas 1,2,8

The model behind the sizing rule of docs/hosting.md, made explicit so it can be checked against the runs
through HAProxy with 1 and 2 replicas that this machine can hold. In a burst every learner acts in
the same instant; the proxy spreads learners over replicas in turn (round robin, then cookie
affinity), so a replica holds ceil(N / R) or floor(N / R) of them; a replica runs their scripts one
after another, each taking the measured CPU per script run, on a core of its own. The k-th run
in a replica's queue comes back after k runs' time plus a fixed delivery time. The next burst
starts when the slowest learner has its answer. Nothing else competes for the cores: on a machine
with fewer cores than replicas + proxy + clients, the measured figures are worse than the model.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class BurstModel:
    """What the model predicts for one burst size and replica count."""

    learners: int
    replicas: int
    p95_ms: float
    slowest_ms: float
    reruns_per_s: float


def burst(learners: int, replicas: int, cpu_ms_per_run: float, delivery_ms: float = 0.0) -> BurstModel:
    """The p95 and slowest wait of one burst of `learners` over `replicas`, and reruns served a second."""
    if learners < 1 or replicas < 1:
        raise ValueError("A burst needs at least one learner and one replica.")
    if cpu_ms_per_run <= 0 or delivery_ms < 0:
        raise ValueError("CPU per script run must be positive and delivery time not negative.")
    waits = []
    for replica in range(replicas):
        queued = learners // replicas + (1 if replica < learners % replicas else 0)
        waits += [(position + 1) * cpu_ms_per_run + delivery_ms for position in range(queued)]
    waits.sort()
    p95 = waits[max(0, math.ceil(0.95 * len(waits)) - 1)]
    slowest = waits[-1]
    return BurstModel(learners, replicas, p95, slowest, 1000 * learners / slowest)


def main(argv: list[str] | None = None) -> int:
    """Print the model's figures for each replica count."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cpu-ms", type=float, required=True, help="measured CPU per script run")
    parser.add_argument("--delivery-ms", type=float, default=0.0, help="fixed time beyond the script run")
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--replicas", default="1,2,8")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print("| replicas (a core each) | rerun p95 ms | slowest ms | reruns a second |")
    print("|---|---|---|---|")
    for replicas in (int(r) for r in args.replicas.split(",")):
        model = burst(args.learners, replicas, args.cpu_ms, args.delivery_ms)
        print(f"| {replicas} | {model.p95_ms:,.0f} | {model.slowest_ms:,.0f} | {model.reruns_per_s:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
