"""How the store talks to its database on a learner's clicks, on SQLite and PostgreSQL: a setting, a
first visit's defaults or an answer is one statement (one round trip), the database merges and marks
the learner active itself, reads never take SQLite's write lock, and a connection the database dropped
is replaced without the learner noticing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from store import LearnerStore, Refused, StoreUnavailable
from store import engine as store_engine
from store.rooms import RoomStore

REPO_ROOT = Path(__file__).resolve().parents[2]

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)
EMPTY: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}


@contextmanager
def statements(store: LearnerStore) -> Iterator[list[str]]:
    """Every SQL statement the store sends inside the block, BEGIN and COMMIT included."""
    sent: list[str] = []

    def cursor(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement.split()[0].upper())

    def commit(conn: Any) -> None:
        sent.append("COMMIT")

    sa.event.listen(store.engine, "before_cursor_execute", cursor)
    sa.event.listen(store.engine, "commit", commit)
    try:
        yield sent
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", cursor)
        sa.event.remove(store.engine, "commit", commit)


def test_a_click_is_one_statement_to_the_database(store: LearnerStore) -> None:
    learner = store.new_learner().id
    with statements(store) as sent:
        store.put_setting(learner, "linear", "batch", 64)
    assert sent == ["INSERT"]
    with statements(store) as sent:
        store.put_settings_if_absent(learner, "memory", {"batch": 8, "seq": 2048})
    assert sent == ["INSERT"]
    with statements(store) as sent:
        assert store.add_answer(learner, "r1", "mem") is True
    assert sent == ["INSERT"]


@contextmanager
def compiled(store: LearnerStore) -> Iterator[list[Any]]:
    """SQLAlchemy's compiled form of every statement the store sends inside the block."""
    sent: list[Any] = []

    def cursor(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, *args: Any) -> None:
        sent.append(context.compiled)

    sa.event.listen(store.engine, "before_cursor_execute", cursor)
    try:
        yield sent
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", cursor)


REPEATED_WRITES = {
    "setting": lambda store, learner, n: store.put_setting(learner, "linear", "batch", n),
    "defaults": lambda store, learner, n: store.put_settings_if_absent(learner, f"s{n}", {"batch": 8}),
    "section": lambda store, learner, n: store.put_settings(learner, "memory", {"batch": n}),
    "answer": lambda store, learner, n: store.add_answer(learner, f"r{n}", "mem"),
    "record": lambda store, learner, n: store.put_record(learner, "run_a.reflection", {"text": str(n)}),
    "first visit": lambda store, learner, n: store.open_record(
        learner, {**EMPTY, "settings": {"memory": {"batch": n}}}, shown={"linear": {"batch": n}}
    ),
    "new learner": lambda store, learner, n: store.new_learner(),
}


@pytest.mark.parametrize("write", REPEATED_WRITES.values(), ids=REPEATED_WRITES)
def test_a_repeated_write_reuses_the_statement_compiled_for_the_last(store: LearnerStore, write: Any) -> None:
    # SQLAlchemy keeps no upsert in its statement cache of its own; compiling one on every click took
    # 40% to 70% of a write's CPU (bench/store_writes.py).
    learner = store.new_learner().id
    with compiled(store) as first:
        write(store, learner, 1)
    with compiled(store) as second:
        write(store, learner, 2)
    assert first and len(second) == len(first)
    assert all(then is now for then, now in zip(first, second, strict=True))


