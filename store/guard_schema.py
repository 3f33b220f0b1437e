"""The tables of the lab's guards: installation secrets and counts of failed attempts.

`guards_migration` is the store's sixth migration (see `store.migrations`); the SQLAlchemy tables
below describe what it creates for the queries of `store.guards`.
"""

from __future__ import annotations

import sqlalchemy as sa

from store.schema import TIME, metadata

SCOPE_CHARS = 120

_DDL = """
CREATE TABLE installation_secrets (
    name VARCHAR(40) PRIMARY KEY,
    value VARCHAR(128) NOT NULL,
    created_at {time} NOT NULL
);
CREATE TABLE failed_attempts (
    scope VARCHAR(120) PRIMARY KEY,
    failures INTEGER NOT NULL CHECK (failures > 0),
    last_failed_s {float} NOT NULL
);
CREATE INDEX failed_attempts_last ON failed_attempts (last_failed_s)
"""
_TYPES = {
    "sqlite": {"time": "TIMESTAMP", "float": "REAL"},
    "postgresql": {"time": "TIMESTAMP WITH TIME ZONE", "float": "DOUBLE PRECISION"},
}


def guards_migration(dialect: str) -> list[str]:
    """Installation secrets (the default signing key) and failed-attempt counts shared by replicas."""
    return [statement.strip() for statement in _DDL.format(**_TYPES[dialect]).split(";")]


installation_secrets = sa.Table(
    "installation_secrets",
    metadata,
    sa.Column("name", sa.String(40), primary_key=True),
    sa.Column("value", sa.String(128), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

failed_attempts = sa.Table(
    "failed_attempts",
    metadata,
    sa.Column("scope", sa.String(SCOPE_CHARS), primary_key=True),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("last_failed_s", sa.Float, nullable=False),  # seconds since the epoch, as time.time()
)
