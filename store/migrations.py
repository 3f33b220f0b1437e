"""Ordered schema migrations, applied once each and recorded in `schema_version`.

A later release changes the schema by appending a function to `MIGRATIONS`; existing ones never
change, so a store created by any release can be brought up to date without losing data.
Each migration returns SQL for one dialect ("sqlite" or "postgresql").
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa

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


def _sqlite_locks() -> list[str]:
    return [
        f"CREATE TRIGGER {table}_lock_{event.lower()} BEFORE {event} ON {table} FOR EACH ROW"
        f"{_sqlite_condition(event, when)} BEGIN SELECT RAISE(ABORT, "
        f"'{_MESSAGE.format(table=table, event=event)}'); END"
        for table, event, when in _LOCKS
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


def _pg_locks() -> list[str]:
    functions = [
        f"CREATE FUNCTION lab_refuse_{when}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        f"BEGIN\n    {body}\nEND\n$$"
        for when, body in _PG_FUNCTIONS.items()
    ]
    triggers = [
        f"CREATE TRIGGER {table}_lock_{event.lower()} BEFORE {event} ON {table} FOR EACH ROW "
        f"EXECUTE FUNCTION lab_refuse_{when}('{_MESSAGE.format(table=table, event=event)}')"
        for table, event, when in _LOCKS
    ]
    return functions + triggers


def _v1_learner_record(dialect: str) -> list[str]:
    """Learners, their answers, predictions, settings, records and hand-in, with the locks."""
    tables = [s.strip() for s in _TABLES.format(**_TYPES[dialect]).split(";")]
    return tables + (_pg_locks() if dialect == "postgresql" else _sqlite_locks())


MIGRATIONS: tuple[Callable[[str], list[str]], ...] = (_v1_learner_record, rooms_migration)


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