def test_the_database_lays_one_setting_over_what_another_tab_stored(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_settings(learner, "linear", {"batch": 8, "dtype": "bf16"})
    assert store.put_setting(learner, "linear", "batch", 64) == {"batch": 64, "dtype": "bf16"}
    assert store.put_setting(learner, "linear", "ok", False) == {"batch": 64, "dtype": "bf16", "ok": False}
    assert store.put_setting(learner, "new", "rate", 0.5) == {"rate": 0.5}
    assert store.load(learner)["settings"] == {
        "linear": {"batch": 64, "dtype": "bf16", "ok": False},
        "new": {"rate": 0.5},
    }


def test_a_first_visit_s_defaults_never_replace_what_is_stored(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_setting(learner, "memory", "batch", 32)
    assert store.put_settings_if_absent(learner, "memory", {"batch": 8, "seq": 2048}) == {
        "batch": 32,
        "seq": 2048,
    }
    assert store.load(learner)["settings"] == {"memory": {"batch": 32, "seq": 2048}}


@pytest.mark.parametrize("value", [None, [1, 2], {"a": 1}])
def test_a_setting_is_a_plain_value(store: LearnerStore, value: Any) -> None:
    learner = store.new_learner().id
    with pytest.raises(ValueError, match="text, a number, or true or false"):
        store.put_setting(learner, "linear", "batch", value)
    with pytest.raises(ValueError, match="text, a number, or true or false"):
        store.put_settings(learner, "linear", {"batch": value})
    assert store.load(learner)["settings"] == {}


def test_after_the_hand_in_a_one_statement_write_is_still_refused(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_setting(learner, "linear", "batch", 8)
    assert store.hand_in(learner, "2026-12-01T10:00:00+00:00") is True
    with pytest.raises(Refused):
        store.put_setting(learner, "linear", "batch", 64)
    with pytest.raises(Refused):
        store.put_settings_if_absent(learner, "memory", {"batch": 8})
    assert store.add_answer(learner, "r1", "mem") is False
    assert store.load(learner)["settings"] == {"linear": {"batch": 8}}


def _age(store: LearnerStore, learner: str) -> None:
    with store.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE learners SET updated_at = :t WHERE id = :id"), {"t": LONG_AGO, "id": learner}
        )


@pytest.mark.parametrize(
    "write",
    [
        lambda store, learner: store.put_setting(learner, "linear", "batch", 64),
        lambda store, learner: store.put_settings_if_absent(learner, "linear", {"batch": 8}),
        lambda store, learner: store.add_answer(learner, "r1", "mem"),
        lambda store, learner: store.put_record(learner, "run_a.reflection", {"text": "hi"}),
    ],
    ids=["setting", "defaults", "answer", "record"],
)
def test_every_write_marks_the_learner_active_for_retention(store: LearnerStore, write: Any) -> None:
    learner, idle = store.new_learner().id, store.new_learner().id
    _age(store, learner)
    _age(store, idle)
    write(store, learner)
    removed = store.remove_idle(before=LONG_AGO + timedelta(days=1))
    assert [r.learner_id for r in removed] == [idle]
    assert store.load(learner) != store.load(idle)


def test_a_click_after_retention_removed_the_learner_brings_them_back(store: LearnerStore) -> None:
    learner = store.new_learner().id
    _age(store, learner)
    store.remove_idle(before=LONG_AGO + timedelta(days=1))
    assert store.put_setting(learner, "linear", "batch", 64) == {"batch": 64}
    assert store.add_answer(learner, "r1", "mem") is True
    assert store.load(learner)["answers"] == {"r1": "mem"}
    assert store.load(learner)["settings"] == {"linear": {"batch": 64}}


def test_reads_never_wait_for_sqlite_s_write_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A read that asked for the write lock would wait this long and then fail.
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "learners.sqlite3"
    store = LearnerStore.open(f"sqlite:///{path}")
    learner = store.new_learner().id
    store.put_setting(learner, "linear", "batch", 64)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        assert store.load(learner)["settings"] == {"linear": {"batch": 64}}
        assert RoomStore(store).membership(learner) is None
        with pytest.raises(StoreUnavailable):
            store.put_setting(learner, "linear", "batch", 8)  # a write does wait, and says so
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_sqlite_syncs_at_checkpoints_not_on_every_click(tmp_path: Path) -> None:
    store = LearnerStore.open(f"sqlite:///{tmp_path / 'learners.sqlite3'}")
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL


# Writes a click, says so, and waits to be killed: no clean shutdown, no pool disposed.
_KILLED_WRITER = """
import sys, time
from store import LearnerStore
store = LearnerStore.open(sys.argv[1])
learner = store.new_learner().id
store.put_setting(learner, "linear", "batch", 64)
assert store.add_answer(learner, "r1", "mem")
print(learner, flush=True)
time.sleep(60)
"""


def test_a_click_outlives_the_app_s_process_killed_right_after(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'learners.sqlite3'}"
    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, url], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    try:
        assert writer.stdout is not None
        learner = writer.stdout.readline().strip()
    finally:
        writer.kill()
        writer.wait()
    assert learner, "the writer process ended before it wrote"
    stored = LearnerStore.open(url).load(learner)
    assert stored["settings"] == {"linear": {"batch": 64}} and stored["answers"] == {"r1": "mem"}


def test_connections_the_database_dropped_are_replaced_unnoticed(postgres: Any) -> None:
    url = postgres.new_database()
    store = LearnerStore.open(url)
    learner = store.new_learner().id
    with store.engine.connect() as held, store.engine.connect() as other:
        pids = [c.exec_driver_sql("SELECT pg_backend_pid()").scalar() for c in (held, other)]
    # What a restart of the database does to the pool's idle connections.
    postgres.psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN {tuple(pids)}")
    assert store.put_setting(learner, "linear", "batch", 64) == {"batch": 64}
    assert store.load(learner)["settings"] == {"linear": {"batch": 64}}
    assert store.add_answer(learner, "r1", "mem") is True


def test_a_process_s_writers_take_turns_without_sqlite_s_busy_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no busy timeout at all, a writer SQLite had to turn away would fail at once.
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_S", 0)
    store = LearnerStore.open(f"sqlite:///{tmp_path / 'learners.sqlite3'}")
    learners = [store.new_learner().id for _ in range(8)]

    def clicks(learner: str) -> None:
        for batch in range(20):
            store.put_setting(learner, "linear", "batch", batch)
            store.add_answer(learner, f"q{batch}", "a")
            store.merge(learner, {**EMPTY, "records": {"r": batch}})

    with ThreadPoolExecutor(max_workers=len(learners)) as pool:
        list(pool.map(clicks, learners))
    for learner in learners:
        stored = store.load(learner)
        assert stored["settings"] == {"linear": {"batch": 19}} and len(stored["answers"]) == 20


def test_a_first_load_lays_shown_settings_under_the_record_and_changed_ones_over_it(
    store: LearnerStore,
) -> None:
    learner = store.new_learner()
    store.put_settings(learner.id, "memory", {"batch": 32, "seq": 4096})
    store.add_answer(learner.id, "r1", "mem")
    work = {**EMPTY, "answers": {"r1": "speed", "r2": "nan"}, "settings": {"memory": {"gpu": "A100"}}}
    shown: dict[str, dict[str, Any]] = {
        "memory": {"batch": 8, "seq": 2048, "dtype": "bf16"},
        "linear": {"batch": 1},
    }
    with statements(store) as sent:
        stored, code = store.open_record(learner.id, work, shown=shown)
    assert code == learner.resume_code
    assert stored["answers"] == {"r1": "mem", "r2": "nan"}  # the stored first answer wins
    assert stored["settings"] == {
        "memory": {"batch": 32, "seq": 4096, "dtype": "bf16", "gpu": "A100"},
        "linear": {"batch": 1},
    }
    assert stored == store.load(learner.id)
    assert sent.count("BEGIN") <= 1 and sent.count("COMMIT") == 1  # one transaction


def test_a_first_load_after_the_hand_in_writes_nothing(store: LearnerStore) -> None:
    learner = store.new_learner()
    store.put_setting(learner.id, "memory", "batch", 32)
    store.hand_in(learner.id, "2026-12-01T10:00:00+00:00")
    work = {**EMPTY, "answers": {"r1": "mem"}, "settings": {"memory": {"batch": 64}}}
    stored, code = store.open_record(learner.id, work, shown={"linear": {"batch": 1}})
    assert code == learner.resume_code
    assert stored["settings"] == {"memory": {"batch": 32}} and stored["answers"] == {}


def test_a_click_is_one_round_trip_to_postgresql(postgres: Any, tmp_path: Path) -> None:
    # libpq's own trace of what the client sends: one Sync ends each round trip of the extended protocol.
    store = LearnerStore.open(postgres.new_database())
    learner = store.new_learner().id
    pooled = store.engine.raw_connection()  # the pool's one connection, which every call below reuses
    connection: Any = pooled.driver_connection
    pooled.close()
    trace = tmp_path / "libpq.trace"
    with trace.open("w") as sink:
        connection.pgconn.trace(sink.fileno())
        store.put_setting(learner, "linear", "batch", 64)
        store.add_answer(learner, "r1", "mem")
        connection.pgconn.untrace()
    # Each line: when, F (sent) or B (received), length, then the message's type and fields.
    lines = [line.split("\t") for line in trace.read_text().splitlines()]
    sent = [fields[3].split()[0] for fields in lines if fields[1] == "F"]
    assert sent.count("Sync") == 2 and "Query" not in sent  # no BEGIN, COMMIT or ping of their own
