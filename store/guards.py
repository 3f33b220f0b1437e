"""What the lab's guards keep in the learner store, so every replica reads the same: the installation's
own signing key, and counts of failed attempts (wrong instructor keys, room codes that opened nothing).

The tables are in `store.guard_schema`. A secret is made once per
installation: the first replica to ask inserts a fresh one and every other replica, then and later,
reads the same row (the primary key settles a race, the loser's insert does nothing).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from core.attempts import Backoff, Failures
from store.engine import reading, writing
from store.guard_schema import SCOPE_CHARS, failed_attempts, installation_secrets
from store.learner_store import LearnerStore, _guarded, _insert, reconnecting

SIGNING_KEY = "report_signing_key"


class GuardStore:
    """The installation's secrets and the shared failure counts, in the learners' database."""

    def __init__(self, learners: LearnerStore) -> None:
        self.engine = learners.engine

    @reconnecting
    def installation_secret(self, name: str) -> str:
        """The secret called `name`, made (32 random bytes as hex) by whichever replica asks first."""
        made = secrets.token_hex(32)
        with _guarded(), writing(self.engine) as connection:
            connection.execute(
                _insert(connection, installation_secrets)
                .values(name=name, value=made, created_at=datetime.now(UTC))
                .on_conflict_do_nothing(index_elements=[installation_secrets.c.name])
            )
            return str(
                connection.execute(
                    sa.select(installation_secrets.c.value).where(installation_secrets.c.name == name)
                ).scalar_one()
            )

    @reconnecting
    def failures(self, scope: str, backoff: Backoff, now_s: float) -> Failures:
        """The failures counted for `scope` as they stand at `now_s`."""
        with _guarded(), reading(self.engine) as connection:
            row = connection.execute(
                sa.select(failed_attempts.c.failures, failed_attempts.c.last_failed_s).where(
                    failed_attempts.c.scope == scope[:SCOPE_CHARS]
                )
            ).first()
        return backoff.current(Failures() if row is None else _failures(row), now_s)

    @reconnecting
    def fail(self, scope: str, backoff: Backoff, now_s: float) -> Failures:
        """Count one failure for `scope` at `now_s` in one statement (two replicas never lose one); a count
        whose last failure is forgotten starts again at one. Counts forgotten everywhere are removed."""
        forgotten = now_s - backoff.forget_after_s
        with _guarded(), writing(self.engine) as connection:
            insert = _insert(connection, failed_attempts).values(
                scope=scope[:SCOPE_CHARS], failures=1, last_failed_s=now_s
            )
            counted = insert.on_conflict_do_update(
                index_elements=[failed_attempts.c.scope],
                set_={
                    "failures": sa.case(
                        (failed_attempts.c.last_failed_s <= forgotten, 1),
                        else_=failed_attempts.c.failures + 1,
                    ),
                    "last_failed_s": insert.excluded.last_failed_s,
                },
            ).returning(failed_attempts.c.failures, failed_attempts.c.last_failed_s)
            row = connection.execute(counted).one()
            connection.execute(sa.delete(failed_attempts).where(failed_attempts.c.last_failed_s <= forgotten))
        return _failures(row)


def _failures(row: Any) -> Failures:
    return Failures(count=int(row.failures), last_s=float(row.last_failed_s))
