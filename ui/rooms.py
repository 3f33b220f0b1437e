"""The learner's side of a workshop room: join by code or join link, and see a revealed question's
class distribution once they answered it. Names are shown with `st.text`, never as Markdown.

The join link is `?room=CODE` on the app's root URL; it only fills in the join form, so a link
never puts anyone in a room without their click. A code that opens no room gets one sentence
whatever the reason, and such codes are limited per session and per address (`JOIN_BACKOFF`).
"""

from __future__ import annotations

import logging
import math
import time

import streamlit as st

from charts.rooms import answers_chart, answers_description
from core import lessons
from core.attempts import Backoff, Failures
from core.questions import load_bank
from core.rooms import (
    JOIN_PARAM,
    MAX_NAME_CHARS,
    LearnerWork,
    check_display_name,
    distribution,
    may_see_distribution,
    parse_room_code,
)
from store import StoreUnavailable
from store.guards import GuardStore
from store.rooms import Joined, Membership, RoomStore
from ui import state
from ui.boxes import rerun_whole_app
from ui.database import learner_store

MEMBERSHIP = "room.membership"  # (learner id, Membership or None) as last read from the store
FLASH = "room.flash"
ROOM_OPEN = "room.open"  # whether the "Workshop room" box is open
LINKED = "room.linked"  # the code of the join link this session was opened with, until Join is pressed
FAILURES = "room.failures"  # this session's codes that opened no room (core.attempts.Failures)
# A code that opens no room gets one sentence whether it is unknown, full or closed, so probing tells
# nothing about which codes exist; and each address may send twenty such codes (a class behind one
# NAT mistyping) before it waits 2 s, 4 s ... up to a minute between tries (42 a second went through).
# Counted per session and, in the store every replica shares, per address; ten minutes forget them.
JOIN_BACKOFF = Backoff(free=20, first_wait_s=2.0, max_wait_s=60.0, forget_after_s=600.0)
# Each outcome of joining that puts the learner in the room: how it is shown and its sentence in
# data/lessons/rooms/sentences.toml. Every other outcome is `refused`.
_JOIN_WORDS = {
    Joined.JOINED: ("success", "joined"),
    Joined.ALREADY: ("success", "already_in"),
}
log = logging.getLogger(__name__)


def _join_flash(joined: Joined) -> tuple[str, str]:
    kind, sentence = _JOIN_WORDS.get(joined, ("error", "refused"))
    return kind, lessons.sentence("rooms", sentence)


def client_address() -> str:
    """The address this session's browser connects from (the proxy's, behind one), for the join limit."""
    return st.context.ip_address or "unknown"


def _address_scope() -> str:
    return f"room-code:{client_address()}"


def _join_wait_s(now_s: float) -> float:
    """Seconds before this session may try a code again: the session's wait or its address's."""
    session = st.session_state.get(FAILURES, Failures())
    shared = GuardStore(learner_store()).failures(_address_scope(), JOIN_BACKOFF, now_s)
    return max(JOIN_BACKOFF.wait_s(session, now_s), JOIN_BACKOFF.wait_s(shared, now_s))


def _count_refusal(now_s: float) -> None:
    """Count a code that opened no room, for the session and its address; log when an address starts
    to wait."""
    st.session_state[FAILURES] = JOIN_BACKOFF.after_failure(st.session_state.get(FAILURES, Failures()), now_s)
    shared = GuardStore(learner_store()).fail(_address_scope(), JOIN_BACKOFF, now_s)
    if shared.count == JOIN_BACKOFF.free:
        log.warning(
            "Room codes: %d codes that opened no room came from one address within %.0f minutes; "
            "it now waits between tries.",
            shared.count,
            JOIN_BACKOFF.forget_after_s / 60,
        )


def room_store() -> RoomStore:
    """The rooms of this process's learner store."""
    return RoomStore(learner_store())


