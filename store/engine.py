"""Where the store lives and how to connect to it: embedded SQLite by default, PostgreSQL by URL.

The store opens a connection for one of three kinds of work: a write transaction (`writing`), a read
(`reading`), or one statement that is its own transaction (`one_statement`), one round trip to the
database. On SQLite they begin differently, and the writes of one process take turns on a lock of
their own before they ask for SQLite's.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import sqlalchemy as sa

DATA_DIR_ENV = "LAB_DATA_DIR"
DATABASE_URL_ENV = "LAB_DATABASE_URL"
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / ".lab-data"
SQLITE_FILE = "learners.sqlite3"
# How long a connection waits for the database (PostgreSQL connect, SQLite's write lock).
CONNECT_TIMEOUT_S = 5
SQLITE_BUSY_TIMEOUT_S = 15
# The execution option naming a connection's kind of work (a bare `engine.begin()` writes), and how
# SQLite begins each kind.
WORK = "lab_work"
_SQLITE_BEGIN = {
    # Take the write lock up front: a deferred transaction that later needs it fails at once with
    # "database is locked" instead of waiting its turn.
    "write": "BEGIN IMMEDIATE",
    # A snapshot without the write lock: in WAL mode readers and the writer never wait for each other.
    "read": "BEGIN",
    # Nothing: the driver runs in autocommit mode, so the statement commits itself.
    "statement": None,
}


def data_dir() -> Path:
    """The folder of the embedded store: $LAB_DATA_DIR, else `.lab-data/` in the repository."""
    return Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def default_url() -> str:
    """$LAB_DATABASE_URL if set, else the SQLite file in the data folder."""
    return os.environ.get(DATABASE_URL_ENV) or f"sqlite:///{data_dir() / SQLITE_FILE}"


def _postgres_url(url: str) -> str:
    # "postgresql://" alone would pick psycopg2; we ship psycopg 3.
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _sqlite_engine(url: str) -> sa.Engine:
    path = sa.make_url(url).database
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own transaction handling is switched off so that `_on_begin` decides.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
        # A commit reaches the operating system before it returns, so it outlives the app's process;
        # the disk is synced at checkpoints. FULL synced on every click: double a write's CPU and
        # time here (CHANGELOG.md, 2026-12-05). A power cut can take back the last
        # seconds of clicks, never corrupt the file (docs/hosting.md, "The learner store").
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")  # SQLite leaves them off unless asked
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection: sa.Connection) -> None:
        begin = _SQLITE_BEGIN[connection.get_execution_options().get(WORK, "write")]
        if begin is not None:
            connection.exec_driver_sql(begin)

    # SQLite lets one writer in at a time and makes the others retry after sleeps of up to 100 ms, each
    # holding one of the app's few script slots (server/run_slots.py) meanwhile. The process's own writers
    # queue on this lock instead, each let in the moment the one before commits.
    _SQLITE_WRITERS[engine] = threading.Lock()
    return engine


_SQLITE_WRITERS: weakref.WeakKeyDictionary[sa.Engine, threading.Lock] = weakref.WeakKeyDictionary()


def create_engine(url: str) -> sa.Engine:
    """An engine for `url` (sqlite:///path or postgresql://...), set up for this store."""
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    # No ping before each use, which would double every write's round trips: a connection the
    # database dropped fails once, and the store's methods retry on a fresh one (`reconnecting`).
    return sa.create_engine(_postgres_url(url), connect_args={"connect_timeout": CONNECT_TIMEOUT_S})


def _writer_turn(engine: sa.Engine) -> threading.Lock | nullcontext[None]:
    """This process's turn to write to an SQLite file; PostgreSQL locks only the rows it writes."""
    return _SQLITE_WRITERS.get(engine) or nullcontext()


@contextmanager
def writing(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A write transaction, committed when the block ends (rolled back if it raises)."""
    with _writer_turn(engine), engine.begin() as connection:
        yield connection


def reading(engine: sa.Engine) -> sa.Connection:
    """A connection for reads only: on SQLite its transactions take no write lock."""
    return engine.connect().execution_options(**{WORK: "read"})


@contextmanager
def one_statement(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection for a write of one statement that is its own transaction: no BEGIN and no COMMIT to
    wait for, so it is one round trip to the database."""
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            yield connection
        return
    with _writer_turn(engine), engine.connect().execution_options(**{WORK: "statement"}) as connection:
        yield connection
