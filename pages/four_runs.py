"""Four runs: what each dashboard showed, then sort each run into a kind of failure."""

import functools

import streamlit as st

from charts.telemetry import PANELS_PER_ROW, panel_count, panel_description, telemetry_panel
from core import lessons
from core.run_a import brief_sentence
from core.telemetry import Run, device_gib, load_runs, recorded
from ui import state
from ui.charts import draw as draw_chart
from ui.charts import panel_slots
from ui.frame import lesson_page
from ui.marked import marked_questions
from ui.nav import next_link
from ui.prose import SUBHEADER, TITLE, heading, prose

DASHBOARD_TABS = "four_runs.dashboard"  # whose dashboard is open: a run's title


def dashboard(run: Run, device_gb: float) -> None:
    """One run's recorded panels, side by side, and what went wrong in it."""
    series = recorded(run.id)
    count = panel_count(series)
    for index, slot in enumerate(panel_slots(count, PANELS_PER_ROW)):
        with slot:
            draw_chart(
                ("telemetry", run.id, device_gb, index),
                functools.partial(telemetry_panel, series, index),
                description=panel_description(series, index, run.title),
            )
    st.caption(
        lessons.sentence(
            "four_runs",
            "run_caption",
            title=run.title,
            what_went_wrong=series.failure_text or lessons.sentence("four_runs", "no_failure_point"),
        )
    )
    if run.id == "A":  # the same run as the Run A page, with the same figures
        st.caption(brief_sentence())


def draw() -> None:
    """The page's body: the four runs, the sorting questions and, once all four are sorted, what each
    dashboard recorded."""
    prose(heading("Four runs, four different problems", TITLE), lessons.text("four_runs", "intro"))

    runs, device_gb = load_runs()
    # Bordered columns rather than a bordered box in each: four elements fewer on every click here.
    for column, run in zip(st.columns(len(runs), border=True), runs, strict=True):
        with column:
            prose(heading(run.title, SUBHEADER), "\n".join(f"- {fact}" for fact in run.facts))

    prose(heading("Sort them"), lessons.sentence("four_runs", "sort_kinds"))
    question_ids = tuple(run.question_id for run in runs)
    still_open = [question_id for question_id in question_ids if question_id not in state.answers()]
    # The dashboards give the answers away, so they wait for all four: the lock that completes the
    # sorting reruns the body, which draws them, while the earlier ones rerun only the questions.
    marked_questions(*question_ids, page_reads_all=True)
    if still_open:
        # No count of those left: a lock reruns the questions alone, not this line.
        st.info(lessons.sentence("four_runs", "sort_first"), icon=":material/lock:")
        next_link("pages/four_runs.py")
        return

    prose(heading("What the dashboards recorded"), lessons.sentence("four_runs", "check_sorting"))
    st.caption(
        lessons.sentence(
            "four_runs", "telemetry_caption", device_gib=device_gib(device_gb), device_gb=device_gb
        )
    )
    # Only the open run's dashboard is built: locking an answer above does not rebuild fourteen charts.
    tabs = st.tabs([run.title for run in runs], key=DASHBOARD_TABS, on_change="rerun")
    for run, tab in zip(runs, tabs, strict=True):
        if tab.open:
            with tab:
                dashboard(run, device_gb)

    next_link("pages/four_runs.py")


lesson_page(draw)
