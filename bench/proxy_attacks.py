"""Attacks through the workshop proxy on two replicas, beside learners: what does another learner wait?

Three runs, each with two fresh `streamlit run serve.py` replicas behind deploy/proxy.sh (Debian's
HAProxy, HTTPS, deploy/haproxy.cfg), trusting its X-Forwarded-For as deploy/start.sh sets them up:
quiet; a message flood over 20 connections (the review's 4,169 messages a second, each closed
connection opened again at once; the websockets it opened and the opens refused are counted); a
cookie-rotation attack (websocket opens and uploads as fast as they are answered, each with a freshly
minted XSRF cookie). A few probe learners connect before the attack and rerun a lesson page every half
second; their rerun latencies are the figures. The learners come
from 127.0.0.1 and the attacker from 127.0.0.2, another address to the proxy and the app
(`--attacker-from 127.0.0.1` puts the attacker among the class, behind the same NAT). On one machine
the attacker's own CPU is taken from the replicas too: it is reported. Loopback only; every loop ends
at its deadline. Reports figures, judges nothing.

    python -m bench.proxy_attacks --probes 4 --duration-s 30 --connections 20 --rate 4169
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import psutil

from bench.flood import FloodCount, _flood
from bench.paths import RESULTS_DIR
from bench.proxy import workshop_proxy
from bench.stats import ratio, summarise
from tests.harness.cookie_rotation import rotate_for, rotate_uploads
from tests.harness.load_client import Session, SessionError, open_root_once
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer

PROBE_PAGE = "four-runs"
ROTATORS = 4  # websocket opens in flight at once during the rotation attack
# As deploy/start.sh runs a replica: HAProxy on this host names the client's address, so the message cap
# and the reconnect penalty count the attacker's address, not the proxy's.
REPLICA_ENV = {"LAB_TRUSTED_PROXIES": "127.0.0.1"}


async def _probe(port: int, index: int, start_at: float, end_at: float) -> tuple[list[float], list[str]]:
    """One learner: connects before the attack, then reruns its page every half second until `end_at`."""
    session = Session(port=port, marker=f"bench-s{index}-probe", tls=True, timeout_s=60)
    latencies: list[float] = []
    errors: list[str] = []
    try:
        await session.connect(PROBE_PAGE)
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        while time.monotonic() < end_at:
            try:
                latencies.append((await session.rerun()).latency_ms)
            except SessionError as error:
                errors.append(error.kind)
                break
            await asyncio.sleep(0.5)
    except SessionError as error:
        errors.append(f"connect: {error.kind}")
    finally:
        await session.close()
    return latencies, errors


async def _probes(port: int, probes: int, settle_s: float, duration_s: float) -> dict[str, Any]:
    start_at = time.monotonic() + settle_s
    results = await asyncio.gather(*(_probe(port, i, start_at, start_at + duration_s) for i in range(probes)))
    latencies = [ms for found, _ in results for ms in found]
    errors = [error for _, found in results for error in found]
    return {"rerun_ms": summarise(latencies).as_dict(), "errors": errors}


async def _flood_many(
    port: int, connections: int, rate_per_s: float, duration_s: float, source: str
) -> FloodCount:
    """`connections` flooders at once, `rate_per_s` messages a second among them."""
    counts = await asyncio.gather(
        *(_flood(port, rate_per_s / connections, duration_s, True, source) for _ in range(connections))
    )
    return sum(counts, FloodCount())


async def _rotate(port: int, duration_s: float, source: str) -> dict[str, Any]:
    """Websocket opens with minted cookies, ROTATORS at a time, and 1 MB uploads to the attacker's own
    session with a minted cookie each, all until the deadline."""
    attacker = Session(port=port, marker="bench-s0-rotate", tls=True, timeout_s=60, source=source)
    await attacker.connect()
    keep = {"LAB_REPLICA": attacker.cookies.get("LAB_REPLICA", "")}

    async def uploads() -> dict[int, int]:
        counts: dict[int, int] = {}
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            [status] = await rotate_uploads(
                port, attacker.model.session_id, 1, keep=keep, data=b"x" * 1_000_000
            )
            counts[status] = counts.get(status, 0) + 1
        return counts

    try:
        opens, upload_counts = await asyncio.gather(
            asyncio.gather(*(rotate_for(port, duration_s, source=source) for _ in range(ROTATORS))), uploads()
        )
        return {"websocket_opens": _merged(opens), "uploads": _merged([upload_counts])}
    finally:
        await attacker.close()


def _cpu_s(processes: list[psutil.Process]) -> float:
    """User and system CPU seconds these processes have used so far."""
    return sum(times.user + times.system for times in (process.cpu_times() for process in processes))


def _haproxy(run_dir: Path) -> psutil.Process:
    """The HAProxy that deploy/proxy.sh started with its configuration in `run_dir`."""
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "haproxy" and str(run_dir) in " ".join(process.info["cmdline"] or []):
            return process
    raise RuntimeError(f"no HAProxy runs with a configuration in {run_dir}")


async def _warm(port: int) -> None:
    await open_root_once(port)
    session = Session(port=port, marker="bench-s9-warm", timeout_s=120)
    try:
        await session.connect(PROBE_PAGE)
    finally:
        await session.close()


def _merged(counts: list[dict[int, int]]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for one in counts:
        for status, count in one.items():
            merged[str(status)] = merged.get(str(status), 0) + count
    return merged


def _attack_process(kind: str, port: int, duration_s: float, args: argparse.Namespace, out: Any) -> None:
    """The attacker in its own process, so it never shares the probes' event loop."""
    source = args.attacker_from
    if kind == "flood":
        count = asyncio.run(_flood_many(port, args.connections, args.rate, duration_s, source))
        # Opened: websockets a replica accepted (each a session); refused: by HAProxy or a replica.
        result: dict[str, Any] = {
            "messages_sent": count.sent,
            "websockets_opened": count.opened,
            "opens_refused": count.refused,
        }
    else:
        result = asyncio.run(_rotate(port, duration_s, source))
    # On one machine the attacker's own CPU is taken from the replicas too: say how much it was.
    out.put({**result, "attacker_cpu_s": round(time.process_time(), 1)})


