"""Tables that fit a 390 px phone, their rows handed to Streamlit as Arrow.

Streamlit turns a list of dicts into a pandas DataFrame and then into Arrow on every rerun;
building the Arrow table directly is an order of magnitude cheaper, which matters when a
whole class reruns the same page at once. Every table is a static `st.table`, whose text wraps:
an interactive grid keeps each column at its text's width and scrolls sideways on a phone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import streamlit as st
from streamlit import dataframe_util

MAX_SHARED_TABLES = 128  # the fixed tables of every page, a few times over


def arrow_rows(rows: Iterable[Mapping[str, Any]]) -> pa.Table | list[Mapping[str, Any]]:
    """The rows as an Arrow table, columns in the first row's order; the rows unchanged if a column mixes
    kinds."""
    listed = list(rows)
    names = list(listed[0]) if listed else []
    try:
        # Column by column: for the small tables our pages show this is several times cheaper than
        # `pa.Table.from_pylist` (which infers a schema row by row), with the same columns and types.
        return pa.table({name: [row.get(name) for row in listed] for name in names})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return listed  # Streamlit's own path shows a column of mixed kinds as text


def arrow_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The rows serialised the way Streamlit sends a table to the browser (an Arrow IPC stream)."""
    return dataframe_util.convert_anything_to_arrow_bytes(arrow_rows(rows))


Format = Callable[[float], str]  # how a column's figures read, such as `core.units.count_label`


def _shown(value: Any, fmt: Format | None) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return fmt(value) if fmt else f"{value:,.4g}"


def stacked(
    rows: Sequence[Mapping[str, Any]], *, by: str, header: str, formats: Mapping[str, Format]
) -> list[dict[str, str]]:
    """The same figures turned on their side: one row per figure, one column per row of `rows`, headed by
    its `by` value, each value as text in its figure's format (`core.units`). Two or three narrow columns of
    text that wraps fit a 390 px phone, where a row per plan with a column per figure scrolls sideways."""
    headers = [header.format(row[by]) for row in rows]
    figures = [name for name in (rows[0] if rows else {}) if name != by]
    return [
        {
            "": name,
            **{title: _shown(row[name], formats.get(name)) for title, row in zip(headers, rows, strict=True)},
        }
        for name in figures
    ]


def table_with_notes(rows: Sequence[Mapping[str, Any]], *, notes: str, alt: str) -> None:
    """A table of `rows` less their `notes` column, then each row's note in a list below it, named by the
    row's first cell: sentences in a column of their own make a table wider than a phone."""
    st.table(
        arrow_rows({column: value for column, value in row.items() if column != notes} for row in rows),
        hide_index=True,
        alt=alt,
    )
    st.markdown("\n".join(f"- **{next(iter(row.values()))}:** {row[notes]}" for row in rows))


_shared: OrderedDict[Hashable, pa.Table | list[Mapping[str, Any]]] = OrderedDict()
_lock = threading.Lock()


def shared_table(
    key: Hashable, build: Callable[[], Iterable[Mapping[str, Any]]]
) -> pa.Table | list[Mapping[str, Any]]:
    """`arrow_rows(build())`, worked out once per process for `key`.

    Only for a table that is the same for every learner (content, or settings named in `key`):
    what is kept here is shared by every session. An Arrow table cannot be changed, so sharing it is safe.
    """
    with _lock:
        if key in _shared:
            _shared.move_to_end(key)
            return _shared[key]
    # Two sessions may build the same key at once; the results are equal, and the second is kept.
    table = arrow_rows(build())
    if isinstance(table, list):
        return table  # rows of mixed kinds stay per run: a list could be changed by whoever gets it
    with _lock:
        _shared[key] = table
        while len(_shared) > MAX_SHARED_TABLES:
            _shared.popitem(last=False)
    return table
