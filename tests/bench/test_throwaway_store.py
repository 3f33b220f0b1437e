"""A benchmark's servers get an empty store of their own unless the caller named one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store.engine import DATA_DIR_ENV, DATABASE_URL_ENV, DEFAULT_DATA_DIR, default_url
from tests.harness.server import throwaway_store


@pytest.fixture
def no_store_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)


@pytest.mark.usefixtures("no_store_named")
def test_without_a_named_store_the_app_gets_an_empty_folder_outside_the_repository():
    throwaway_store("bench-test-")
    folder = Path(os.environ[DATA_DIR_ENV])
    assert folder.is_dir()
    assert list(folder.iterdir()) == []
    assert folder.name.startswith("bench-test-")
    assert DEFAULT_DATA_DIR not in folder.parents and folder != DEFAULT_DATA_DIR
    # What a server started now would open.
    assert default_url() == f"sqlite:///{folder / 'learners.sqlite3'}"


@pytest.mark.usefixtures("no_store_named")
def test_a_store_the_caller_named_is_left_alone(monkeypatch, tmp_path):
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql+psycopg://lab@127.0.0.1:5999/lab")
    throwaway_store("bench-test-")
    assert DATA_DIR_ENV not in os.environ
    monkeypatch.delenv(DATABASE_URL_ENV)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    throwaway_store("bench-test-")
    assert os.environ[DATA_DIR_ENV] == str(tmp_path)
