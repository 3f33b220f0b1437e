"""Drawing charts from specs cached per process, because the same settings give the same chart.

Building and validating an Altair chart is the slowest step of our busiest pages, and Streamlit
converts Altair charts under one process-wide lock, so in a workshop every session queues behind
the others. A spec here depends only on the settings in its key, never on who asked, so one copy
serves every learner; nothing about a learner is kept.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import altair as alt
import streamlit as st

MAX_SPECS = 512  # a few hundred setting combinations per page covers a whole workshop
_specs: OrderedDict[tuple[Hashable, ...], str] = OrderedDict()
_lock = threading.Lock()


def _spec_json(key: tuple[Hashable, ...], build: Callable[[], alt.TopLevelMixin]) -> str:
    with _lock:
        if key in _specs:
            _specs.move_to_end(key)
            return _specs[key]
    spec = build().to_dict(validate=False)  # the chart tests validate every builder
    # Altair's default theme sizes charts at 300 px; Streamlit sizes them to the page instead.
    view = spec.get("config", {}).get("view", {})
    view.pop("continuousWidth", None)
    view.pop("continuousHeight", None)
    text = json.dumps(spec)
    with _lock:
        _specs[key] = text
        while len(_specs) > MAX_SPECS:
            _specs.popitem(last=False)
    return text


def draw(
    key: tuple[Hashable, ...],
    build: Callable[[], alt.TopLevelMixin],
    *,
    description: str,
    width: str = "stretch",
    height: int | str = "content",
) -> None:
    """Draw the chart `build()` makes; `key` must name every input it depends on."""
    st.vega_lite_chart(spec=json.loads(_spec_json(key, build)), width=width, height=height, alt=description)
