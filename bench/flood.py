"""One client floods its websocket with reruns while learners work: what do the others wait?

Three runs on the app, each with the same think-mode learners: no flood; a flood with the
app's per-connection message cap (ui/message_rate.py); the same flood with the cap turned off
(LAB_MESSAGES_PER_S=0). Reports the learners' rerun p50/p95 and the server's memory. Loopback only.

    python -m bench.flood --sessions 50 --duration-s 40 --rate 740
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

from bench.load_client import Session, SessionError
from bench.run_load import LoadConfig, _drive, _random_token, _warm_up
from bench.scenarios import TARGETS
from bench.server import ResourceSampler, StreamlitServer
from bench.stats import summarise

_MB = 1_000_000


async def _flood(port: int, rate_per_s: float, until: float) -> int:
    """Send reruns at `rate_per_s` without waiting for them to finish; returns how many were sent."""
    session = Session(port=port, marker="flood")
    await session.connect()
    message = session.model.rerun_message().SerializeToString()
    sent = 0
    with contextlib.suppress(SessionError, OSError, Exception):
        assert session._ws is not None  # connected above
        while time.monotonic() < until:
            await session._ws.send(message)
            sent += 1
            await asyncio.sleep(1 / rate_per_s)
    await session.close()
    return sent


async def _learners_and_flood(config: LoadConfig, port: int, rate_per_s: float) -> tuple[Any, int]:
    token = _random_token()
    until = time.monotonic() + config.ramp_s + config.duration_s
    flood = asyncio.create_task(_flood(port, rate_per_s, until)) if rate_per_s > 0 else None
    stats = await _drive(config, port, token)
    sent = await flood if flood is not None else 0
    return stats, sent


def run_one(config: LoadConfig, *, rate_per_s: float, cap: bool, log: Path) -> dict[str, Any]:
    """One run: a fresh server (cap on or off), warm-up, then learners with or without the flood."""
    env = {} if cap else {"LAB_MESSAGES_PER_S": "0"}
    with StreamlitServer(script=TARGETS["app"].script, post_script_gc=False, log_path=log, env=env) as server:
        assert server.process is not None
        sampler = ResourceSampler(server.process.pid, interval_s=0.5)
        asyncio.run(_warm_up(server.port, TARGETS["app"], _random_token()))
        baseline = sampler.read()
        sampler.start()
        stats, sent = asyncio.run(_learners_and_flood(config, server.port, rate_per_s))
        sampler.stop()
    rerun = summarise(stats.rerun_ms).as_dict()
    return {
        "flood_per_s": rate_per_s,
        "cap": cap,
        "flood_messages_sent": sent,
        "learner_rerun_ms": rerun,
        "errors": dict(stats.errors),
        "exception_count": sum(stats.exceptions.values()),
        "baseline_rss_mb": baseline.rss_bytes / _MB,
        "peak_rss_mb": max(s.rss_bytes for s in sampler.samples) / _MB,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the three configurations and print one line each; JSON goes to bench/results/flood.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--duration-s", type=float, default=40.0)
    parser.add_argument("--rate", type=float, default=740.0, help="flood messages a second")
    args = parser.parse_args(argv)
    config = LoadConfig(
        target="app",
        sessions=args.sessions,
        mode="think",
        duration_s=args.duration_s,
        post_script_gc=False,
        ramp_s=10.0,
        think_min_s=3.0,
        think_max_s=8.0,
        lifetime_s=0.0,
        timeout_s=60.0,
    )
    out = Path("bench/results")
    results = []
    for rate, cap, name in (
        (0.0, True, "no flood"),
        (args.rate, True, "flood, cap on"),
        (args.rate, False, "flood, cap off"),
    ):
        result = run_one(
            config, rate_per_s=rate, cap=cap, log=out / f"flood-{name.replace(' ', '').replace(',', '-')}.log"
        )
        results.append({"name": name, **result})
        r = result["learner_rerun_ms"]
        print(
            f"{name:15s} learners' rerun p50 {r['p50_ms']:.0f} ms, p95 {r['p95_ms']:.0f} ms, n={r['count']}; "
            f"flood sent {result['flood_messages_sent']}; errors {sum(result['errors'].values())}; "
            f"RSS {result['baseline_rss_mb']:.0f} -> peak {result['peak_rss_mb']:.0f} MB",
            flush=True,
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "flood.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
