"""Charts of a workshop room: one question's first answers, and the Scaling predictions beside the
computed answers. Both show counts only, never who gave them."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import altair as alt
import pandas as pd

from core import lessons
from core.rooms import Distribution, PredictionCount

CORRECT_COLOUR = "#2e7d32"
OTHER_COLOUR = "#8c8c8c"
PREDICTED_COLOUR = "#1f77b4"
COMPUTED_COLOUR = "#ff7f0e"
CORRECT_LABEL = "Correct answer"
OTHER_LABEL = "Other options"
# Long option texts and titles break into lines of this many characters, so that on a 390 px phone the
# labels leave the bars room and the title stays inside the chart.
LABEL_CHARS = 28
TITLE_CHARS = 40
# An option's lines, joined by newlines in the data, drawn one under another; each option's band is as
# tall as its longest label, or Vega hides the labels that would overlap.
LINES = alt.Axis(labelExpr="split(datum.label, '\\n')", labelLimit=0)
LINE_PX = 13
BAND_GAP_PX = 8


def _wrapped(text: str, chars: int = LABEL_CHARS) -> str:
    """The text broken into lines of at most `chars` characters (a longer word keeps its own line)."""
    return "\n".join(textwrap.wrap(text, chars)) or text


def _band(frame: pd.DataFrame, bars: int) -> alt.Step:
    """The step of each of an option's `bars` bars, so that the option's band holds its longest label."""
    lines = max((option.count("\n") + 1 for option in frame["option"]), default=1)
    return alt.Step((lines * LINE_PX + BAND_GAP_PX) / bars)


def _title(text: str) -> alt.TitleParams:
    return alt.TitleParams(textwrap.wrap(text, TITLE_CHARS) or [text])


def _learners_axis(frame: pd.DataFrame) -> alt.X:
    """Whole learners from 0; before anyone answers the axis still runs 0 to 1, not 0 to 0."""
    most = int(frame["count"].max()) if len(frame) else 0
    return alt.X(
        "count:Q",
        title="Learners",
        scale=alt.Scale(domain=[0, max(1, most)]),
        axis=alt.Axis(tickMinStep=1, format="d"),
    )


def answers_frame(dist: Distribution) -> pd.DataFrame:
    """One row per option, in the bank's order, with its count and whether it is the correct one."""
    return pd.DataFrame(
        [
            {
                "option": _wrapped(option.text),
                "count": option.count,
                "kind": CORRECT_LABEL if option.correct else OTHER_LABEL,
            }
            for option in dist.options
        ]
    )


def answers_chart(dist: Distribution) -> alt.Chart:
    """Horizontal bars of first answers per option; the correct option is green and named in the legend."""
    frame = answers_frame(dist)
    return (
        alt.Chart(frame, title=_title(f"{dist.label}: first answers"))
        .mark_bar()
        .encode(
            y=alt.Y("option:N", sort=list(frame["option"]), title=None, axis=LINES),
            x=_learners_axis(frame),
            color=alt.Color(
                "kind:N",
                scale=alt.Scale(domain=[CORRECT_LABEL, OTHER_LABEL], range=[CORRECT_COLOUR, OTHER_COLOUR]),
                legend=alt.Legend(title=None, orient="bottom", columns=1),
            ),
            tooltip=[
                alt.Tooltip("option:N", title="Option"),
                alt.Tooltip("count:Q", title="Learners"),
                alt.Tooltip("kind:N", title="Kind"),
            ],
        )
        .properties(height=_band(frame, bars=1))
    )


PREDICTED = "Predicted"
COMPUTED = "Came true for their settings"


def predictions_frame(rows: Sequence[PredictionCount], part: str) -> pd.DataFrame:
    """Two rows per option of one part: how many predicted it and for how many it came true."""
    return pd.DataFrame(
        [
            {"option": _wrapped(row.label), "series": series, "count": count}
            for row in rows
            if row.part == part
            for series, count in ((PREDICTED, row.predicted), (COMPUTED, row.computed))
        ]
    )


def predictions_chart(rows: Sequence[PredictionCount], part: str, title: str) -> alt.Chart:
    """Grouped bars for one Scaling out part: the class's predictions beside the computed answers."""
    frame = predictions_frame(rows, part)
    return (
        alt.Chart(frame, title=_title(title))
        .mark_bar()
        .encode(
            y=alt.Y(
                "option:N",
                sort=list(dict.fromkeys(frame["option"])),
                title=None,
                axis=LINES,
            ),
            yOffset=alt.YOffset("series:N", sort=[PREDICTED, COMPUTED]),
            x=_learners_axis(frame),
            color=alt.Color(
                "series:N",
                scale=alt.Scale(domain=[PREDICTED, COMPUTED], range=[PREDICTED_COLOUR, COMPUTED_COLOUR]),
                legend=alt.Legend(title=None, orient="bottom", columns=1),
            ),
            tooltip=[
                alt.Tooltip("option:N", title="Option"),
                alt.Tooltip("series:N", title="Bar"),
                alt.Tooltip("count:Q", title="Learners"),
            ],
        )
        .properties(height=_band(frame, bars=2))  # a predicted and a computed bar per option
    )


def answers_description(dist: Distribution) -> str:
    """What `answers_chart` shows, for a screen reader: how many answered, and how many chose each option,
    the right one named."""
    options = "; ".join(
        lessons.sentence(
            "charts",
            "answers_option_right" if option.correct else "answers_option",
            text=option.text,
            count=option.count,
        )
        for option in dist.options
    )
    return lessons.sentence("charts", "answers", label=dist.label, answered=dist.answered, options=options)


def predictions_description(rows: Sequence[PredictionCount], part: str, title: str) -> str:
    """What `predictions_chart` shows for `part`, for a screen reader: per option, how many predicted it
    and for how many it came true."""
    options = "; ".join(
        lessons.sentence(
            "charts", "predictions_option", text=row.label, predicted=row.predicted, computed=row.computed
        )
        for row in rows
        if row.part == part
    )
    if not options:
        return lessons.sentence("charts", "predictions_none", title=title)
    return lessons.sentence("charts", "predictions", title=title, options=options)
