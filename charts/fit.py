"""Will it fit: the longest sequence each way of training allows on one card, one bar per method and
number of GPUs, each bar labelled with its value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import pandas as pd

from core import lessons

GPU_COLOURS = ("#4c78a8", "#f58518")  # one GPU, eight with FSDP
LABEL_ROOM = 1.15  # the axis runs this far past the longest bar


@dataclass(frozen=True)
class FitRow:
    """One bar: a method on some GPUs and the longest sequence it fits (0: not even one token)."""

    method: str
    gpus: str
    tokens: int


def fit_frame(rows: Sequence[FitRow]) -> pd.DataFrame:
    """One row per bar, with the text its label shows."""
    return pd.DataFrame(
        [{"method": r.method, "gpus": r.gpus, "tokens": r.tokens, "label": f"{r.tokens:,}"} for r in rows],
        columns=["method", "gpus", "tokens", "label"],
    )


def fit_chart(rows: Sequence[FitRow], *, title: str) -> alt.LayerChart:
    """Horizontal bars of the longest sequence, methods down the side, one GPU beside eight, each bar's
    value written at its end."""
    frame = fit_frame(rows)
    methods = list(dict.fromkeys(r.method for r in rows))
    gpus = list(dict.fromkeys(r.gpus for r in rows))
    base = alt.Chart(frame).encode(
        y=alt.Y("method:N", title="Method", sort=methods),
        yOffset=alt.YOffset("gpus:N", sort=gpus),
        # Room past the longest bar for its label.
        x=alt.X(
            "tokens:Q",
            title="Longest sequence that fits (tokens)",
            scale=alt.Scale(domainMax=LABEL_ROOM * max((r.tokens for r in rows), default=0) or 1),
        ),
        tooltip=[
            alt.Tooltip("method:N", title="Method"),
            alt.Tooltip("gpus:N", title="GPUs"),
            alt.Tooltip("tokens:Q", title="Tokens", format=","),
        ],
    )
    bars = base.mark_bar().encode(
        color=alt.Color(
            "gpus:N",
            title="GPUs",
            scale=alt.Scale(domain=gpus, range=list(GPU_COLOURS[: len(gpus)])),
            legend=alt.Legend(orient="bottom"),
        )
    )
    labels = base.mark_text(align="left", dx=4).encode(text=alt.Text("label:N"))
    return alt.LayerChart(layer=[bars, labels]).properties(title=title, height=60 * len(methods))


def fit_description(rows: Sequence[FitRow], *, device: str) -> str:
    """What `fit_chart` shows, for a screen reader: every bar's method, GPUs and tokens."""
    bars = "; ".join(
        lessons.sentence("charts", "fit_bar", method=r.method, gpus=r.gpus, tokens=r.tokens) for r in rows
    )
    return lessons.sentence("charts", "fit", device=device, bars=bars)
