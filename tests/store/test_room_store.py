"""Workshop rooms on SQLite and PostgreSQL: codes, expiry, closing, capacity under concurrent joins,
reveals, and the class's work read back for the instructor."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from core.rooms import parse_room_code
from store import LearnerStore
from store.rooms import Joined, RoomStore

HOUR = timedelta(hours=1)


@pytest.fixture
def rooms(store: LearnerStore) -> RoomStore:
    return RoomStore(store)


def test_a_new_room_is_open_with_a_readable_code(rooms: RoomStore) -> None:
    room = rooms.create_room(capacity=3, lifetime=HOUR)
    assert parse_room_code(room.code) == room.code
    stored = rooms.room(room.code)
    assert stored == room and stored.is_open(room.created_at)
    assert not stored.is_open(room.expires_at)
    assert rooms.room("ZZZZZZ") is None


@pytest.mark.parametrize(("capacity", "lifetime"), [(0, HOUR), (3, timedelta(0))])
def test_a_room_needs_capacity_and_time(rooms: RoomStore, capacity: int, lifetime: timedelta) -> None:
    with pytest.raises(ValueError):
        rooms.create_room(capacity=capacity, lifetime=lifetime)


def test_joining_is_remembered_with_the_learner(store: LearnerStore, rooms: RoomStore) -> None:
    room = rooms.create_room(capacity=3, lifetime=HOUR)
    learner = store.new_learner().id
    assert rooms.membership(learner) is None
    assert rooms.join(room.code, learner, "Ada") is Joined.JOINED
    assert rooms.join(room.code, learner, None) is Joined.ALREADY  # the name can be dropped again
    member = rooms.membership(learner)
    assert member is not None and (member.room_code, member.display_name) == (room.code, None)
    assert rooms.join("ZZZZZZ", learner, None) is Joined.UNKNOWN


def test_a_closed_or_expired_room_takes_nobody(store: LearnerStore, rooms: RoomStore) -> None:
    closed = rooms.create_room(capacity=3, lifetime=HOUR)
    learner = store.new_learner().id
    rooms.join(closed.code, learner, None)
    rooms.close_room(closed.code)
    assert rooms.join(closed.code, store.new_learner().id, None) is Joined.CLOSED
    assert rooms.membership(learner) is None  # a closed room no longer counts as the learner's room
    expired = rooms.create_room(capacity=3, lifetime=timedelta(microseconds=1))
    assert rooms.join(expired.code, learner, None) is Joined.CLOSED


def test_capacity_holds_under_concurrent_joins(store: LearnerStore, rooms: RoomStore) -> None:
    room = rooms.create_room(capacity=5, lifetime=HOUR)
    learners = [store.new_learner().id for _ in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda learner: rooms.join(room.code, learner, None), learners))
    assert results.count(Joined.JOINED) == 5
    assert results.count(Joined.FULL) == 7
    assert len(rooms.class_work(room.code)) == 5


def test_reveals_switch_on_and_off_per_room(rooms: RoomStore) -> None:
    one, other = rooms.create_room(capacity=3, lifetime=HOUR), rooms.create_room(capacity=3, lifetime=HOUR)
    rooms.set_revealed(one.code, "r1", True)
    rooms.set_revealed(one.code, "r1", True)
    rooms.set_revealed(one.code, "c2", True)
    rooms.set_revealed(one.code, "c2", False)
    assert rooms.revealed(one.code) == {"r1"}
    assert rooms.revealed(other.code) == frozenset()


def test_class_work_holds_only_the_rooms_members(store: LearnerStore, rooms: RoomStore) -> None:
    room = rooms.create_room(capacity=3, lifetime=HOUR)
    member, outsider = store.new_learner().id, store.new_learner().id
    rooms.join(room.code, member, "Grace")
    store.add_answer(member, "r1", "mem")
    store.put_record(member, "scaling.predictions", {"A": "middle"})
    store.put_settings(member, "scaling", {"pool": 64})
    store.add_answer(outsider, "r1", "num")
    [work] = rooms.class_work(room.code)
    assert work.answers == {"r1": "mem"}
    assert work.records["scaling.predictions"] == {"A": "middle"}
    assert work.settings == {"scaling": {"pool": 64}}
    assert work.name == "Grace"


def test_retention_removes_a_learner_from_their_rooms(store: LearnerStore, rooms: RoomStore) -> None:
    room = rooms.create_room(capacity=3, lifetime=HOUR)
    learner = store.new_learner().id
    rooms.join(room.code, learner, "Lin")
    store.remove_idle(datetime.now(UTC) + HOUR)
    assert rooms.class_work(room.code) == []
