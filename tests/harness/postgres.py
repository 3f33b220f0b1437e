"""A throwaway PostgreSQL server from Debian's binaries, on a free loopback port.

PostgreSQL refuses to run as root, so under root it runs as the `postgres` user Debian's package
creates. The data folder is removed afterwards; fsync is off, since nothing here must survive.
The benchmarks use `temporary_postgres`; the test suite's `postgres` fixture uses `postgres_server`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.harness.load_client import LOOPBACK
from tests.harness.server import free_port

USER = "postgres"


def server_bindir() -> Path | None:
    """The folder of the newest installed PostgreSQL's server binaries (initdb, pg_ctl), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def run_as() -> tuple[str, ...]:
    """The command prefix that runs PostgreSQL's tools as a user it accepts (none unless root)."""
    return ("runuser", "-u", USER, "--") if os.geteuid() == 0 else ()


@contextlib.contextmanager
def postgres_server(bindir: Path, as_user: tuple[str, ...], *settings: str) -> Iterator[int]:
    """Start a server with `settings` ("name=value"); yields its port, stops and removes it afterwards."""
    # Not under pytest's own temporary folder: that one is private to root, and the server may not be.
    base = Path(tempfile.mkdtemp(prefix="lab-pg-"))
    if as_user:
        shutil.chown(base, user=USER)
    data, port = base / "data", free_port()
    options = " ".join([f"-h {LOOPBACK} -p {port} -k {base} -c fsync=off", *(f"-c {s}" for s in settings)])

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, cwd=base)

    run(str(bindir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync")
    run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "server.log"), "-w", "start")
    try:
        yield port
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def temporary_postgres() -> Iterator[str]:
    """Start a server with one empty database; yields its URL, stops and removes it afterwards."""
    bindir = server_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL's server binaries are not installed (apt-get install postgresql).")
    with postgres_server(bindir, run_as(), "max_connections=300") as port:
        yield f"postgresql://{USER}@{LOOPBACK}:{port}/postgres"
