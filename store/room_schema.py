"""The tables of workshop rooms: rooms, who joined which, and which questions are revealed.

`rooms_migration` is the store's second migration (see `store.migrations`); the SQLAlchemy
tables below describe what it creates for the queries of `store.rooms`.
"""

from __future__ import annotations

import sqlalchemy as sa

from store.schema import ID, NAME, TIME, metadata

CODE = sa.String(8)
DISPLAY_NAME = sa.String(40)

_DDL = """
CREATE TABLE rooms (
    code VARCHAR(8) PRIMARY KEY,
    created_at {time} NOT NULL,
    expires_at {time} NOT NULL,
    closed BOOLEAN NOT NULL DEFAULT FALSE,
    capacity INTEGER NOT NULL CHECK (capacity > 0)
);
CREATE TABLE memberships (
    room_code VARCHAR(8) NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
    learner_id VARCHAR(64) NOT NULL REFERENCES learners (id) ON DELETE CASCADE,
    display_name VARCHAR(40),
    joined_at {time} NOT NULL,
    PRIMARY KEY (room_code, learner_id)
);
CREATE INDEX memberships_learner ON memberships (learner_id, joined_at);
CREATE TABLE reveals (
    room_code VARCHAR(8) NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
    question_id VARCHAR(80) NOT NULL,
    PRIMARY KEY (room_code, question_id)
)
"""
_TIME = {"sqlite": "TIMESTAMP", "postgresql": "TIMESTAMP WITH TIME ZONE"}


def rooms_migration(dialect: str) -> list[str]:
    """Rooms, memberships (with an optional display name of at most 40 characters) and reveals."""
    return [statement.strip() for statement in _DDL.format(time=_TIME[dialect]).split(";")]


rooms = sa.Table(
    "rooms",
    metadata,
    sa.Column("code", CODE, primary_key=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("expires_at", TIME, nullable=False),
    sa.Column("closed", sa.Boolean, nullable=False),
    sa.Column("capacity", sa.Integer, nullable=False),
)

memberships = sa.Table(
    "memberships",
    metadata,
    sa.Column("room_code", CODE, sa.ForeignKey("rooms.code", ondelete="CASCADE"), primary_key=True),
    sa.Column("learner_id", ID, sa.ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("display_name", DISPLAY_NAME),
    sa.Column("joined_at", TIME, nullable=False),
)

reveals = sa.Table(
    "reveals",
    metadata,
    sa.Column("room_code", CODE, sa.ForeignKey("rooms.code", ondelete="CASCADE"), primary_key=True),
    sa.Column("question_id", NAME, primary_key=True),
)
