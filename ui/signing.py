"""The report-signing key: the host's own from Streamlit's secrets (refused when weak), else the key this
installation made for itself and keeps in the learner store, so every deployment signs by default."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from core.signing import check_key
from store import StoreUnavailable
from store.guards import SIGNING_KEY, GuardStore
from ui.database import database_url, learner_store

SECRET_NAME = "report_signing_key"


def configured_key() -> str | None:
    """The signing key from `st.secrets`, or None when the host set none; ValueError if it is weak."""
    try:
        key = st.secrets.get(SECRET_NAME)
    except FileNotFoundError:  # no secrets file at all
        return None
    if key is None or key == "":
        return None
    return check_key(key)


@lru_cache(maxsize=4)
def _installation_key(url: str) -> str:
    # One per store and process: made once per installation, it never changes. A failure raises and
    # is not cached, so the next run asks again.
    return GuardStore(learner_store()).installation_secret(SIGNING_KEY)


def signing_key() -> str | None:
    """The host's key, else this installation's; None only while the store cannot be reached (files are
    then exported unsigned, and a file restored brings no marks). ValueError if the host's key is weak."""
    configured = configured_key()
    if configured is not None:
        return configured
    try:
        return _installation_key(database_url())
    except StoreUnavailable:
        return None


def weak_key_refused() -> bool:
    """Whether the configured key is too weak to sign with; if so, one plain sentence says why and the
    app draws nothing else."""
    try:
        configured_key()
    except ValueError as err:
        st.error(str(err), icon=":material/key_off:")
        return True
    return False
