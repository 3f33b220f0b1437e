"""The learner store: one small interface over the database for everything a learner produces.

Answers, predictions (the Scaling parts' and the lessons' `predict.<id>` records) and the hand-in
are insert-only, and the database itself refuses to change or delete them (see `store.migrations`);
settings and other records are replaced as they change until the hand-in. The state it returns has
the shape of `ui.state.snapshot()`: predictions come back as the records the app knows them by.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from core.predictions import RECORD_PREFIX
from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS
from store.engine import create_engine, one_statement, reading, writing
from store.ids import new_learner_id, new_resume_code, parse_code
from store.migrations import migrate
from store.schema import (
    answers,
    hand_ins,
    learners,
    lesson_predictions,
    prediction_tracks,
    predictions,
    records,
    settings,
)


class StoreUnavailable(RuntimeError):
    """The database cannot be reached (down, unreachable, or busy for too long)."""


class _Dropped(StoreUnavailable):
    """The database closed a pooled connection (it restarted); a fresh connection may well work."""


class Refused(ValueError):
    """The database refused a write because what it would change is locked or handed in."""


@dataclass(frozen=True)
class Learner:
    """A learner's id (kept in their browser) and resume code (shown to them)."""

    id: str
    resume_code: str


@dataclass(frozen=True)
class Removed:
    """One learner deleted by retention, with when they started and last saved, and what they had."""

    learner_id: str
    created_at: datetime
    updated_at: datetime
    rows: int


def _now() -> datetime:
    return datetime.now(UTC)


def _insert(connection: sa.Connection, table: sa.Table) -> Any:
    """An INSERT that understands ON CONFLICT for this connection's database."""
    return _dialect_insert(connection.dialect.name, table)


def _dialect_insert(dialect: str, table: sa.Table) -> Any:
    """An INSERT that understands ON CONFLICT for the database named `dialect`."""
    return (postgresql if dialect == "postgresql" else sqlite).insert(table)


def _compiled_once(
    connection: sa.Connection, build: Callable[..., sa.Executable], *args: Hashable
) -> sa.StatementLambdaElement:
    """`build(dialect name, *args)`, a statement whose values all come as parameters, in a form that
    SQLAlchemy compiles once. It leaves an upsert out of its statement cache (the ON CONFLICT clause
    has no cache key), and compiling one again took 40% to 70% of a write's CPU (bench/store_writes.py)."""
    dialect = connection.dialect.name
    statement = _built(build, dialect, *args)
    # The cache key is the lambda's place in the code and `track_on`. The lambda closes over the built
    # statement alone: SQLAlchemy would turn a closed-over string or flag into a bound parameter.
    key = f"{build.__name__}({', '.join(map(str, (dialect, *args)))})"
    return sa.lambda_stmt(lambda: statement, track_on=[key])


@cache
def _built(build: Callable[..., sa.Executable], dialect: str, *args: Hashable) -> sa.Executable:
    """One statement per builder, database and arguments, for the life of the process."""
    return build(dialect, *args)


def _key(table: sa.Table) -> list[sa.Column[Any]]:
    return list(table.primary_key.columns)


_P = ParamSpec("_P")
_T = TypeVar("_T")
_S = TypeVar("_S")


