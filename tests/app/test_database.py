"""Which store the app opens: the environment, then the app's secrets, then the embedded file; the
secrets are read once per process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import streamlit as st

from store.engine import DATABASE_URL_ENV, default_url
from ui import database

SECRET_URL = "postgresql://lab@127.0.0.1:5432/lab"


class CountedSecrets:
    """Stands in for `st.secrets`: holds `values` (None: no secrets file) and counts the reads."""

    def __init__(self, values: dict[str, Any] | None) -> None:
        self.values = values
        self.reads = 0

    def get(self, name: str, default: Any = None) -> Any:
        self.reads += 1
        if self.values is None:
            raise FileNotFoundError("No secrets found.")  # what Streamlit raises without a file
        return self.values.get(name, default)


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    database._secret_url.cache_clear()
    yield
    database._secret_url.cache_clear()


def test_the_secrets_url_is_read_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = CountedSecrets({"database_url": SECRET_URL})
    monkeypatch.setattr(st, "secrets", secrets)
    assert [database.database_url() for _ in range(5)] == [SECRET_URL] * 5
    assert secrets.reads == 1


@pytest.mark.parametrize("values", [None, {}, {"database_url": ""}, {"database_url": 5}])
def test_without_a_usable_secret_the_embedded_file_is_used_and_not_looked_for_again(
    monkeypatch: pytest.MonkeyPatch, values: dict[str, Any] | None
) -> None:
    secrets = CountedSecrets(values)
    monkeypatch.setattr(st, "secrets", secrets)
    assert database.database_url() == database.database_url() == default_url()
    assert default_url().startswith("sqlite:///") and secrets.reads == 1


def test_the_environment_wins_over_the_secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setattr(st, "secrets", CountedSecrets({"database_url": SECRET_URL}))
    environment_url = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    monkeypatch.setenv(DATABASE_URL_ENV, environment_url)
    assert database.database_url() == environment_url
    monkeypatch.delenv(DATABASE_URL_ENV)
    assert database.database_url() == SECRET_URL
