"""Ordered schema migrations, applied once each and recorded in `schema_version`.

A later release changes the schema by appending a function to `MIGRATIONS`; existing ones never
change, so a store created by any release can be brought up to date without losing data.
Each migration returns SQL for one dialect ("sqlite" or "postgresql").
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa

from store.guard_schema import guards_migration
from store.room_schema import rooms_migration
from store.schema import schema_version

# Any fixed number: every replica takes this advisory lock before migrating PostgreSQL.
_PG_MIGRATION_LOCK = 1_572_015

_TABLES = """
CREATE TABLE learners (
    id VARCHAR(64) PRIMARY KEY,
    resume_code VARCHAR(32) NOT NULL UNIQUE,
    created_at {time} NOT NULL,
    updated_at {time} NOT NULL
);
CREATE INDEX learners_updated_at ON learners (updated_at);
CREATE TABLE answers (
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    question_id VARCHAR(80) NOT NULL,
    option_id VARCHAR(80) NOT NULL,
    created_at {time} NOT NULL,
    PRIMARY KEY (learner_id, question_id)
);
CREATE TABLE predictions (
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    part VARCHAR(80) NOT NULL,
    option_id VARCHAR(80) NOT NULL,
    created_at {time} NOT NULL,
    PRIMARY KEY (learner_id, part)
);
CREATE TABLE settings (
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    section VARCHAR(80) NOT NULL,
    "values" {json} NOT NULL,
    updated_at {time} NOT NULL,
    PRIMARY KEY (learner_id, section)
);
CREATE TABLE records (
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    name VARCHAR(80) NOT NULL,
    value {json} NOT NULL,
    updated_at {time} NOT NULL,
    PRIMARY KEY (learner_id, name)
);
CREATE TABLE hand_ins (
    learner_id VARCHAR(64) PRIMARY KEY REFERENCES learners (id) ON DELETE CASCADE,
    handed_in_at VARCHAR(40) NOT NULL,
    created_at {time} NOT NULL
)
"""

_TYPES = {
    "sqlite": {"time": "TIMESTAMP", "json": "JSON"},
    "postgresql": {"time": "TIMESTAMP WITH TIME ZONE", "json": "JSONB"},
}

# The locks, as (table, event, when): "always" refuses every such change, "learner" refuses it
# while the learner exists (so deleting a whole learner, the retention path, still cascades),
# "handed_in" refuses it once the learner has handed in.
_LOCKS = (
    ("answers", "UPDATE", "always"),
    ("answers", "DELETE", "learner"),
    ("answers", "INSERT", "handed_in"),
    ("predictions", "UPDATE", "always"),
    ("predictions", "DELETE", "learner"),
    ("predictions", "INSERT", "handed_in"),
    ("settings", "INSERT", "handed_in"),
    ("settings", "UPDATE", "handed_in"),
    ("settings", "DELETE", "learner"),
    ("records", "INSERT", "handed_in"),
    ("records", "UPDATE", "handed_in"),
    ("records", "DELETE", "learner"),
    ("hand_ins", "UPDATE", "always"),
    ("hand_ins", "DELETE", "learner"),
)
_MESSAGE = "lab store: {table} rows are locked against {event}"


def _sqlite_condition(event: str, when: str) -> str:
    row = "OLD" if event == "DELETE" else "NEW"
    if when == "learner":
        return f" WHEN EXISTS (SELECT 1 FROM learners WHERE id = {row}.learner_id)"
    if when == "handed_in":
        return f" WHEN EXISTS (SELECT 1 FROM hand_ins WHERE learner_id = {row}.learner_id)"
    return ""


def _sqlite_trigger(name: str, table: str, event: str, condition: str, message: str) -> str:
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW"
        f"{condition} BEGIN SELECT RAISE(ABORT, '{message}'); END"
    )


def _sqlite_locks(locks: tuple[tuple[str, str, str], ...] = _LOCKS) -> list[str]:
    return [
        _sqlite_trigger(
            f"{table}_lock_{event.lower()}",
            table,
            event,
            _sqlite_condition(event, when),
            _MESSAGE.format(table=table, event=event),
        )
        for table, event, when in locks
    ]


# One trigger function per kind of lock; the refusal message comes in as the trigger's argument.
# SQLSTATE 23000 makes the driver report it as an integrity error, like a broken constraint.
_PG_FUNCTIONS = {
    "always": "RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = '23000';",
    "learner": """IF EXISTS (SELECT 1 FROM learners WHERE id = OLD.learner_id) THEN
        RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = '23000';
    END IF;
    RETURN OLD;""",
    "handed_in": """IF EXISTS (SELECT 1 FROM hand_ins WHERE learner_id = NEW.learner_id) THEN
        RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = '23000';
    END IF;
    RETURN NEW;""",
}


def _pg_function(when: str, body: str) -> str:
    return (
        f"CREATE FUNCTION lab_refuse_{when}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        f"BEGIN\n    {body}\nEND\n$$"
    )


def _pg_trigger(name: str, table: str, event: str, when: str, message: str) -> str:
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW "
        f"EXECUTE FUNCTION lab_refuse_{when}('{message}')"
    )


def _pg_triggers(locks: tuple[tuple[str, str, str], ...]) -> list[str]:
    return [
        _pg_trigger(
            f"{table}_lock_{event.lower()}", table, event, when, _MESSAGE.format(table=table, event=event)
        )
        for table, event, when in locks
    ]


def _pg_locks() -> list[str]:
    functions = [_pg_function(when, body) for when, body in _PG_FUNCTIONS.items()]
    return functions + _pg_triggers(_LOCKS)


def _record_guard(dialect: str, name: str, condition: str, pg_body: str, message: str) -> list[str]:
    """Triggers refusing a record that belongs in a locked table of its own: on SQLite `condition` is
    the SQL test of NEW; on PostgreSQL it names the trigger function created from `pg_body`."""
    if dialect == "postgresql":
        triggers = [
            _pg_trigger(f"records_{name}_{event.lower()}", "records", event, condition, message)
            for event in ("INSERT", "UPDATE")
        ]
        return [_pg_function(condition, pg_body), *triggers]
    return [
        _sqlite_trigger(f"records_{name}_{event.lower()}", "records", event, f" WHEN {condition}", message)
        for event in ("INSERT", "UPDATE")
    ]


def _v1_learner_record(dialect: str) -> list[str]:
    """Learners, their answers, predictions, settings, records and hand-in, with the locks."""
    tables = [s.strip() for s in _TABLES.format(**_TYPES[dialect]).split(";")]
    return tables + (_pg_locks() if dialect == "postgresql" else _sqlite_locks())


_LESSON_PREDICTIONS = """
CREATE TABLE lesson_predictions (
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    prediction_id VARCHAR(80) NOT NULL,
    choice VARCHAR(80) NOT NULL,
    actual VARCHAR(80) NOT NULL,
    created_at {time} NOT NULL,
    PRIMARY KEY (learner_id, prediction_id)
);
INSERT INTO lesson_predictions (learner_id, prediction_id, choice, actual, created_at)
SELECT learner_id, substr(name, 9), {choice}, {actual}, updated_at FROM records
WHERE substr(name, 1, 8) = 'predict.' AND {choice} IS NOT NULL AND {actual} IS NOT NULL
"""
# A stored lesson prediction's two fields, read only when they are strings (records hold any JSON).
_FIELD = {
    "sqlite": "CASE json_type(value, '$.{name}') WHEN 'text' THEN json_extract(value, '$.{name}') END",
    "postgresql": "CASE jsonb_typeof(value -> '{name}') WHEN 'string' THEN value ->> '{name}' END",
}
_FROM_RECORDS = "DELETE FROM records WHERE substr(name, 1, 8) = 'predict.'"
_LESSON_LOCKS = (
    ("lesson_predictions", "UPDATE", "always"),
    ("lesson_predictions", "DELETE", "learner"),
    ("lesson_predictions", "INSERT", "handed_in"),
)
# Once they have their own table, a lesson prediction written as a record would dodge its lock.
_NOT_A_RECORD = "lab store: lesson predictions are locked in lesson_predictions, not kept as records"
_PG_NOT_A_RECORD = """IF substr(NEW.name, 1, 8) = 'predict.' THEN
        RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = '23000';
    END IF;
    RETURN NEW;"""


def _v3_lesson_predictions(dialect: str) -> list[str]:
    """Lesson predictions (`predict.<id>` records) move to their own table, locked like answers."""
    fields = {name: _FIELD[dialect].format(name=name) for name in ("choice", "actual")}
    moved = [s.strip() for s in _LESSON_PREDICTIONS.format(time=_TYPES[dialect]["time"], **fields).split(";")]
    if dialect == "postgresql":
        return [
            *moved,
            # The version 1 lock keeps records from being deleted; this move is the one exception.
            "ALTER TABLE records DISABLE TRIGGER records_lock_delete",
            _FROM_RECORDS,
            "ALTER TABLE records ENABLE TRIGGER records_lock_delete",
            *_pg_triggers(_LESSON_LOCKS),
            *_record_guard("postgresql", "guard", "lesson_record", _PG_NOT_A_RECORD, _NOT_A_RECORD),
        ]
    return [
        *moved,
        "DROP TRIGGER records_lock_delete",
        _FROM_RECORDS,
        *_sqlite_locks((("records", "DELETE", "learner"),)),
        *_sqlite_locks(_LESSON_LOCKS),
        *_record_guard("sqlite", "guard", "substr(NEW.name, 1, 8) = 'predict.'", "", _NOT_A_RECORD),
    ]


_PREDICTION_TRACKS = """
CREATE TABLE prediction_tracks (
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    part VARCHAR(80) NOT NULL,
    track VARCHAR(80) NOT NULL,
    created_at {time} NOT NULL,
    PRIMARY KEY (learner_id, part)
)
"""
_TRACK_LOCKS = (
    ("prediction_tracks", "UPDATE", "always"),
    ("prediction_tracks", "DELETE", "learner"),
    ("prediction_tracks", "INSERT", "handed_in"),
)
# The track a Scaling prediction was locked on decides how it is graded, so it is locked with it; kept
# as a record it could be replaced afterwards.
_TRACKS_NOT_A_RECORD = "lab store: prediction tracks are locked in prediction_tracks, not kept as records"
_PG_TRACKS_NOT_A_RECORD = """IF NEW.name = 'scaling.prediction_tracks' THEN
        RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = '23000';
    END IF;
    RETURN NEW;"""


def _v4_prediction_tracks(dialect: str) -> list[str]:
    """The track each Scaling prediction was locked on, in its own table, locked like the prediction."""
    table = _PREDICTION_TRACKS.format(time=_TYPES[dialect]["time"]).strip()
    if dialect == "postgresql":
        guard = _record_guard(
            dialect, "track_guard", "track_record", _PG_TRACKS_NOT_A_RECORD, _TRACKS_NOT_A_RECORD
        )
        return [table, *_pg_triggers(_TRACK_LOCKS), *guard]
    guard = _record_guard(
        dialect, "track_guard", "NEW.name = 'scaling.prediction_tracks'", "", _TRACKS_NOT_A_RECORD
    )
    return [table, *_sqlite_locks(_TRACK_LOCKS), *guard]


# Each table of a learner's work, and the column saying when a row was written.
_WORK_TABLES = (
    ("answers", "created_at"),
    ("predictions", "created_at"),
    ("prediction_tracks", "created_at"),
    ("lesson_predictions", "created_at"),
    ("settings", "updated_at"),
    ("records", "updated_at"),
    ("hand_ins", "created_at"),
)
_PG_TOUCH = """CREATE FUNCTION lab_touch_learner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE learners SET updated_at = now() WHERE id = NEW.learner_id;
    RETURN NULL;
