"""Drawing charts from specs cached per process, because the same settings give the same chart.

Building an Altair chart (tens of milliseconds) and turning its rows into Arrow are the slowest
steps of our busiest pages, and in a workshop every session queues behind the others for the
one interpreter. A spec here depends only on the inputs in its key, never on who asked, so one
copy serves every learner; nothing about a learner is kept. Charts whose sliders only move
their marks pass those rows as named datasets each run, so a slider never rebuilds the chart.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import altair as alt
import streamlit as st

from ui.tables import arrow_bytes

if TYPE_CHECKING:  # a type name only: no module of Streamlit's is imported for it at run time
    from streamlit.delta_generator import DeltaGenerator

MAX_SPECS = 512  # a few hundred setting combinations per page covers a whole workshop
MAX_SHARED_DATASETS = 64  # shipped examples x mappings a workshop actually picks

Rows = Sequence[Mapping[str, Any]]
ChartRecipe = tuple[tuple[Hashable, ...], Callable[[], alt.TopLevelMixin]]  # a chart's key and its builder


@dataclass(frozen=True)
class CachedChart:
    """A chart ready to send: its spec without data, and each named dataset as Arrow bytes."""

    spec_json: str
    datasets: tuple[tuple[str, bytes], ...]

    def spec(self, datasets: Mapping[str, Rows | bytes] | None = None) -> dict:
        """A fresh spec dict (Streamlit edits the one it is given) with its datasets attached as Arrow: the
        cached ones, or `datasets` (rows, or Arrow bytes from `shared_datasets`, by name) in their place."""
        spec = json.loads(self.spec_json)
        arrow = dict(self.datasets)
        if datasets is not None:
            if set(datasets) != set(arrow):
                raise ValueError(f"This chart draws the datasets {sorted(arrow)}, not {sorted(datasets)}.")
            arrow = {
                name: rows if isinstance(rows, bytes) else arrow_bytes(rows)
                for name, rows in datasets.items()
            }
        if arrow:
            # Streamlit sends datasets that are already bytes as they are, without converting them again.
            spec["datasets"] = arrow
        return spec


_charts: OrderedDict[tuple[Hashable, ...], CachedChart] = OrderedDict()
_lock = threading.Lock()
_building: dict[tuple[Hashable, ...], threading.Lock] = {}  # keys being built now, one lock each


def _prepare(build: Callable[[], alt.TopLevelMixin]) -> CachedChart:
    spec = build().to_dict(validate=False)  # the chart tests validate every builder
    # Altair's default theme sizes charts at 300 px; Streamlit sizes them to the page instead.
    view = spec.get("config", {}).get("view", {})
    view.pop("continuousWidth", None)
    view.pop("continuousHeight", None)
    # Streamlit's theme fits the whole chart (title and legend too) into the height given, so a legend
    # stacked for a phone squeezes the plot to nothing; fit the width only, and a height is the plot's own.
    spec.setdefault("autosize", {"type": "fit-x", "contains": "padding"})
    arrow = tuple((name, arrow_bytes(rows)) for name, rows in spec.pop("datasets", {}).items())
    return CachedChart(spec_json=json.dumps(spec), datasets=arrow)


def _cached(key: tuple[Hashable, ...]) -> CachedChart | None:
    with _lock:
        if key in _charts:
            _charts.move_to_end(key)
            return _charts[key]
    return None


def cached_chart(key: tuple[Hashable, ...], build: Callable[[], alt.TopLevelMixin]) -> CachedChart:
    """The chart for `key`, built by `build()` only the first time this process sees the key."""
    if (chart := _cached(key)) is not None:
        return chart
    with _lock:
        building = _building.setdefault(key, threading.Lock())
    # When a class clicks at once, every session misses the same new key in the same instant: one
    # builds it while the others wait for it, instead of each building its own copy (a profile of
    # a 100-learner burst spent 45% of the server's time building the same charts over and over).
    with building:
        if (chart := _cached(key)) is not None:
            return chart
        try:
            chart = _prepare(build)
            with _lock:
                _charts[key] = chart
                while len(_charts) > MAX_SPECS:
                    _charts.popitem(last=False)
        finally:
            with _lock:
                _building.pop(key, None)
    return chart


_shared: OrderedDict[tuple[int, Hashable], tuple[object, dict[str, bytes]]] = OrderedDict()


def shared_datasets(
    owner: object, variant: Hashable, build: Callable[[], Mapping[str, Rows]]
) -> dict[str, bytes]:
    """The rows `build()` makes, as Arrow bytes by name, built once per `owner` and `variant`.

    Only for an `owner` that is one object per process, the same for every learner (a shipped
    example's reading): it is keyed by identity and kept alive with its datasets, never compared.
    """
    key = (id(owner), variant)
    with _lock:
        if key in _shared:
            _shared.move_to_end(key)
            return _shared[key][1]
    # Two sessions may build the same key at once; both results are equal, and the second wins.
    arrow = {name: arrow_bytes(rows) for name, rows in build().items()}
    with _lock:
        _shared[key] = (owner, arrow)  # the owner stays alive, so its id is never reused
        while len(_shared) > MAX_SHARED_DATASETS:
            _shared.popitem(last=False)
    return arrow


def draw(
    key: tuple[Hashable, ...],
    build: Callable[[], alt.TopLevelMixin],
    *,
    description: str,
    datasets: Mapping[str, Rows | bytes] | None = None,
    width: Literal["stretch", "content"] | int = "stretch",
    height: Literal["stretch", "content"] | int = "content",
) -> None:
    """Draw the chart `build()` makes. `key` names every input that shapes it; with `datasets` (its rows
    by name, sent fresh every run) inputs that only change the rows stay out of `key`, so moving a slider
    reuses the chart."""
    spec = cached_chart(key, build).spec(datasets)
    st.vega_lite_chart(spec=spec, width=width, height=height, alt=description)


def panel_slots(count: int, per_row: int) -> Iterator[DeltaGenerator]:
    """A place for each of `count` charts, `per_row` side by side on a laptop and stacked in order on a
    phone. A full row is one flex row, which wraps on a narrow screen as columns stack, in one block where
    a row of columns sends three; a last row with a gap keeps columns, so its charts stay as wide as the
    ones above instead of stretching."""
    for row_start in range(0, count, per_row):
        in_row = min(per_row, count - row_start)
        if in_row == per_row:
            row = st.container(horizontal=True)
            yield from [row] * in_row
        else:
            yield from st.columns(per_row)[:in_row]
