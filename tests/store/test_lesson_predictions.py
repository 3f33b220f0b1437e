"""Lesson predictions (records `predict.<id>`) are locked in the database like answers, on SQLite and
PostgreSQL: the first guess stays, a merge only adds, and the migration that gave them their own
table moves every stored guess without losing or changing it. (Raw SQL that would change one is
refused with the other locks, in test_learner_store.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from store import LearnerStore, Refused, migrations
from store.engine import create_engine
from store.migrations import MIGRATIONS, current_version, migrate

AT = "2026-11-30T14:05:09+00:00"
GELU = "predict.linear.gelu"
MATMUL = "predict.linear.matmul"
MEMORY_BOUND = {"choice": "memory-bound", "actual": "memory-bound"}
COMPUTE_BOUND = {"choice": "compute-bound", "actual": "memory-bound"}


def test_the_first_guess_is_the_one_stored_and_the_second_is_told_so(store: LearnerStore) -> None:
    learner = store.new_learner().id
    assert store.put_record(learner, GELU, MEMORY_BOUND) is True
    assert store.put_record(learner, GELU, MEMORY_BOUND) is True  # the same guess again (a retry)
    assert store.put_record(learner, GELU, COMPUTE_BOUND) is False  # a second tab's other guess loses
    assert store.put_record(learner, MATMUL, COMPUTE_BOUND) is True
    assert store.load(learner)["records"] == {GELU: MEMORY_BOUND, MATMUL: COMPUTE_BOUND}
    with store.engine.connect() as connection:
        # Kept in their own table, not as replaceable records.
        assert connection.exec_driver_sql("SELECT count(*) FROM records").scalar() == 0
        assert connection.exec_driver_sql("SELECT count(*) FROM lesson_predictions").scalar() == 2


def test_a_merge_adds_missing_guesses_and_never_replaces_a_stored_one(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_record(learner, GELU, MEMORY_BOUND)
    stored = store.merge(
        learner,
        {
            "answers": {},
            "settings": {},
            "records": {GELU: COMPUTE_BOUND, MATMUL: COMPUTE_BOUND},
            "handed_in_at": None,
        },
    )
    assert stored["records"] == {GELU: MEMORY_BOUND, MATMUL: COMPUTE_BOUND}
    assert store.load(learner) == stored


def test_after_the_hand_in_no_guess_is_added(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_record(learner, GELU, MEMORY_BOUND)
    store.hand_in(learner, AT)
    with pytest.raises(Refused):
        store.put_record(learner, MATMUL, COMPUTE_BOUND)
    assert store.load(learner)["records"] == {GELU: MEMORY_BOUND}


@pytest.mark.parametrize(
    "value", [None, "memory-bound", {"choice": "memory-bound"}, {"choice": 1, "actual": 2}]
)
def test_a_guess_without_a_choice_and_an_outcome_is_not_stored(store: LearnerStore, value: Any) -> None:
    learner = store.new_learner().id
    with pytest.raises(ValueError, match="needs a choice and an outcome"):
        store.put_record(learner, GELU, value)
    assert store.load(learner)["records"] == {}


def test_retention_removes_a_learners_guesses_with_them(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_record(learner, GELU, MEMORY_BOUND)
    store.hand_in(learner, AT)
    removed = store.remove_idle(datetime.now(UTC) + timedelta(days=1))  # everyone is idle by then
    assert [(r.learner_id, r.rows) for r in removed] == [(learner, 2)]  # the guess and the hand-in
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM lesson_predictions").scalar() == 0


# What a store of schema version 2 held as records: two well-formed guesses of a learner who then
# handed in, and records no version could read as a guess, which go (they never counted as one).
OLD_RECORDS = {
    GELU: MEMORY_BOUND,
    MATMUL: COMPUTE_BOUND,
    "predict.linear.layer": {"choice": "memory-bound"},
    "predict.memory.breaks": ["4096"],
    "run_a.reflection": {"text": "predict.this stays a record"},
}


def test_the_migration_moves_stored_guesses_into_their_locked_table(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = create_engine(store_url)
    with monkeypatch.context() as version_2:
        version_2.setattr(migrations, "MIGRATIONS", MIGRATIONS[:2])
        migrate(engine)
    learner, other = "a" * 32, "b" * 32
    with engine.begin() as connection:
        for who in (learner, other):
            connection.execute(
                sa.text("INSERT INTO learners VALUES (:id, :code, :t, :t)"),
                {"id": who, "code": who[:16], "t": datetime.now(UTC)},
            )
        for name, value in OLD_RECORDS.items():
            connection.execute(
                sa.text("INSERT INTO records VALUES (:id, :name, :value, :t)"),
                {"id": learner, "name": name, "value": json.dumps(value), "t": datetime.now(UTC)},
            )
        connection.execute(
            sa.text("INSERT INTO records VALUES (:id, :name, :value, :t)"),
            {"id": other, "name": GELU, "value": json.dumps(COMPUTE_BOUND), "t": datetime.now(UTC)},
        )
        connection.execute(
            sa.text("INSERT INTO hand_ins VALUES (:id, :at, :t)"),
            {"id": learner, "at": AT, "t": datetime.now(UTC)},
        )
    store = LearnerStore.open(store_url)
    with store.engine.connect() as connection:
        assert current_version(connection) == len(MIGRATIONS) == 6
    assert store.load(learner)["records"] == {
        GELU: MEMORY_BOUND,
        MATMUL: COMPUTE_BOUND,
        "run_a.reflection": {"text": "predict.this stays a record"},
    }
    assert store.load(other)["records"] == {GELU: COMPUTE_BOUND}
    assert store.put_record(other, GELU, MEMORY_BOUND) is False  # a moved guess is locked
    with pytest.raises(sa.exc.IntegrityError, match="locked"), store.engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM records")  # the records' own lock is back in place
