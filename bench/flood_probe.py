"""One probe learner reruns every half second while a client floods; prints the probe's latencies.

A quick companion to bench.flood for a busy machine: one session instead of fifty, so the
figures show the flood's effect rather than the machine's load. Loopback only.

    python -m bench.flood_probe --via proxy --cap on --rate 740
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from pathlib import Path

from bench.flood import _flood_process
from bench.load_client import Session, SessionError
from bench.proxy import workshop_proxy
from bench.scenarios import TARGETS
from bench.server import StreamlitServer

FLOOD_S = 25.0


async def _probe(port: int, tls: bool, reruns: int) -> list[str]:
    session = Session(port=port, marker="bench-s500-prb", tls=tls, timeout_s=60)
    latencies = []
    try:
        await session.connect("")
        for _ in range(reruns):
            latencies.append(f"{(await session.rerun()).latency_ms:.0f}")
            await asyncio.sleep(0.5)
    except SessionError as error:
        latencies.append(f"stopped: {error}")
    finally:
        await session.close()
    return latencies


def _measure(port: int, tls: bool, rate_per_s: float, reruns: int) -> tuple[list[str], int]:
    spawn = multiprocessing.get_context("spawn")
    sent = spawn.Value("i", 0)
    flooder = spawn.Process(target=_flood_process, args=(port, rate_per_s, FLOOD_S, sent, tls))
    if rate_per_s > 0:
        flooder.start()
        time.sleep(3)  # the flood is on before the probe starts
    latencies = asyncio.run(_probe(port, tls, reruns))
    if rate_per_s > 0:
        flooder.join(timeout=60)
    return latencies, int(sent.value)


def main(argv: list[str] | None = None) -> int:
    """Start the app (and the proxy), flood it, print the probe's rerun latencies in ms."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--via", choices=("direct", "proxy"), default="proxy")
    parser.add_argument("--cap", choices=("on", "off"), default="on")
    parser.add_argument("--rate", type=float, default=740.0, help="flood messages a second (0: no flood)")
    parser.add_argument("--reruns", type=int, default=12)
    args = parser.parse_args(argv)
    out = Path("bench/results")
    env = {} if args.cap == "on" else {"LAB_MESSAGES_PER_S": "0"}
    log = out / f"flood_probe-{args.via}-{args.cap}.log"
    with StreamlitServer(script=TARGETS["app"].script, post_script_gc=False, log_path=log, env=env) as server:
        asyncio.run(_probe(server.port, False, 2))  # warm the imports
        if args.via == "proxy":
            with workshop_proxy([server.port], log.with_suffix(".proxy.log")) as port:
                latencies, sent = _measure(port, True, args.rate, args.reruns)
        else:
            latencies, sent = _measure(server.port, False, args.rate, args.reruns)
    print(
        f"{args.via}, cap {args.cap}, flood {args.rate:g}/s ({sent} sent): "
        f"probe reruns ms {', '.join(latencies)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
