"""Your OOM's chart: the most memory each phase of steps 1 and 2 needs, against the line the run met."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import pandas as pd

from core.memory.first_oom import PHASE_WORDS, PHASES

GIB = 2**30
STEP_COLOURS = ("#90a4ae", "#1e88e5")  # step 1, step 2
LINE_COLOUR = "#e53935"


def steps_frame(peaks: Mapping[tuple[int, str], float]) -> pd.DataFrame:
    """One row per step and phase: the phase's peak in GiB."""
    return pd.DataFrame(
        [
            {"step": f"Step {step}", "phase": PHASE_WORDS[phase], "gib": round(peaks[(step, phase)] / GIB, 2)}
            for step in (1, 2)
            for phase in PHASES
        ]
    )


def steps_chart(peaks: Mapping[tuple[int, str], float], *, line_bytes: float, title: str) -> alt.LayerChart:
    """Bars of each phase's peak, step 1 beside step 2, and a red rule at the capacity the run met."""
    frame = steps_frame(peaks)
    order = [PHASE_WORDS[p] for p in PHASES]
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("phase:N", title="Phase", sort=order, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("step:N"),
            y=alt.Y("gib:Q", title="Memory needed (GiB)"),
            color=alt.Color(
                "step:N",
                title="Step",
                scale=alt.Scale(domain=["Step 1", "Step 2"], range=list(STEP_COLOURS)),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[alt.Tooltip("step:N"), alt.Tooltip("phase:N"), alt.Tooltip("gib:Q", title="GiB")],
        )
    )
    line = (
        alt.Chart(pd.DataFrame([{"gib": round(line_bytes / GIB, 2), "label": "The line it met"}]))
        .mark_rule(color=LINE_COLOUR, strokeWidth=2)
        .encode(y=alt.Y("gib:Q"), tooltip=[alt.Tooltip("label:N"), alt.Tooltip("gib:Q", title="GiB")])
    )
    return alt.LayerChart(layer=[bars, line]).properties(title=title, height=300)