def run_one(kind: str, args: argparse.Namespace, logs: Path) -> dict[str, Any]:
    """Two fresh replicas and a fresh proxy; the probes, and the attack of this kind beside them."""
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                StreamlitServer(
                    REPO_ROOT / "serve.py",
                    post_script_gc=False,
                    log_path=logs / f"{kind}-app{i}.log",
                    env=REPLICA_ENV,
                )
            )
            for i in (1, 2)
        ]
        port = stack.enter_context(workshop_proxy([s.port for s in servers], logs / f"{kind}-proxy.log"))
        for server in servers:  # each replica has run its root, then the probe page, once
            asyncio.run(_warm(server.port))
        load_before = os.getloadavg()
        replicas = [psutil.Process(server.process.pid) for server in servers if server.process is not None]
        proxy = [_haproxy(logs / f"{kind}-proxy-run")]  # bench.proxy's run folder, beside its log
        replicas_cpu_before_s, proxy_cpu_before_s = _cpu_s(replicas), _cpu_s(proxy)
        settle_s = 3.0
        spawn = multiprocessing.get_context("spawn")
        results = spawn.Queue()
        attacker = None
        if kind != "quiet":
            attacker = spawn.Process(
                target=_attack_process,
                args=(kind, port, settle_s + args.duration_s, args, results),
            )
            attacker.start()
        probes = asyncio.run(_probes(port, args.probes, settle_s, args.duration_s))
        attack = results.get(timeout=120) if attacker is not None else {}
        if attacker is not None:
            attacker.join(timeout=30)
        replicas_cpu_s = _cpu_s(replicas) - replicas_cpu_before_s
        proxy_cpu_s = _cpu_s(proxy) - proxy_cpu_before_s
        problems = sum(server.log_problems() for server in servers)
    return {
        "kind": kind,
        "attacker_from": args.attacker_from,
        **probes,
        "attack": attack,
        "replicas_cpu_s": round(replicas_cpu_s, 1),
        "proxy_cpu_s": round(proxy_cpu_s, 1),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "replica_log_problems": problems,
    }


def main(argv: list[str] | None = None) -> int:
    """Quiet, flood and rotation runs; one line each, JSON to bench/results/proxy_attacks.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--probes", type=int, default=4)
    parser.add_argument("--duration-s", type=float, default=30.0)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--rate", type=float, default=4169.0, help="flood messages a second, all connections")
    parser.add_argument("--kinds", default="quiet,flood,rotation")
    parser.add_argument("--attacker-from", default="127.0.0.2", help="the attacker's loopback address")
    args = parser.parse_args(argv)
    logs = RESULTS_DIR / "proxy_attacks"
    logs.mkdir(parents=True, exist_ok=True)
    runs = []
    for kind in args.kinds.split(","):
        result = run_one(kind, args, logs)
        runs.append(result)
        rerun = result["rerun_ms"]
        quiet = runs[0]["rerun_ms"]["p95_ms"] if runs[0]["kind"] == "quiet" else None
        versus = ratio(rerun["p95_ms"], quiet)
        print(
            f"{kind:9s} probes' rerun p50 {rerun['p50_ms'] or 0:,.0f} ms, p95 {rerun['p95_ms'] or 0:,.0f} ms "
            f"({'-' if versus is None else f'{versus:.1f}x quiet'}), max {rerun['max_ms'] or 0:,.0f} ms, "
            f"n={rerun['count']}; errors {result['errors']}; attack {result['attack']}; "
            f"CPU: replicas {result['replicas_cpu_s']} s, proxy {result['proxy_cpu_s']} s; "
            f"load {result['load_average_before'][0]:.1f} -> {result['load_average_after'][0]:.1f}",
            flush=True,
        )
    (RESULTS_DIR / "proxy_attacks.json").write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