def membership() -> Membership | None:
    """The room this session's learner is in (read from the store once per learner and join)."""
    learner = state.learner_id()
    if learner is None:
        return None
    cached = st.session_state.get(MEMBERSHIP)
    if cached is not None and cached[0] == learner:
        return cached[1]
    try:
        found = room_store().membership(learner)
    except StoreUnavailable:
        return None  # try again next run
    st.session_state[MEMBERSHIP] = (learner, found)
    return found


def _join() -> None:
    st.session_state.pop(LINKED, None)  # the learner has pressed Join: the field is theirs from now on
    learner = state.learner_id()
    code = parse_room_code(st.session_state.get("room.code", ""))
    try:
        name = check_display_name(st.session_state.get("room.name", ""))
    except ValueError as err:
        st.session_state[FLASH] = ("error", str(err))
        return
    now_s = time.time()
    try:
        waiting = _join_wait_s(now_s)
        if waiting > 0:  # the code is not even looked up
            st.session_state[FLASH] = ("error", lessons.sentence("rooms", "wait", seconds=math.ceil(waiting)))
            return
        joined = Joined.UNKNOWN if learner is None or code is None else room_store().join(code, learner, name)
        if joined not in _JOIN_WORDS:
            _count_refusal(now_s)
    except StoreUnavailable:
        st.session_state[FLASH] = ("error", lessons.sentence("rooms", "store_unavailable"))
        return
    st.session_state.pop(MEMBERSHIP, None)
    st.session_state[FLASH] = _join_flash(joined)
    if joined in _JOIN_WORDS:
        rerun_whole_app()  # the page shows the room's answers under revealed questions


def room_box() -> None:
    """The sidebar box to join a workshop room, for `ui.boxes.sidebar_boxes`; a join link opens it with the
    code filled in. A join that puts nobody in a room reruns the boxes alone."""
    linked = st.query_params.get(JOIN_PARAM)
    if linked is not None and parse_room_code(linked) is not None:
        st.session_state[LINKED] = parse_room_code(linked)
        del st.query_params[JOIN_PARAM]  # the code is in the form now; keep the address bar clean
    member = membership()
    linked_code = st.session_state.get(LINKED, "") if member is None else ""
    flash = st.session_state.pop(FLASH, None)
    waiting = member is None and bool(linked_code or st.session_state.get("room.code"))
    if waiting or flash is not None:
        st.session_state[ROOM_OPEN] = True
    # Built only while open: closed, it sends nothing on a page switch.
    box = st.expander("Workshop room", icon=":material/groups:", key=ROOM_OPEN, on_change="rerun")
    if not box.open:
        return
    with box:
        if member is not None:
            st.caption("You are in room")
            st.code(member.room_code, language=None)
            if member.display_name:
                st.caption("as")
                st.text(member.display_name)
        with st.form("room.join", border=False):
            # The link's code is the field's default, not a value set once: a browser that reruns before
            # its field has reported the code (the identity check does, on a busy machine) gets it again.
            st.text_input("Room code", value=linked_code, key="room.code")
            st.text_input(
                f"Display name (optional, up to {MAX_NAME_CHARS} characters)",
                key="room.name",
            )
            st.form_submit_button("Join", on_click=_join)
        if flash:
            kind, message = flash
            (st.error if kind == "error" else st.success)(message)
        st.caption(lessons.text("rooms", "what_instructor_sees"))


def class_answers(question_id: str) -> None:
    """Under an answered question: the room's first answers, once the instructor revealed them."""
    member = membership()
    if member is None:
        return
    try:
        rooms = room_store()
        revealed = question_id in rooms.revealed(member.room_code)
        if not may_see_distribution(revealed=revealed, answered=question_id in state.answers()):
            return
        given = rooms.first_answers(member.room_code, question_id)
    except StoreUnavailable:
        return
    works = [LearnerWork(answers={question_id: option}) for option in given]
    found = distribution(load_bank().question(question_id), works)
    st.caption(lessons.sentence("rooms", "room_answered", answered=found.answered))
    st.altair_chart(answers_chart(found), width="stretch", alt=answers_description(found))
