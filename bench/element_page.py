"""A one-page app for `bench.element_cost`: the hello page's heading and line, then the elements asked for.

`BENCH_ELEMENTS` says which kind and how many ("markdown:20"; see `KINDS`), or several in turn
("radio:5,button:2"), or names a mix (`MIXES`: "lesson" draws what an average script run of the lab
draws). Its widgets are disabled, so a load client only reruns the page, as it does Streamlit's hello
page. Charts and tables go through the app's own helpers (`ui.charts.draw`, `ui.tables.shared_table`),
so they cost what ours cost.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st

from server.warm import freeze_once
from ui.charts import draw as draw_chart
from ui.tables import shared_table

ENV = "BENCH_ELEMENTS"
SENTENCE = "a sentence of lesson prose, about as long as one of ours, with **bold** in it."
ROWS = [
    {"term": "weights", "GB": "14.0"},
    {"term": "gradients", "GB": "14.0"},
    {"term": "Adam state", "GB": "56.0"},
]


def _line_chart() -> alt.Chart:
    # A frame, as the app's builders use: Altair moves its rows into a named dataset we keep as Arrow.
    rows = pd.DataFrame({"step": range(20), "loss": [4.0 / (1 + step) for step in range(20)]})
    return alt.Chart(rows).mark_line().encode(x=alt.X("step:Q"), y=alt.Y("loss:Q"))


@st.fragment
def _in_a_fragment(index: int) -> None:
    st.markdown(f"Paragraph {index}: {SENTENCE}")


def _boxed(index: int) -> None:
    st.container(border=True).markdown(f"Box {index}")


# Each draws element `index` of its kind; "one_markdown" is the whole count's text in one element.
# "fragment_markdown" calls a fragment for each paragraph, as the app does for each part that reruns alone.
KINDS: dict[str, Callable[[int], object]] = {
    "none": lambda index: None,
    "markdown": lambda index: st.markdown(f"Paragraph {index}: {SENTENCE}"),
    "heading": lambda index: st.subheader(f"Heading {index}", anchor=False),
    "caption": lambda index: st.caption(f"Caption {index}: {SENTENCE}"),
    "metric": lambda index: st.metric(f"Figure {index}", f"{index}.5 GB"),
    "boxed_markdown": _boxed,
    "fragment_markdown": _in_a_fragment,
    "radio": lambda index: st.radio(
        f"Question {index}", ["yes", "no", "maybe"], index=None, key=f"radio{index}", disabled=True
    ),
    "button": lambda index: st.button(f"Button {index}", key=f"button{index}", disabled=True),
    "chart": lambda index: draw_chart(("bench", index), _line_chart, description=f"Chart {index}"),
    "table": lambda index: st.table(shared_table(("bench", index), lambda: ROWS), hide_index=True),
}
ONE_MARKDOWN = "one_markdown"
# An average script run of the lab in a burst of 100 (the twenty-eighth round's run log, 4,159 runs):
# 7.3 widgets, 12.8 blocks and 17.4 other elements, about two fragment calls (a fragment's container is
# one of the blocks). With the page's own two lines: 7 widgets, 13 blocks, 18 other elements.
MIXES = {"lesson": "boxed_markdown:11,fragment_markdown:2,metric:2,chart:1,radio:5,button:2"}


def parse(value: str) -> list[tuple[str, int]]:
    """The kinds and counts `BENCH_ELEMENTS` names in turn ("markdown:20", "radio:5,button:2", or a mix's
    name); ValueError for a kind or count the page cannot draw."""
    parts = []
    for part in MIXES.get(value, value).split(","):
        kind, _, count = part.partition(":")
        if kind not in KINDS and kind != ONE_MARKDOWN:
            raise ValueError(f"{ENV} names no kind of element we draw: {kind!r}.")
        if not count.isdigit() or not 0 <= int(count) <= 500:
            raise ValueError(f"{ENV} needs a count from 0 to 500 after the colon, not {count!r}.")
        parts.append((kind, int(count)))
    return parts


def _draw(kind: str, count: int) -> None:
    if kind == ONE_MARKDOWN:
        st.markdown("\n\n".join(f"Paragraph {index}: {SENTENCE}" for index in range(count)))
        return
    for index in range(count):
        KINDS[kind](index)


def page() -> None:
    """The hello page's two elements, then the elements `BENCH_ELEMENTS` asks for."""
    parts = parse(os.environ.get(ENV, "none:0"))
    st.markdown("# Welcome to the element page")
    st.markdown("The hello page's heading and line, then the elements being priced.")
    for kind, count in parts:
        _draw(kind, count)


# What serve.py does once warm: what the first run imported (Altair, pandas) is left out of the collector's
# scans, so a burst here pays the collections the served lab pays, not more.
freeze_once()
st.navigation([st.Page(page, title="Elements", default=True)]).run()
