"""The tables of the learner store, as SQLAlchemy Core objects the queries are written against.

The tables themselves are created by `store.migrations`; this module only describes them.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

ID = sa.String(64)
NAME = sa.String(80)
TIME = sa.DateTime(timezone=True)


def _learner_fk() -> sa.Column[str]:
    return sa.Column("learner_id", ID, sa.ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True)


learners = sa.Table(
    "learners",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("resume_code", sa.String(32), nullable=False, unique=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)


def _first_choice(name: str, key: str) -> sa.Table:
    """One option chosen per learner and `key`, once: insert-only."""
    return sa.Table(
        name,
        metadata,
        _learner_fk(),
        sa.Column(key, NAME, primary_key=True),
        sa.Column("option_id", NAME, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
    )


def _latest_value(name: str, key: str, value: str) -> sa.Table:
    """One JSON value per learner and `key`, replaced as it changes until the hand-in."""
    return sa.Table(
        name,
        metadata,
        _learner_fk(),
        sa.Column(key, NAME, primary_key=True),
        sa.Column(value, sa.JSON, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
    )


answers = _first_choice("answers", "question_id")  # a marked question's first answer
predictions = _first_choice("predictions", "part")  # a scaling part's first prediction
# The track each of those predictions was locked on (record `scaling.prediction_tracks`).
prediction_tracks = sa.Table(
    "prediction_tracks",
    metadata,
    _learner_fk(),
    sa.Column("part", NAME, primary_key=True),
    sa.Column("track", NAME, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)
# A lesson prediction's first guess and the outcome the page showed then (records `predict.<id>`).
lesson_predictions = sa.Table(
    "lesson_predictions",
    metadata,
    _learner_fk(),
    sa.Column("prediction_id", NAME, primary_key=True),
    sa.Column("choice", NAME, nullable=False),
    sa.Column("actual", NAME, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)
settings = _latest_value("settings", "section", "values")  # one page section's settings
records = _latest_value("records", "name", "value")  # a form or written text

hand_ins = sa.Table(
    "hand_ins",
    metadata,
    _learner_fk(),
    sa.Column("handed_in_at", sa.String(40), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("applied_at", TIME, nullable=False),
)
