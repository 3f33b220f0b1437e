"""The workshop's report-signing key, read from Streamlit's secrets and refused when weak."""

from __future__ import annotations

import streamlit as st

from core.signing import check_key

SECRET_NAME = "report_signing_key"


def signing_key() -> str | None:
    """The signing key from `st.secrets`, or None when the host set none; ValueError if it is weak."""
    try:
        key = st.secrets.get(SECRET_NAME)
    except FileNotFoundError:  # no secrets file at all
        return None
    if key is None or key == "":
        return None
    return check_key(key)


def weak_key_refused() -> bool:
    """Whether the configured key is too weak to sign with; if so, one plain sentence says why and the
    app draws nothing else."""
    try:
        signing_key()
    except ValueError as err:
        st.error(str(err), icon=":material/key_off:")
        return True
    return False
