"""Instructor: create a workshop room, watch the class live, reveal answers, export the room."""

import csv
import functools
import io
from collections.abc import Sequence
from datetime import timedelta

import streamlit as st

from charts.rooms import answers_chart, answers_description, predictions_chart, predictions_description
from core import lessons
from core.questions import Bank, load_bank
from core.rooms import (
    EXPORT_COLUMNS,
    LearnerWork,
    common_wrong_answers,
    distributions,
    export_rows,
    join_link,
    parse_room_code,
    part_counts,
    run_a_decisions,
    scaling_predictions,
)
from core.scaling.scenarios import load_scaling
from server.run_slots import in_a_run_slot
from store import StoreUnavailable
from store.rooms import Room
from ui.frame import progress_if_unframed
from ui.instructor import KEY_ENV, ROOM, SECRET_NAME, SIGNED_IN, instructor_key, sign_in
from ui.rooms import room_store
from ui.tables import arrow_rows

REFRESH_S = 5


def room_controls() -> None:
    """Create a room, or open one by its code (a room made on another replica or before a reload)."""
    with st.form("instructor.create"):
        left, right = st.columns(2)
        capacity = left.number_input(
            "Learners at most", min_value=1, max_value=500, value=100, key="instructor.capacity"
        )
        hours = right.number_input(
            "Open for (hours)", min_value=1, max_value=24, value=4, key="instructor.hours"
        )
        if st.form_submit_button("Create a room"):
            room = room_store().create_room(capacity=int(capacity), lifetime=timedelta(hours=int(hours)))
            st.session_state[ROOM] = room.code
    with st.form("instructor.open"):
        typed = st.text_input("Or open a room by its code", key="instructor.open_code")
        if st.form_submit_button("Open"):
            code = parse_room_code(typed)
            found = None if code is None else room_store().room(code)
            if found is None:
                st.error(lessons.sentence("instructor", "no_such_room"))
            else:
                st.session_state[ROOM] = found.code


def room_header(room: Room) -> None:
    """The room's code, join link, expiry and the close button."""
    st.subheader(f"Room {room.code}")
    st.caption(lessons.sentence("instructor", "how_to_join"))
    st.code(join_link(st.context.url or "", room.code), language=None)
    st.caption(
        lessons.sentence("instructor", "room_open", capacity=room.capacity, expires_at=room.expires_at)
        if not room.closed
        else lessons.sentence("instructor", "room_closed")
    )
    if not room.closed:
        confirm = st.checkbox("Yes, close this room", key="instructor.close_confirm")
        if st.button("Close the room", disabled=not confirm, key="instructor.close"):
            room_store().close_room(room.code)
            st.rerun()


def _reveal(code: str, question_id: str) -> None:
    room_store().set_revealed(code, question_id, bool(st.session_state[f"instructor.reveal.{question_id}"]))


def _room_csv(bank: Bank, works: Sequence[LearnerWork]) -> str:
    """The room's answers as CSV, written when the button is clicked (on a thread of Streamlit's, outside
    the session), from the work this refresh of the view read."""
    rows = export_rows(bank, works)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@st.fragment(run_every=REFRESH_S)
@in_a_run_slot
def class_view(code: str) -> None:
    """The live view: refreshed every few seconds on its own, without reloading the page."""
    try:
        works = room_store().class_work(code)
        revealed = room_store().revealed(code)
    except StoreUnavailable:
        st.warning(lessons.sentence("instructor", "store_retrying"))
        return
    bank = load_bank()
    st.metric("Learners in the room", len(works))
    st.markdown("**How far each part got**")
    st.table(
        arrow_rows(
            [
                {"Part": c.title, "Started": c.started, "Complete": c.complete}
                for c in part_counts(bank, works)
            ]
        ),
        hide_index=True,
    )
    found = distributions(bank, works)
    wrong = common_wrong_answers(found)
    st.markdown(lessons.sentence("instructor", "wrong_answers_heading"))
    if wrong:
        st.table(
            arrow_rows([{"Question": w.label, "Wrong answer": w.text, "Learners": w.count} for w in wrong]),
            hide_index=True,
        )
    else:
        st.caption(lessons.sentence("instructor", "no_wrong_answers"))
    st.markdown(lessons.sentence("instructor", "first_answers"))
    for dist in found:
        with st.container(border=True):
            st.altair_chart(
                answers_chart(dist),
                width="stretch",
                alt=answers_description(dist),
            )
            st.caption(
                lessons.sentence(
                    "instructor", "answered_right", label=dist.label, answered=dist.answered, right=dist.right
                )
            )
            st.toggle(
                lessons.sentence("instructor", "reveal_toggle"),
                value=dist.question_id in revealed,
                key=f"instructor.reveal.{dist.question_id}",
                on_change=_reveal,
                args=(code, dist.question_id),
            )
    st.markdown("**Run A: first experiment chosen**")
    st.table(
        arrow_rows(
            [
                {"Experiment": d.label, "Learners": d.count, "With reasons": d.with_reasons}
                for d in run_a_decisions(works)
            ]
        ),
        hide_index=True,
    )
    st.markdown("**Scaling out: predictions beside what each learner's settings computed**")
    rows = scaling_predictions(works)
    for part, text in load_scaling().parts.items():
        st.altair_chart(
            predictions_chart(rows, part, text.title),
            width="stretch",
            alt=predictions_description(rows, part, text.title),
        )
    st.download_button(
        lessons.sentence("instructor", "download_room"),
        functools.partial(_room_csv, bank, works),
        file_name=f"room-{code}.csv",
        mime="text/csv",
        key="instructor.csv",
    )
    named = [work.name for work in works if work.name]
    if named:
        with st.expander(f"Display names ({len(named)})"):
            for name in named:
                st.text(name)


def instructor_view() -> None:
    """The key check and sign-in, then the room controls and, once a room is open, the class view.
    Each step that cannot go on returns (a page never calls st.stop: see ui/frame.py)."""
    st.title("Instructor")
    try:
        key = instructor_key()
    except ValueError as weak:  # a guessable key opens nothing: the host is told how to make one
        st.error(str(weak), icon=":material/key_off:")
        return
    if key is None:
        st.info(
            lessons.sentence("instructor", "no_key", secret_name=SECRET_NAME, key_env=KEY_ENV),
            icon=":material/key:",
        )
        return
    try:
        if not st.session_state.get(SIGNED_IN):
            st.caption(lessons.sentence("instructor", "sign_in"))
            sign_in(key)
            return
        room_controls()
        code = st.session_state.get(ROOM)
        room = room_store().room(code) if code else None
    except StoreUnavailable:
        st.error(lessons.sentence("instructor", "store_unavailable"))
        return
    if room is not None:
        room_header(room)
        class_view(room.code)


progress_if_unframed()  # not a lesson page: run alone, it shows the summary itself
instructor_view()
