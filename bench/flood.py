"""One client floods its websocket with reruns while learners work: what do the others wait?

Everything goes through the workshop proxy (deploy/proxy.sh, HTTPS) in front of one replica;
the flooder runs in its own process. Three runs, each with the same think-mode learners: no
flood; a flood with the app's per-connection message cap (server/message_rate.py); the same flood
with the cap turned off (LAB_MESSAGES_PER_S=0). Reports the learners' rerun p50/p95 and the
server's memory. Loopback only.

    python -m bench.flood --sessions 50 --duration-s 40 --rate 740
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from bench.proxy import workshop_proxy
from bench.run_load import LoadConfig, _drive, _random_token, _warm_up
from bench.scenarios import TARGETS
from bench.stats import summarise
from tests.harness.load_client import LOOPBACK, Session, SessionError
from tests.harness.server import ResourceSampler, StreamlitServer

_MB = 1_000_000


@dataclass
class FloodCount:
    """What one flooder did: messages sent, websockets it opened, and opens refused (or failed)."""

    sent: int = 0
    opened: int = 0
    refused: int = 0

    def __add__(self, other: FloodCount) -> FloodCount:
        return FloodCount(self.sent + other.sent, self.opened + other.opened, self.refused + other.refused)


async def _flood(
    port: int, rate_per_s: float, duration_s: float, tls: bool = True, source: str = LOOPBACK
) -> FloodCount:
    """Send reruns at `rate_per_s` through the proxy without waiting for them, reconnecting whenever
    the connection is closed or refused, as an attacker would, from the loopback address `source`."""
    count, start = FloodCount(), time.monotonic()
    while time.monotonic() - start < duration_s:
        session = Session(port=port, marker="flood", tls=tls, timeout_s=10, source=source)
        try:
            await session.connect()
            count.opened += 1
            assert session._ws is not None  # connected above
            message = session.model.rerun_message().SerializeToString()
            # Until the server closes the connection (the app closes a connection that keeps flooding).
            while (elapsed := time.monotonic() - start) < duration_s and session._ws.state is State.OPEN:
                while count.sent < elapsed * rate_per_s:
                    await session._ws.send(message)
                    count.sent += 1
                await asyncio.sleep(0.005)
        except SessionError:
            count.refused += 1
            await asyncio.sleep(0.1)
        except (ConnectionClosed, OSError):
            await asyncio.sleep(0.1)
        finally:
            await session.close()
    return count


def _flood_process(port: int, rate_per_s: float, duration_s: float, sent: Any, tls: bool = True) -> None:
    """The flooder in its own process, so it never shares the measured learners' event loop."""
    sent.value = asyncio.run(_flood(port, rate_per_s, duration_s, tls)).sent


def run_one(config: LoadConfig, *, rate_per_s: float, cap: bool, log: Path) -> dict[str, Any]:
    """One run: a fresh server (cap on or off) behind the proxy, warm-up, then learners (and the flood)."""
    env = {} if cap else {"LAB_MESSAGES_PER_S": "0"}
    with (
        StreamlitServer(script=TARGETS["app"].script, post_script_gc=False, log_path=log, env=env) as server,
        workshop_proxy([server.port], log.with_suffix(".proxy.log")) as proxy_port,
    ):
        assert server.process is not None
        sampler = ResourceSampler(server.process.pid, interval_s=0.5)
        asyncio.run(_warm_up(server.port, TARGETS["app"], _random_token()))
        baseline = sampler.read()
        sampler.start()
        sent = multiprocessing.get_context("spawn").Value("i", 0)
        flooder = multiprocessing.get_context("spawn").Process(
            target=_flood_process, args=(proxy_port, rate_per_s, config.ramp_s + config.duration_s, sent)
        )
        if rate_per_s > 0:
            flooder.start()
        stats = asyncio.run(_drive(config, proxy_port, _random_token(), tls=True))
        if rate_per_s > 0:
            flooder.join(timeout=60)
        sampler.stop()
    rerun = summarise(stats.rerun_ms).as_dict()
    return {
        "flood_per_s": rate_per_s,
        "cap": cap,
        "flood_messages_sent": sent.value,
        "learner_rerun_ms": rerun,
        "learner_first_load_ms": summarise(stats.initial_ms).as_dict(),
        "learner_page_switch_ms": summarise(stats.navigate_ms).as_dict(),
        "errors": dict(stats.errors),
        "exception_count": sum(stats.exceptions.values()),
        "baseline_rss_mb": baseline.rss_bytes / _MB,
        "peak_rss_mb": max(s.rss_bytes for s in sampler.samples) / _MB,
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


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
        timeout_s=60.0,  # a learner's rerun may wait behind the flood
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
            f"{name:15s} learners' rerun p50 {_ms(r['p50_ms'])} ms, p95 {_ms(r['p95_ms'])} ms, "
            f"n={r['count']}; "
            f"flood sent {result['flood_messages_sent']}; errors {sum(result['errors'].values())}; "
            f"RSS {result['baseline_rss_mb']:.0f} -> peak {result['peak_rss_mb']:.0f} MB",
            flush=True,
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "flood.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
