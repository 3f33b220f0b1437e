"""Fixtures for the whole suite: a private data folder, and a real PostgreSQL server on demand.

The app's embedded store goes to a temporary folder for the test session, so tests never touch a
developer's `.lab-data/`. PostgreSQL is started from Debian's binaries on a free loopback port;
PostgreSQL refuses to run as root, so under root (as in CI) it runs as the `postgres` user the
Debian package creates. Where PostgreSQL is missing the tests that need it skip, saying why,
except under CI=true, where they fail: `.ci/run` installs it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import configuration, settings

from tests.harness.postgres import USER as PG_USER
from tests.harness.postgres import postgres_server, run_as, server_bindir

_DATA_DIR = tempfile.mkdtemp(prefix="lab-test-data-")
_E2E_DIR = Path(__file__).parent / "e2e"
os.environ["LAB_DATA_DIR"] = _DATA_DIR
os.environ.pop("LAB_DATABASE_URL", None)  # never write into a developer's own database

# Hypothesis keeps its example database and caches in ./.hypothesis by default, which would put
# them in the checkout. Keep them in the user's cache folder instead (failures still replay).
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
configuration.set_hypothesis_home_dir(_CACHE / "reading-a-training-run" / "hypothesis")
# Tests never judge speed: a 2-core CI machine running the browser tests beside these would
# otherwise fail an example for being slow, not for being wrong.
settings.register_profile("lab", deadline=None)
settings.load_profile("lab")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_DATA_DIR, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests last, in whatever order the paths were given: Playwright's session-wide browser
    keeps an event loop running in the main thread, and a later test's `asyncio.run` would refuse it.
    pytest-xdist hands each worker its tests in this order, so they come last on every worker too."""
    items.sort(key=lambda item: Path(item.path).is_relative_to(_E2E_DIR))  # a stable sort keeps the rest


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} CI must run the PostgreSQL tests: .ci/run installs Debian's postgresql.")
    pytest.skip(reason)


@dataclass(frozen=True)
class PostgresServer:
    """A running PostgreSQL server: its port and how to run its client tools."""

    port: int
    bindir: Path
    as_user: tuple[str, ...]

    def url(self, database: str = "postgres") -> str:
        """The URL of one database on this server."""
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str) -> None:
        """Run one SQL command as the superuser."""
        command = [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER]
        subprocess.run([*command, "-d", "postgres", "-qAt", "-c", sql], check=True, capture_output=True)

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        name = f"lab_{uuid.uuid4().hex[:12]}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)


def _run_as() -> tuple[str, ...]:
    """The command prefix that runs PostgreSQL's tools as a user it accepts."""
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(PG_USER)
        except KeyError:
            _missing(f"PostgreSQL refuses to run as root and there is no '{PG_USER}' user to run it as.")
    return run_as()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of our own for this test session, stopped and removed afterwards."""
    bindir = server_bindir()
    if bindir is None:
        _missing("PostgreSQL's server binaries (initdb, pg_ctl) are not installed.")
    assert bindir is not None
    as_user = _run_as()
    with postgres_server(bindir, as_user, "full_page_writes=off") as port:
        yield PostgresServer(port=port, bindir=bindir, as_user=as_user)
