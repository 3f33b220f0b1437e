"""The workshop proxy (deploy/proxy.sh: HAProxy with deploy/haproxy.cfg, HTTPS) on free loopback ports.

Benchmarks and tests run the same script and configuration a workshop runs, in front of replicas
on this machine; the assembled configuration and self-signed certificate go next to the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.harness.load_client import LOOPBACK, SessionError, http_get
from tests.harness.paths import REPO_ROOT
from tests.harness.server import free_port


@contextlib.contextmanager
def workshop_proxy(replica_ports: Sequence[int], log: Path) -> Iterator[int]:
    """deploy/proxy.sh in front of the replicas on these ports; yields its HTTPS port.

    proxy.sh names the replicas app1, app2, ... in this order, which is also the value of the
    affinity cookie (LAB_REPLICA) that sends a browser back to its replica.
    """
    https_port, http_port = free_port(), free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "LAB_PORT": str(https_port),
        "LAB_HTTP_PORT": str(http_port),
        "LAB_RUN_DIR": str(log.parent / f"{log.stem}-run"),
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "deploy/proxy.sh", *(f"{LOOPBACK}:{port}" for port in replica_ports)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        _wait_for_proxy(https_port, process)
        yield https_port
    finally:
        process.terminate()
        process.wait(timeout=15)


def _wait_for_proxy(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError, SessionError, TimeoutError):
            status, _ = asyncio.run(http_get(port, "/_stcore/health", timeout_s=2, tls=True))
            if status == 200:
                return
        time.sleep(0.5)
    raise RuntimeError(f"the proxy did not answer on port {port} (exit code {process.poll()})")
