"""The learner store on SQLite and PostgreSQL: first answers win, the database refuses to unlock
anything, hand-in freezes a learner, and a whole snapshot merges without touching locks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS
from store import LearnerStore, Refused
from store.ids import is_learner_id, show_code
from store.migrations import MIGRATIONS, SchemaTooNew, current_version

AT = "2026-11-30T14:05:09+00:00"
GELU = "predict.linear.gelu"
EMPTY: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}


def test_a_new_learner_has_an_unguessable_id_and_nothing_stored(store: LearnerStore) -> None:
    first, second = store.new_learner(), store.new_learner()
    assert is_learner_id(first.id) and first.id != second.id
    assert len(first.resume_code) == 16 and first.resume_code != second.resume_code
    assert store.load(first.id) == EMPTY


def test_the_first_answer_is_the_one_stored(store: LearnerStore) -> None:
    learner = store.new_learner().id
    assert store.add_answer(learner, "r1", "mem") is True
    assert store.add_answer(learner, "r1", "speed") is False
    assert store.load(learner)["answers"] == {"r1": "mem"}


def test_learners_never_see_each_others_work(store: LearnerStore) -> None:
    one, other = store.new_learner().id, store.new_learner().id
    store.add_answer(one, "r1", "mem")
    store.put_settings(one, "linear", {"batch": 64})
    assert store.load(other) == EMPTY


def test_settings_and_records_are_replaced_as_they_change(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_settings(learner, "linear", {"batch": 8})
    store.put_settings(learner, "linear", {"batch": 64, "dtype": "bf16"})
    store.put_record(learner, "run_a.reflection", {"text": "first"})
    store.put_record(learner, "run_a.reflection", {"text": "second — 🙂"})
    stored = store.load(learner)
    assert stored["settings"] == {"linear": {"batch": 64, "dtype": "bf16"}}
    assert stored["records"] == {"run_a.reflection": {"text": "second — 🙂"}}


def test_a_prediction_is_locked_per_part(store: LearnerStore) -> None:
    learner = store.new_learner().id
    assert store.put_record(learner, PREDICTIONS, {"A": "flat"}) is True
    assert store.put_record(learner, PREDICTIONS, {"A": "flat", "C": "flat"}) is True
    assert store.put_record(learner, PREDICTIONS, {"A": "linear", "B": "flat"}) is False
    assert store.add_prediction(learner, "B", "linear") is False
    assert store.load(learner)["records"] == {PREDICTIONS: {"A": "flat", "B": "flat", "C": "flat"}}


def test_the_track_a_prediction_was_locked_on_is_locked_with_it(store: LearnerStore) -> None:
    learner = store.new_learner().id
    assert store.put_record(learner, PREDICTION_TRACKS, {"E": "tinyml"}) is True
    assert store.put_record(learner, PREDICTION_TRACKS, {"E": "cloud", "B": "cloud"}) is False
    assert store.load(learner)["records"] == {PREDICTION_TRACKS: {"B": "cloud", "E": "tinyml"}}
    merged = store.merge(learner, {**EMPTY, "records": {PREDICTION_TRACKS: {"E": "edge", "A": "edge"}}})
    assert merged["records"][PREDICTION_TRACKS] == {"A": "edge", "B": "cloud", "E": "tinyml"}


def test_after_the_hand_in_nothing_changes(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.add_answer(learner, "r1", "mem")
    store.put_settings(learner, "linear", {"batch": 8})
    assert store.hand_in(learner, AT) is True
    before = store.load(learner)
    assert store.hand_in(learner, "2027-01-01T00:00:00+00:00") is False
    assert store.add_answer(learner, "r2", "mem") is False
    assert store.add_prediction(learner, "A", "flat") is False
    with pytest.raises(Refused):
        store.put_settings(learner, "linear", {"batch": 64})
    with pytest.raises(Refused):
        store.put_record(learner, "run_a.reflection", {"text": "late"})
    assert (
        store.merge(learner, {"answers": {"r3": "a"}, "settings": {}, "records": {}, "handed_in_at": None})
        == before
    )
    assert before["handed_in_at"] == AT


def test_a_guess_and_its_track_are_stored_together_or_not_at_all(store: LearnerStore) -> None:
    learner = store.new_learner().id
    assert store.put_records(learner, {PREDICTION_TRACKS: {"E": "tinyml"}, PREDICTIONS: {"E": "drop"}})
    # A second tab's guess on another track loses whole: neither its guess nor its track is kept.
    assert not store.put_records(learner, {PREDICTION_TRACKS: {"E": "cloud"}, PREDICTIONS: {"E": "strict"}})
    # A write that fails part way leaves nothing of itself behind.
    with pytest.raises(ValueError, match="needs a choice and an outcome"):
        store.put_records(learner, {PREDICTION_TRACKS: {"B": "cloud"}, GELU: {"choice": "memory-bound"}})
    assert store.load(learner)["records"] == {PREDICTION_TRACKS: {"E": "tinyml"}, PREDICTIONS: {"E": "drop"}}


# Raw SQL, as any client of the database could send it: the locks live in the database itself.
REFUSED_BY_THE_DATABASE = [
    "UPDATE answers SET option_id = 'speed'",
    "DELETE FROM answers",
    "UPDATE predictions SET option_id = 'linear'",
    "DELETE FROM predictions",
    "UPDATE hand_ins SET handed_in_at = '2027-01-01T00:00:00+00:00'",
    "DELETE FROM hand_ins",
    "DELETE FROM settings",
    "DELETE FROM records",
    "UPDATE settings SET updated_at = updated_at",
    "UPDATE records SET updated_at = updated_at",
    "INSERT INTO answers VALUES ('{learner}', 'r2', 'mem', CURRENT_TIMESTAMP)",
    "INSERT INTO records VALUES ('{learner}', 'late', '1', CURRENT_TIMESTAMP)",
    "UPDATE lesson_predictions SET choice = 'compute-bound'",
    "DELETE FROM lesson_predictions",
    "INSERT INTO lesson_predictions VALUES ('{learner}', 'linear.matmul', 'a', 'a', CURRENT_TIMESTAMP)",
    "UPDATE prediction_tracks SET track = 'cloud'",
    "DELETE FROM prediction_tracks",
    "INSERT INTO prediction_tracks VALUES ('{learner}', 'B', 'cloud', CURRENT_TIMESTAMP)",
]


@pytest.mark.parametrize("sql", REFUSED_BY_THE_DATABASE)
def test_the_database_refuses_to_change_locked_rows(store: LearnerStore, sql: str) -> None:
    learner = store.new_learner().id
    store.add_answer(learner, "r1", "mem")
    store.put_record(learner, PREDICTIONS, {"A": "flat"})
    store.put_record(learner, PREDICTION_TRACKS, {"A": "tinyml"})
    store.put_record(learner, GELU, {"choice": "memory-bound", "actual": "memory-bound"})
    store.put_settings(learner, "linear", {"batch": 8})
    store.put_record(learner, "run_a.reflection", {"text": "mine"})
    store.hand_in(learner, AT)
    before = store.load(learner)
    with pytest.raises(sa.exc.IntegrityError, match="locked"), store.engine.begin() as connection:
        connection.exec_driver_sql(sql.format(learner=learner))
    assert store.load(learner) == before


def test_answers_and_lesson_predictions_are_locked_before_the_hand_in_too(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.add_answer(learner, "r1", "mem")
    store.put_record(learner, GELU, {"choice": "memory-bound", "actual": "memory-bound"})
    store.put_record(learner, "run_a.reflection", {"text": "mine"})
    store.put_record(learner, PREDICTION_TRACKS, {"A": "tinyml"})
    before = store.load(learner)
    for sql in (
        "UPDATE answers SET option_id = 'speed'",
        f"INSERT INTO answers VALUES ('{learner}', 'r1', 'speed', CURRENT_TIMESTAMP)",  # primary key
        "UPDATE lesson_predictions SET choice = 'compute-bound'",
        "DELETE FROM lesson_predictions",
        f"INSERT INTO lesson_predictions VALUES ('{learner}', 'linear.gelu', 'a', 'a', CURRENT_TIMESTAMP)",
        # Written as a record, a guess would dodge its lock: the records table takes none.
        f"INSERT INTO records VALUES ('{learner}', 'predict.linear.matmul', '{{}}', CURRENT_TIMESTAMP)",
        "UPDATE records SET name = 'predict.linear.matmul'",
        "UPDATE prediction_tracks SET track = 'cloud'",
        "DELETE FROM prediction_tracks",
        f"INSERT INTO records VALUES ('{learner}', 'scaling.prediction_tracks', '{{}}', CURRENT_TIMESTAMP)",
    ):
        with pytest.raises(sa.exc.IntegrityError), store.engine.begin() as connection:
            connection.exec_driver_sql(sql)
    assert store.load(learner) == before


def test_a_merge_adds_work_but_never_replaces_a_lock(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.add_answer(learner, "r1", "mem")
    store.put_record(learner, PREDICTIONS, {"A": "flat"})
    store.put_settings(learner, "linear", {"batch": 8})
    incoming = {
        "answers": {"r1": "speed", "r2": "mem"},
        "settings": {"memory": {"model": "gpt2"}},
        "records": {PREDICTIONS: {"A": "linear", "B": "flat"}, "run_a.reflection": {"text": "mine"}},
        "handed_in_at": AT,
    }
    stored = store.merge(learner, incoming)
    assert stored == {
        "answers": {"r1": "mem", "r2": "mem"},
        "settings": {"linear": {"batch": 8}, "memory": {"model": "gpt2"}},
        "records": {"run_a.reflection": {"text": "mine"}, PREDICTIONS: {"A": "flat", "B": "flat"}},
        "handed_in_at": AT,
    }
    assert store.load(learner) == stored


def test_a_resume_code_opens_its_learner_however_it_is_typed(store: LearnerStore) -> None:
    learner = store.new_learner()
    typed = show_code(learner.resume_code).lower().replace("-", " - ")
    assert store.learner_for_code(typed) == learner.id
    assert store.learner(learner.id).resume_code == learner.resume_code


@pytest.mark.parametrize(
    "typed", ["", "0000-0000-0000-0000", "not a code", "x" * 500, "'; DROP TABLE learners; --"]
)
def test_a_wrong_resume_code_opens_nothing(store: LearnerStore, typed: str) -> None:
    store.new_learner()
    assert store.learner_for_code(typed) is None


def test_retention_removes_idle_learners_and_everything_they_stored(store: LearnerStore) -> None:
    idle, active = store.new_learner().id, store.new_learner().id
    for learner in (idle, active):
        store.add_answer(learner, "r1", "mem")
        store.put_record(learner, PREDICTIONS, {"A": "flat"})
        store.put_settings(learner, "linear", {"batch": 8})
        store.hand_in(learner, AT)
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with store.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE learners SET updated_at = :t WHERE id = :i"), {"t": long_ago, "i": idle}
        )
    removed = store.remove_idle(datetime.now(UTC) - timedelta(days=30))
    assert [(r.learner_id, r.rows) for r in removed] == [(idle, 4)]
    assert store.load(idle) == EMPTY
    assert store.load(active)["answers"] == {"r1": "mem"}
    with store.engine.connect() as connection:
        for table in ("answers", "predictions", "settings", "hand_ins"):
            assert connection.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() == 1


def test_opening_a_store_twice_migrates_once(store_url: str) -> None:
    LearnerStore.open(store_url)
    store = LearnerStore.open(store_url)
    with store.engine.connect() as connection:
        assert current_version(connection) == len(MIGRATIONS)
        versions = connection.exec_driver_sql("SELECT version FROM schema_version ORDER BY version").scalars()
        assert list(versions) == list(range(1, len(MIGRATIONS) + 1))


def test_a_store_from_a_newer_release_is_not_touched(store: LearnerStore, store_url: str) -> None:
    with store.engine.begin() as connection:
        connection.exec_driver_sql(
            f"INSERT INTO schema_version VALUES ({len(MIGRATIONS) + 1}, CURRENT_TIMESTAMP)"
        )
    with pytest.raises(SchemaTooNew, match="newer release"):
        LearnerStore.open(store_url)


def test_one_setting_is_set_without_undoing_the_section_s_others(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_settings(learner, "linear", {"batch": 64, "dtype": "bf16"})  # another tab's changes
    # A tab that loaded before them changes the batch only: the dtype stays as stored.
    assert store.put_setting(learner, "linear", "batch", 8) == {"batch": 8, "dtype": "bf16"}
    assert store.load(learner)["settings"] == {"linear": {"batch": 8, "dtype": "bf16"}}


def test_a_first_visit_s_defaults_are_stored_in_one_write_only_where_nothing_is(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.put_settings(learner, "linear", {"batch": 64})  # another tab set the batch meanwhile
    defaults = {"n_in": 4096, "batch": 32, "dtype": "fp32"}
    assert store.put_settings_if_absent(learner, "linear", defaults) == {
        "n_in": 4096,
        "batch": 64,
        "dtype": "fp32",
    }
    # A second visit's defaults change nothing, not even a value the learner set since.
    store.put_setting(learner, "linear", "dtype", "bf16")
    assert store.put_settings_if_absent(learner, "linear", defaults)["dtype"] == "bf16"
    assert store.load(learner)["settings"] == {"linear": {"n_in": 4096, "batch": 64, "dtype": "bf16"}}


def test_a_first_visit_s_defaults_are_refused_after_the_hand_in(store: LearnerStore) -> None:
    learner = store.new_learner().id
    store.hand_in(learner, "2026-11-30T14:05:09+00:00")
    with pytest.raises(Refused):
        store.put_settings_if_absent(learner, "memory", {"hidden": 2048})
    assert store.load(learner)["settings"] == {}
