"""Home: what the lab is for, what you will be able to do, and how far you have got."""

import streamlit as st

from core import lessons
from core.progress import checks_score, overall_score, part_statuses, quiz_score
from core.questions import load_bank
from core.run_a import brief_figures
from ui import state
from ui.frame import lesson_page
from ui.nav import next_link, page_for
from ui.prose import SUBHEADER, TITLE, heading, prose
from ui.tables import arrow_rows


def draw() -> None:
    """The page's body: what the lab is for, your progress, and where to start."""
    bank = load_bank()
    answers = state.answers()
    statuses = part_statuses(bank, answers, state.snapshot()[state.RECORDS])

    brief = brief_figures()
    prose(
        heading(lessons.sentence("home", "title"), TITLE),
        lessons.text(
            "home",
            "intro",
            device_gib=brief.device_gib,
            device_gb=brief.device_gb,
            weights_gb=brief.weights_gb,
            other_gb=brief.other_gb,
        ),
    )
    st.info(lessons.sentence("home", "question"), icon=":material/help:")

    prose(heading("Before we start", SUBHEADER), lessons.text("home", "before_we_start"))

    left, right = st.columns([3, 2])
    with left:
        prose(heading("After this lab you can", SUBHEADER), lessons.text("home", "objectives"))
        st.caption(lessons.sentence("home", "time_guidance"))
    with right:
        st.subheader("Your progress")
        with st.container(horizontal=True):  # a flex row: three elements fewer than columns
            st.metric(lessons.sentence("frame", "checks_right"), checks_score(bank, answers).label)
            st.metric(lessons.sentence("frame", "quiz_right"), quiz_score(bank, answers).label)
            st.metric(lessons.sentence("frame", "overall_right"), overall_score(bank, answers).label)
        # A static table wraps its text in the narrow column; a grid would scroll sideways on a phone.
        st.table(
            arrow_rows(
                {
                    "Part": s.title,
                    lessons.sentence("home", "answered"): f"{s.questions_answered}/{s.questions_total}"
                    if s.questions_total
                    else "none",
                    "Done": "yes" if s.complete else "no",
                }
                for s in statuses
            ),
            hide_index=True,
        )

    st.subheader("Start here")
    for part in bank.parts:
        if part.page:
            st.page_link(page_for(part.page), icon=":material/arrow_forward:")

    st.subheader("Then, a second lab")
    st.page_link(page_for("pages/scaling.py"), icon=":material/hub:")
    st.caption(lessons.sentence("home", "second_lab"))
    next_link("pages/home.py")


lesson_page(draw)
