"""Workshop rooms in the learner store: create, close, join with a capacity, reveal, read the class.

Every replica reads and writes the same database, so an instructor on one replica sees learners
working on any other. The capacity holds under concurrent joins: PostgreSQL locks the room's row
while counting (`FOR UPDATE`), and SQLite takes its write lock when the transaction begins.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

import sqlalchemy as sa

from core.rooms import ROOM_CODE_ALPHABET, ROOM_CODE_CHARS, LearnerWork
from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS
from store.engine import reading, writing
from store.learner_store import LearnerStore, _guarded, _insert, reconnecting
from store.room_schema import memberships, reveals, rooms
from store.schema import answers, prediction_tracks, predictions, records, settings


@dataclass(frozen=True)
class Room:
    """One room as stored; open while it is not closed and has not expired."""

    code: str
    created_at: datetime
    expires_at: datetime
    closed: bool
    capacity: int

    def is_open(self, now: datetime) -> bool:
        """Whether learners may still join and work in it."""
        return not self.closed and now < self.expires_at


@dataclass(frozen=True)
class Membership:
    """The room a learner joined last, with the display name they gave (None: anonymous)."""

    room_code: str
    display_name: str | None


class Joined(Enum):
    """What became of a request to join a room."""

    JOINED = "joined"
    ALREADY = "already"
    FULL = "full"
    CLOSED = "closed"
    UNKNOWN = "unknown"


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    # SQLite hands timestamps back without their zone; every one we store is UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _room(row: Any) -> Room:
    return Room(
        code=row.code,
        created_at=_aware(row.created_at),
        expires_at=_aware(row.expires_at),
        closed=bool(row.closed),
        capacity=row.capacity,
    )


def new_room_code() -> str:
    """A fresh room code: six characters a class can read off a projector (about 29 bits)."""
    return "".join(secrets.choice(ROOM_CODE_ALPHABET) for _ in range(ROOM_CODE_CHARS))


class RoomStore:
    """Rooms, memberships and reveals, in the same database as the learners' work."""

    def __init__(self, learners: LearnerStore) -> None:
        self.learners = learners
        self.engine = learners.engine

    @reconnecting
    def create_room(self, *, capacity: int, lifetime: timedelta) -> Room:
        """A new open room that accepts `capacity` learners and expires after `lifetime`."""
        if capacity < 1:
            raise ValueError("A room needs room for at least one learner.")
        if lifetime <= timedelta(0):
            raise ValueError("A room must stay open for some time.")
        now = _now()
        with _guarded(), writing(self.engine) as connection:
            while True:  # a clash among ~600 million codes is rare; try another
                code = new_room_code()
                taken = connection.execute(sa.select(rooms.c.code).where(rooms.c.code == code)).first()
                if taken is None:
                    break
            room = Room(code=code, created_at=now, expires_at=now + lifetime, closed=False, capacity=capacity)
            connection.execute(sa.insert(rooms).values(**vars(room)))
        return room

    @reconnecting
    def room(self, code: str) -> Room | None:
        """The room with this code, or None."""
        with _guarded(), reading(self.engine) as connection:
            row = connection.execute(sa.select(rooms).where(rooms.c.code == code)).first()
        return None if row is None else _room(row)

    @reconnecting
    def close_room(self, code: str) -> None:
        """Close a room: nobody joins any more and learners stop seeing its figures."""
        with _guarded(), writing(self.engine) as connection:
            connection.execute(sa.update(rooms).where(rooms.c.code == code).values(closed=True))

    @reconnecting
    def join(self, code: str, learner_id: str, display_name: str | None) -> Joined:
        """Add a learner to an open room unless it is full; a learner already in it keeps their place."""
        self.learners.learner(learner_id)  # the learner's row, which the membership refers to
        with _guarded(), writing(self.engine) as connection:
            query = sa.select(rooms).where(rooms.c.code == code)
            if connection.dialect.name == "postgresql":
                query = query.with_for_update()  # joins to one room queue here, so the count holds
            row = connection.execute(query).first()
            if row is None:
                return Joined.UNKNOWN
            if not _room(row).is_open(_now()):
                return Joined.CLOSED
            mine = memberships.c.room_code == code
            if connection.execute(
                sa.select(memberships.c.learner_id).where(mine, memberships.c.learner_id == learner_id)
            ).first():
                connection.execute(
                    sa.update(memberships)
                    .where(mine, memberships.c.learner_id == learner_id)
                    .values(display_name=display_name, joined_at=_now())
                )
                return Joined.ALREADY
            if connection.execute(sa.select(sa.func.count()).where(mine)).scalar_one() >= row.capacity:
                return Joined.FULL
            connection.execute(
                _insert(connection, memberships).values(
                    room_code=code, learner_id=learner_id, display_name=display_name, joined_at=_now()
                )
            )
            return Joined.JOINED

    @reconnecting
    def membership(self, learner_id: str) -> Membership | None:
        """The open room this learner joined last, or None."""
        with _guarded(), reading(self.engine) as connection:
            row = connection.execute(
                sa.select(memberships.c.room_code, memberships.c.display_name)
                .join(rooms, rooms.c.code == memberships.c.room_code)
                .where(memberships.c.learner_id == learner_id, ~rooms.c.closed, rooms.c.expires_at > _now())
                .order_by(memberships.c.joined_at.desc())
                .limit(1)
            ).first()
        return None if row is None else Membership(room_code=row.room_code, display_name=row.display_name)

    @reconnecting
    def set_revealed(self, code: str, question_id: str, revealed: bool) -> None:
        """Show (or hide again) a question's class distribution to the room's learners who answered it."""
        with _guarded(), writing(self.engine) as connection:
            if revealed:
                connection.execute(
                    _insert(connection, reveals)
                    .values(room_code=code, question_id=question_id)
                    .on_conflict_do_nothing(index_elements=list(reveals.primary_key.columns))
                )
            else:
                connection.execute(
                    sa.delete(reveals).where(
                        reveals.c.room_code == code, reveals.c.question_id == question_id
                    )
                )

    @reconnecting
    def revealed(self, code: str) -> frozenset[str]:
        """The question ids revealed in this room."""
        with _guarded(), reading(self.engine) as connection:
            found = connection.execute(sa.select(reveals.c.question_id).where(reveals.c.room_code == code))
            return frozenset(found.scalars())

    @reconnecting
    def first_answers(self, code: str, question_id: str) -> list[str]:
        """The options the room's members gave first to one question, one entry per member who answered."""
        with _guarded(), reading(self.engine) as connection:
            found = connection.execute(
                sa.select(answers.c.option_id)
                .join(memberships, memberships.c.learner_id == answers.c.learner_id)
                .where(memberships.c.room_code == code, answers.c.question_id == question_id)
            )
            return list(found.scalars())

    @reconnecting
    def class_work(self, code: str) -> list[LearnerWork]:
        """Every member's stored work, in the order they joined, read in one transaction."""
        with _guarded(), reading(self.engine) as connection, connection.begin():
            members = connection.execute(
                sa.select(memberships.c.learner_id, memberships.c.display_name)
                .where(memberships.c.room_code == code)
                .order_by(memberships.c.joined_at, memberships.c.learner_id)
            ).all()
            ids = sa.select(memberships.c.learner_id).where(memberships.c.room_code == code).scalar_subquery()

            def by_learner(table: sa.Table, key: str, value: str) -> dict[str, dict[str, Any]]:
                found: dict[str, dict[str, Any]] = defaultdict(dict)
                rows = connection.execute(
                    sa.select(table.c.learner_id, table.c[key], table.c[value]).where(
                        table.c.learner_id.in_(ids)
                    )
                )
                for learner_id, name, stored in rows:
                    found[learner_id][name] = stored
                return found

            given = by_learner(answers, "question_id", "option_id")
            kept = by_learner(records, "name", "value")
            locked = by_learner(predictions, "part", "option_id")
            tracks = by_learner(prediction_tracks, "part", "track")
            chosen = by_learner(settings, "section", "values")
        return [
            LearnerWork(
                answers=given.get(member.learner_id, {}),
                records={
                    **kept.get(member.learner_id, {}),
                    PREDICTIONS: locked.get(member.learner_id, {}),
                    PREDICTION_TRACKS: tracks.get(member.learner_id, {}),
                },
                settings=chosen.get(member.learner_id, {}),
                name=member.display_name,
            )
            for member in members
        ]