def reconnecting(method: Callable[Concatenate[_S, _P], _T]) -> Callable[Concatenate[_S, _P], _T]:
    """Run a store method once more if the database had dropped the pooled connection it used.

    The pool does not ping a connection before each use (that would be a second round trip for every
    write): after a restart the first use of an old connection fails, SQLAlchemy discards the pool's
    old connections, and the retry gets a fresh one. A dropped connection fails before anything is
    written, and the writes are upserts or first-only inserts, so repeating one is safe.
    """

    @wraps(method)
    def run(self: _S, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return method(self, *args, **kwargs)
        except _Dropped:
            return method(self, *args, **kwargs)

    return run


class LearnerStore:
    """Reads and writes learners' work in one database (SQLite file or PostgreSQL)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str) -> LearnerStore:
        """Connect to `url` and bring its schema up to date."""
        engine = create_engine(url)
        with _guarded():
            migrate(engine)
        return cls(engine)

    @contextmanager
    def _write(self, learner_id: str) -> Iterator[sa.Connection]:
        """A transaction that first marks the learner active (creating them if retention removed them).

        Touching the learner's row first also queues concurrent writers of one learner in PostgreSQL.
        """
        with _guarded(), writing(self.engine) as connection:
            now = _now()
            values = {
                "id": learner_id,
                "resume_code": new_resume_code(),
                "created_at": now,
                "updated_at": now,
            }
            connection.execute(_compiled_once(connection, _touch, False), values)
            yield connection

    @reconnecting
    def learner(self, learner_id: str) -> Learner:
        """The learner with this id, created on first sight."""
        now = _now()
        row = {"id": learner_id, "resume_code": new_resume_code(), "created_at": now, "updated_at": now}
        with _guarded(), one_statement(self.engine) as connection:
            code = connection.execute(_compiled_once(connection, _touch, True), row).scalar_one()
        return Learner(id=learner_id, resume_code=code)

    def new_learner(self) -> Learner:
        """A brand-new learner with nothing stored yet."""
        return self.learner(new_learner_id())

    @reconnecting
    def learner_for_code(self, typed: str) -> str | None:
        """The learner id a typed resume code opens, or None (the caller must not say which case)."""
        code = parse_code(typed)
        if code is None:
            return None
        with _guarded(), reading(self.engine) as connection:
            return connection.execute(sa.select(learners.c.id).where(learners.c.resume_code == code)).scalar()

    @reconnecting
    def load(self, learner_id: str) -> dict[str, Any]:
        """Everything stored for a learner, in the shape of a session snapshot."""
        with _guarded(), reading(self.engine) as connection:
            return _load(connection, learner_id)

    def add_answer(self, learner_id: str, question_id: str, option_id: str) -> bool:
        """Store a first answer; False if the question was already answered or the lab handed in."""
        return self._add_once(answers, learner_id, question_id=question_id, option_id=option_id)

    def add_prediction(self, learner_id: str, part: str, option_id: str) -> bool:
        """Store a part's first prediction; False if it was already locked or the lab handed in."""
        return self._add_once(predictions, learner_id, part=part, option_id=option_id)

    def hand_in(self, learner_id: str, handed_in_at: str) -> bool:
        """Record the hand-in; False if the learner had already handed in."""
        return self._add_once(hand_ins, learner_id, handed_in_at=handed_in_at)

    @reconnecting
    def _add_once(self, table: sa.Table, learner_id: str, **values: Any) -> bool:
        try:
            with _guarded(), one_statement(self.engine) as connection:
                return _add_once(connection, table, learner_id, values)
        except Refused:
            pass  # locked, or retention removed the learner: the careful way below tells which
        try:
            with self._write(learner_id) as connection:
                return _add_once(connection, table, learner_id, values)
        except Refused:
            return False

    @reconnecting
    def put_settings(self, learner_id: str, section: str, values: Mapping[str, Any]) -> None:
        """Replace one page section's settings (Refused after the hand-in)."""
        with self._write(learner_id) as connection:
            _put(connection, settings, learner_id, section=section, values=_setting_values(values))

    def put_setting(self, learner_id: str, section: str, name: str, value: Any) -> dict[str, Any]:
        """Set one setting of a page section and keep its others as stored, so a tab with an older
        copy cannot undo another tab's changes. Returns the section as the store now holds it
        (Refused after the hand-in)."""
        return self._lay_settings(learner_id, section, {name: value}, over_stored=True)

    def put_settings_if_absent(
        self, learner_id: str, section: str, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Store each of `values` (the defaults a page shows on a first visit) only where the section has no
        value of that name; returns the section as the store now holds it (Refused after the hand-in)."""
        return self._lay_settings(learner_id, section, values, over_stored=False)

    @reconnecting
    def _lay_settings(
        self, learner_id: str, section: str, values: Mapping[str, Any], *, over_stored: bool
    ) -> dict[str, Any]:
        """Lay `values` over a section's stored settings (under them, without `over_stored`) in one
        statement, the database merging the two, and return the section as stored."""
        row = _settings_row(learner_id, section, values)
        try:
            with _guarded(), one_statement(self.engine) as connection:
                statement = _compiled_once(connection, _settings_merge, over_stored)
                return dict(connection.execute(statement, row).scalar_one())
        except Refused:
            pass  # handed in, or retention removed the learner: the careful way below tells which
        with self._write(learner_id) as connection:
            stored = _section(connection, learner_id, section)
            merged = {**stored, **values} if over_stored else {**values, **stored}
            _put(connection, settings, learner_id, section=section, values=merged)
            return merged

    def put_record(self, learner_id: str, name: str, value: Any) -> bool:
        """Replace one record (Refused after the hand-in); predictions are only ever added to.

        False when the store keeps a different prediction: for one of the Scaling parts in `value`,
        or for the lesson prediction `name` (a second tab's guess loses to the first one stored).
        """
        return self.put_records(learner_id, {name: value})

    @reconnecting
    def put_records(self, learner_id: str, values: Mapping[str, Any]) -> bool:
        """`put_record` for several records in one transaction, so that what belongs together (a
        Scaling guess and the track it was made on) is stored whole or not at all; False when the
        store keeps a different prediction for any of them."""
        with self._write(learner_id) as connection:
            for name, value in values.items():
                _put_record(connection, learner_id, name, value)
            locked = [name for name in values if _is_prediction(name)]
            if not locked:
                return True
            stored = _load(connection, learner_id)["records"]
        return all(_holds(name, values[name], stored.get(name) or {}) for name in locked)

    @reconnecting
    def merge(self, learner_id: str, state: Mapping[str, Any]) -> dict[str, Any]:
        """Write a whole session snapshot in one transaction and return what is stored afterwards.

        Settings and records from `state` replace stored ones; locked rows (answers, predictions of
        both kinds, the hand-in) are only ever added, never replaced. After a hand-in nothing is written.
        """
        with self._write(learner_id) as connection:
            _merge_work(connection, learner_id, state, shown=None)
            return _load(connection, learner_id)

    @reconnecting
    def open_record(
        self, learner_id: str, state: Mapping[str, Any], *, shown: Mapping[str, Mapping[str, Any]]
    ) -> tuple[dict[str, Any], str]:
        """`merge` for a session's first load, in one transaction: `shown` (settings the session only
        displayed, such as defaults) go under the stored ones and the settings in `state` over them.
        Returns what is stored afterwards and the learner's resume code."""
        with self._write(learner_id) as connection:
            _merge_work(connection, learner_id, state, shown=shown)
            code = connection.execute(
                sa.select(learners.c.resume_code).where(learners.c.id == learner_id)
            ).scalar_one()
            return _load(connection, learner_id), code

    @reconnecting
    def remove_idle(self, before: datetime) -> list[Removed]:
        """Delete every learner whose last save is older than `before`, with all their work."""
        with _guarded(), writing(self.engine) as connection:
            idle = connection.execute(
                sa.select(learners.c.id, learners.c.created_at, learners.c.updated_at)
                .where(learners.c.updated_at < before)
                .order_by(learners.c.updated_at)
            ).all()
            removed = [
                Removed(
                    learner_id=row.id,
                    created_at=row.created_at,
                    updated_at=row.updated_at,
                    rows=_rows(connection, row.id),
                )
                for row in idle
            ]
            connection.execute(sa.delete(learners).where(learners.c.id.in_([r.learner_id for r in removed])))
        return removed

    @reconnecting
    def ping(self) -> None:
        """Raise StoreUnavailable unless the database answers."""
        with _guarded(), reading(self.engine) as connection:
            connection.execute(sa.select(1))


@contextmanager
def _guarded() -> Iterator[None]:
    """Turn the driver's errors into the two this store promises: Refused and StoreUnavailable."""
    try:
        yield
    except sa.exc.IntegrityError as err:
        raise Refused(str(err.orig)) from err
    except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.InternalError) as err:
        raise (_Dropped if err.connection_invalidated else StoreUnavailable)(str(err.orig)) from err


def _add_once(connection: sa.Connection, table: sa.Table, learner_id: str, values: Mapping[str, Any]) -> bool:
    row = {"learner_id": learner_id, "created_at": _now(), **values}
    return connection.execute(_compiled_once(connection, _first_only, table), row).first() is not None


def _touch(dialect: str, returning_code: bool) -> sa.Insert:
    """An upsert of a learner's row that, for one already there, only marks them active now; with
    `returning_code`, it returns the resume code stored. Parameters: id, resume_code, created_at,
    updated_at."""
    insert = _dialect_insert(dialect, learners)
    touch = insert.on_conflict_do_update(
        index_elements=[learners.c.id], set_={"updated_at": insert.excluded.updated_at}
    )
    return touch.returning(learners.c.resume_code) if returning_code else touch


def _first_only(dialect: str, table: sa.Table) -> sa.Insert:
    """An insert of a row of `table` that leaves one already there alone, returning a row only when it
    added one. Parameters: the table's columns."""
    insert = _dialect_insert(dialect, table).on_conflict_do_nothing(index_elements=_key(table))
    return insert.returning(table.c.learner_id)


def _merge_work(
    connection: sa.Connection,
    learner_id: str,
    state: Mapping[str, Any],
    *,
    shown: Mapping[str, Mapping[str, Any]] | None,
) -> None:
    """Add a session's work to a learner's record unless they handed in: answers and predictions where
    none is stored, records replaced, and settings replaced or, with `shown`, laid over the stored ones
    (and `shown` under them); the hand-in last, since nothing may be written after it."""
    if _handed_in(connection, learner_id):
        return
    for question_id, option_id in state["answers"].items():
        _add_once(connection, answers, learner_id, {"question_id": question_id, "option_id": option_id})
    if shown is None:
        for section, values in state["settings"].items():
            _put(connection, settings, learner_id, section=section, values=_setting_values(values))
    else:
        for over_stored, sections in ((False, shown), (True, state["settings"])):
            statement = _compiled_once(connection, _settings_merge, over_stored)
            for section, values in sections.items():
                connection.execute(statement, _settings_row(learner_id, section, values))
    for name, value in state["records"].items():
        _put_record(connection, learner_id, name, value)
    if state["handed_in_at"] is not None:
        _add_once(connection, hand_ins, learner_id, {"handed_in_at": state["handed_in_at"]})


def _settings_row(learner_id: str, section: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of `_settings_merge` for one section's `values`."""
    values = _setting_values(values)
    return {"learner_id": learner_id, "section": section, "values": values, "updated_at": _now()}


def _setting_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """A section's settings as stored: names to plain values (text, numbers, true or false), never
    empty ones, which the database's merge of two sections could not tell from a name to remove."""
    for name, value in values.items():
        if not isinstance(value, str | int | float | bool):
            raise ValueError(f"The setting {name} must be text, a number, or true or false.")
    return dict(values)


def _settings_merge(dialect: str, over_stored: bool) -> sa.Insert:
    """An upsert of one section's settings whose new values the database lays over those stored (or
    under them), returning the section as stored: parameters learner_id, section, values, updated_at."""
    insert = _dialect_insert(dialect, settings)
    new, stored = insert.excluded["values"], settings.c["values"]
    top, bottom = (new, stored) if over_stored else (stored, new)
    # PostgreSQL's `||` on JSONB and SQLite's json_patch both merge two objects key by key, the right
    # one's values winning (json_patch would drop a key whose value is null: settings never are).
    merged = bottom.op("||")(top) if dialect == "postgresql" else sa.func.json_patch(bottom, top)
    return insert.on_conflict_do_update(
        index_elements=_key(settings), set_={"values": merged, "updated_at": insert.excluded.updated_at}
    ).returning(settings.c["values"])


def _section(connection: sa.Connection, learner_id: str, section: str) -> dict[str, Any]:
    """One page section's stored settings (empty if none)."""
    found = connection.execute(
        sa.select(settings.c["values"]).where(
            settings.c.learner_id == learner_id, settings.c.section == section
        )
    ).scalar()
    return dict(found or {})


def _put(connection: sa.Connection, table: sa.Table, learner_id: str, **values: Any) -> None:
    row = {"learner_id": learner_id, "updated_at": _now(), **values}
    connection.execute(_compiled_once(connection, _replacing, table, tuple(values)), row)


def _replacing(dialect: str, table: sa.Table, names: tuple[str, ...]) -> sa.Insert:
    """An upsert of a row of `table` that replaces the columns `names` (and when it was updated) of one
    already there. Parameters: learner_id, updated_at and `names`."""
    insert = _dialect_insert(dialect, table)
    changed = {name: insert.excluded[name] for name in (*names, "updated_at")}
    return insert.on_conflict_do_update(index_elements=_key(table), set_=changed)


def _put_record(connection: sa.Connection, learner_id: str, name: str, value: Any) -> None:
    if name == PREDICTIONS:
        # Kept apart from other records so the database can lock each prediction on its own.
        for part, option_id in (value or {}).items():
            _add_once(connection, predictions, learner_id, {"part": part, "option_id": option_id})
    elif name == PREDICTION_TRACKS:
        for part, track in (value or {}).items():
            _add_once(connection, prediction_tracks, learner_id, {"part": part, "track": track})
    elif name.startswith(RECORD_PREFIX):
        _add_once(connection, lesson_predictions, learner_id, _lesson_prediction(name, value))
    else:
        _put(connection, records, learner_id, name=name, value=value)


def _is_prediction(name: str) -> bool:
    """True for the records the store keeps locked: the Scaling predictions (and the track each was
    locked on) and lesson predictions."""
    return name in (PREDICTIONS, PREDICTION_TRACKS) or name.startswith(RECORD_PREFIX)


def _holds(name: str, value: Any, stored: Any) -> bool:
    """Whether the store keeps prediction record `name` as `value` (per part for the Scaling ones)."""
    if name in (PREDICTIONS, PREDICTION_TRACKS):
        return all(stored.get(part) == option for part, option in value.items())
    return bool(stored == value)


def _lesson_prediction(name: str, value: Any) -> dict[str, str]:
    """The row for lesson prediction record `name`; ValueError unless `value` has a choice and an outcome."""
    if not (isinstance(value, Mapping) and all(isinstance(value.get(f), str) for f in ("choice", "actual"))):
        raise ValueError(f"The lesson prediction {name} needs a choice and an outcome.")
    return {
        "prediction_id": name.removeprefix(RECORD_PREFIX),
        "choice": value["choice"],
        "actual": value["actual"],
    }


def _handed_in(connection: sa.Connection, learner_id: str) -> bool:
    return (
        connection.execute(
            sa.select(hand_ins.c.learner_id).where(hand_ins.c.learner_id == learner_id)
        ).first()
        is not None
    )


def _load(connection: sa.Connection, learner_id: str) -> dict[str, Any]:
    def rows(table: sa.Table, *columns: str) -> list[sa.Row[Any]]:
        chosen = [table.c[name] for name in columns]
        return list(connection.execute(sa.select(*chosen).where(table.c.learner_id == learner_id)).all())

    stored_records = {name: value for name, value in rows(records, "name", "value")}
    locked_predictions = {part: option for part, option in rows(predictions, "part", "option_id")}
    if locked_predictions:
        stored_records[PREDICTIONS] = locked_predictions
    locked_tracks = {part: track for part, track in rows(prediction_tracks, "part", "track")}
    if locked_tracks:
        stored_records[PREDICTION_TRACKS] = locked_tracks
    for prediction_id, choice, actual in rows(lesson_predictions, "prediction_id", "choice", "actual"):
        stored_records[RECORD_PREFIX + prediction_id] = {"choice": choice, "actual": actual}
    handed_in = rows(hand_ins, "handed_in_at")
    return {
        "answers": {question: option for question, option in rows(answers, "question_id", "option_id")},
        "settings": {section: dict(values) for section, values in rows(settings, "section", "values")},
        "records": stored_records,
        "handed_in_at": handed_in[0].handed_in_at if handed_in else None,
    }


def _rows(connection: sa.Connection, learner_id: str) -> int:
    """How many rows of work a learner has across the tables retention deletes."""
    return sum(
        connection.execute(sa.select(sa.func.count()).where(table.c.learner_id == learner_id)).scalar_one()
        for table in (
            answers,
            predictions,
            prediction_tracks,
            lesson_predictions,
            settings,
            records,
            hand_ins,
        )
    )
