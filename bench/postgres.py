"""A throwaway PostgreSQL server for a benchmark, from Debian's binaries, on a free loopback port.

PostgreSQL refuses to run as root, so under root it runs as the `postgres` user Debian's package
creates. The data folder is removed afterwards; fsync is off, since nothing here must survive.
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

from bench.load_client import LOOPBACK
from bench.server import free_port

_USER = "postgres"


@contextlib.contextmanager
def temporary_postgres() -> Iterator[str]:
    """Start a server with one empty database; yields its URL, stops and removes it afterwards."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise RuntimeError("PostgreSQL's server binaries are not installed (apt-get install postgresql).")
    bindir = Path(found[-1]).parent
    as_user = ("runuser", "-u", _USER, "--") if os.geteuid() == 0 else ()
    base = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    if as_user:
        shutil.chown(base, user=_USER)
    data, port = base / "data", free_port()
    options = f"-h {LOOPBACK} -p {port} -k {base} -c fsync=off -c max_connections=300"

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, cwd=base)

    run(str(bindir / "initdb"), "-D", str(data), "-U", _USER, "--auth=trust", "-E", "UTF8", "--no-sync")
    run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start")
    try:
        yield f"postgresql://{_USER}@{LOOPBACK}:{port}/postgres"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)
