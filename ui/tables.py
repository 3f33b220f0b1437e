"""Rows of a table handed to Streamlit as Arrow, so it sends them without building a pandas frame.

Streamlit turns a list of dicts into a pandas DataFrame and then into Arrow on every rerun;
building the Arrow table directly is an order of magnitude cheaper, which matters when a
whole class reruns the same page at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
from streamlit import dataframe_util


def arrow_rows(rows: Iterable[Mapping[str, Any]]) -> pa.Table | list[Mapping[str, Any]]:
    """The rows as an Arrow table, columns in the first row's order; the rows unchanged if a column mixes
    kinds."""
    listed = list(rows)
    try:
        return pa.Table.from_pylist(listed)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return listed  # Streamlit's own path shows a column of mixed kinds as text


def arrow_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The rows serialised the way Streamlit sends a table to the browser (an Arrow IPC stream)."""
    return dataframe_util.convert_anything_to_arrow_bytes(arrow_rows(rows))
