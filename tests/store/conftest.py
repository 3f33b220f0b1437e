"""The store tests run twice: against an SQLite file and against a real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import LearnerStore


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new, empty store of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'learners.sqlite3'}"
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture
def store(store_url: str) -> LearnerStore:
    """A migrated, empty learner store."""
    return LearnerStore.open(store_url)