END
$$"""


def _v5_learner_activity(dialect: str) -> list[str]:
    """Every write of a learner's work marks the learner active, in the database itself, so a write can
    be one statement and retention still sees when each learner last saved."""
    if dialect == "postgresql":
        return [
            _PG_TOUCH,
            *(
                f"CREATE TRIGGER {table}_touch AFTER INSERT OR UPDATE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION lab_touch_learner()"
                for table, _ in _WORK_TABLES
            ),
        ]
    return [
        f"CREATE TRIGGER {table}_touch_{event.lower()} AFTER {event} ON {table} FOR EACH ROW "
        f"BEGIN UPDATE learners SET updated_at = NEW.{column} WHERE id = NEW.learner_id; END"
        for table, column in _WORK_TABLES
        for event in ("INSERT", "UPDATE")
    ]


MIGRATIONS: tuple[Callable[[str], list[str]], ...] = (
    _v1_learner_record,
    rooms_migration,
    _v3_lesson_predictions,
    _v4_prediction_tracks,
    _v5_learner_activity,
    guards_migration,
)


class SchemaTooNew(RuntimeError):
    """The store was migrated by a newer release than this one."""


def current_version(connection: sa.Connection) -> int:
    """The highest migration applied to this store (0 for an empty one)."""
    return connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0


def migrate(engine: sa.Engine) -> int:
    """Apply every migration the store lacks, in order, in one transaction; returns the version."""
    dialect = engine.dialect.name
    with engine.begin() as connection:
        if dialect == "postgresql":
            # Two replicas starting together: the second waits, then finds nothing left to do.
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        schema_version.create(connection, checkfirst=True)
        version = current_version(connection)
        if version > len(MIGRATIONS):
            raise SchemaTooNew(
                f"The store is at schema version {version}; "
                f"this release knows only {len(MIGRATIONS)}. Run the newer release."
            )
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in migration(dialect):
                connection.exec_driver_sql(statement)
            connection.execute(sa.insert(schema_version).values(version=number, applied_at=datetime.now(UTC)))
    return len(MIGRATIONS)
