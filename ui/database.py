"""Which learner store the app uses, opened once per process and URL.

$LAB_DATABASE_URL wins, then `database_url` in the app's secrets (PostgreSQL for several
replicas; read once per process), else the embedded SQLite file in the data folder (see
`store.engine`). The store is a connection pool shared by every session of the process; nothing
about one learner is kept here.
"""

from __future__ import annotations

import os
from functools import cache, lru_cache

import streamlit as st

from store import LearnerStore
from store.engine import DATABASE_URL_ENV, default_url

SECRET_NAME = "database_url"


def database_url() -> str:
    """The store's URL: the environment, then the app's secrets, then the embedded default."""
    if os.environ.get(DATABASE_URL_ENV):
        return default_url()
    return _secret_url() or default_url()


@cache
def _secret_url() -> str | None:
    """`database_url` from the app's secrets, read once per process like the store it opens. Without a
    secrets file Streamlit looks for one again on every read, and every click reads the URL: that
    search took 0.6% to 0.9% of a loaded server's CPU (bench/README.md, twenty-sixth round)."""
    try:
        secret = st.secrets.get(SECRET_NAME)
    except FileNotFoundError:  # no secrets file at all
        return None
    return secret if isinstance(secret, str) and secret else None


@lru_cache(maxsize=4)
def _open(url: str) -> LearnerStore:
    # A failure raises and is not cached, so the next run tries again.
    return LearnerStore.open(url)


def learner_store() -> LearnerStore:
    """The store for this process (StoreUnavailable if it cannot be reached right now)."""
    return _open(database_url())
