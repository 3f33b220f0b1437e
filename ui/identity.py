"""Who the learner is: one random id per browser, a resume code, start over, and the saved indicator.

The id lives in the browser's localStorage (never in a URL). A few lines of JavaScript, mounted
with Streamlit's own `st.components.v2.component`, read it (or store the fresh id this session
offers) and hand it back to the script. AppTest and a browser whose JavaScript never answers get
the session's fresh id on their second run, so work is saved there too.

The same lines copy the id into a first-party cookie, which the browser sends when its next visit
connects: a returning browser's work opens in the visit's first run, and its JavaScript, finding the
id the script already knows, has nothing to report. A new browser's report reruns only the
component's fragment, and the whole app only when the id opens work or a room the page must show.
Either way a visit is one run of the app.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import streamlit as st

from core import lessons
from server.run_slots import in_a_run_slot
from store import StoreUnavailable
from store.ids import is_learner_id, new_learner_id, show_code
from ui import state
from ui.boxes import rerun_whole_app
from ui.database import learner_store
from ui.rooms import membership

STORAGE_KEY = "reading-a-training-run.learner"
COOKIE = "lab_learner"  # the same id, for the next visit's first run
COOKIE_MAX_AGE_S = 365 * 24 * 3600
CANDIDATE = "identity.candidate"  # a fresh id this session offers the browser
REPORTED = "identity.reported"  # the last id the browser gave: its cookie's, or the one it reported
ADOPT = "identity.adopt"  # an id the browser must keep from now on (resume code, start over)
RUNS = "identity.runs"
FLASH = "identity.flash"
SAVED_WORK_OPEN = "identity.open"  # whether the "Your saved work" box is open
SYNCED = "identity.synced"  # settle_learner has tried the store in this full run
SAVED_SLOT = "identity.saved_slot"  # the saved indicator's place in the sidebar, from the latest full run
SAVED_SHOWN = "identity.saved_shown"  # what the saved indicator says now
# Whether this thread runs the whole app: the identity check is then a part of it, and the rest of the
# run draws whatever the browser's id changed.
_whole_run: ContextVar[bool] = ContextVar("lab_identity_whole_run", default=False)

# Reports the browser's id, storing one first if it has none: the one the script knows (from the
# cookie), else the offered one. It reports only when the id differs from the one the script knows, so
# a report never causes a rerun loop. The cookie is only ever a copy of the stored id.
_JS = f"""
export default function ({{ data, setStateValue }}) {{
    const key = "{STORAGE_KEY}";
    let id;
    try {{
        if (data.adopt) localStorage.setItem(key, data.adopt);
        id = localStorage.getItem(key) || data.known || data.candidate;
        localStorage.setItem(key, id);
    }} catch (blocked) {{
        id = data.adopt || data.known || data.candidate;  // no storage: this tab keeps one id
    }}
    const secure = location.protocol === "https:" ? "; secure" : "";
    document.cookie = `{COOKIE}=${{id}}; path=/; max-age={COOKIE_MAX_AGE_S}; samesite=strict${{secure}}`;
    if (id !== data.known) setStateValue("learner_id", id);
}}
"""
_identity = st.components.v2.component("lab_learner_identity", js=_JS)


def _browser_id() -> Any:
    """Mount the component and return the id the browser reported (None until it has)."""
    known = st.session_state.get(REPORTED)
    data = {"known": known, "adopt": st.session_state.get(ADOPT), "candidate": st.session_state[CANDIDATE]}
    # No key, on purpose. Streamlit works out the session's keyed state on every radio, slider, select
    # box and number input a run draws, and presents a component's keyed state afresh each time: 3.8% of
    # a loaded server's CPU went there (bench/README.md, twentieth round). Without a key the component's
    # id follows its data, which changes only once the script has taken a report (or the learner resumes
    # or starts over), and the new element reports again if the browser's id still differs.
    result = _identity(data=data, default={"learner_id": None}, on_learner_id_change=lambda: None)
    return result.learner_id


def settle_learner() -> None:
    """Learn whose work this session is, load or save it, and show the saved indicator."""
    st.session_state.setdefault(CANDIDATE, new_learner_id())
    st.session_state[RUNS] = st.session_state.get(RUNS, 0) + 1
    st.session_state[SAVED_SLOT] = st.sidebar.container(key="lab-saved").empty()
    whole = _whole_run.set(True)
    try:
        with st.sidebar:
            _identity_check()
    finally:
        _whole_run.reset(whole)
    st.session_state[SYNCED] = True


@st.fragment
@in_a_run_slot
def _identity_check() -> None:
    if _whole_run.get() and state.learner_id() is None and (returning := _cookie_id()) is not None:
        # Before the component is drawn, so that it learns the id is known and reports nothing.
        st.session_state[REPORTED] = returning
        state.use_learner(returning, keep_work=True)
    reported = _browser_id()
    if _whole_run.get():
        _take(reported)
        return
    # The browser's report, rerun alone: a new learner's id changes only the saved indicator.
    shown = _what_the_page_shows()
    adopted = _take(reported)
    if _what_the_page_shows() != shown:
        st.rerun(scope="app")
    if adopted:
        # The box shows the resume or start-over message already; no later run should show it again.
        st.session_state.pop(FLASH, None)


def _what_the_page_shows() -> tuple[object, ...]:
    """What a report of the browser's id can change on the page, beside the saved indicator."""
    box_open = bool(st.session_state.get(SAVED_WORK_OPEN))  # an open box shows the resume code
    return state.snapshot(), membership(), box_open


def _cookie_id() -> str | None:
    """The learner id in the cookie the browser sent when this session connected, if it holds one."""
    value = st.context.cookies.get(COOKIE)
    return value if is_learner_id(value) else None


def _take(reported: Any) -> bool:
    """Work on the reported id (or, from the second run on, the session's own), load or save it, and
    draw the saved indicator; True when the id is one the browser was asked to adopt."""
    adopted = False
    if is_learner_id(reported) and reported != st.session_state.get(REPORTED):
        st.session_state[REPORTED] = reported
        if reported == st.session_state.get(ADOPT):
            st.session_state.pop(ADOPT)
            adopted = True
        # What this session did on its own fresh id goes with it; a record the session opened from the
        # cookie is the cookie's learner's, and stays theirs, should the browser keep another id.
        own_work = state.learner_id() in (None, st.session_state[CANDIDATE])
        state.use_learner(reported, keep_work=own_work)
    elif state.learner_id() is None and st.session_state[RUNS] > 1:
        state.use_learner(st.session_state[CANDIDATE], keep_work=True)
    state.sync()
    saved_indicator()
    return adopted


def retry_saving() -> None:
    """Save what the store is missing, as `settle_learner` does on a full run, when a lesson page's
    fragment reruns alone: each click tries again, and only once per run."""
    if not st.session_state.pop(SYNCED, False):
        state.sync()


def saved_status() -> str:
    """What the saved indicator says now: "opening", "unsaved" or "saved"."""
    if state.learner_id() is None:
        return "opening"
    return "unsaved" if state.unsaved() else "saved"


def saved_indicator_behind() -> bool:
    """Whether the saved indicator says something else than is true now (a click since it was drawn
    could not be saved, or was saved after all)."""
    return saved_status() != st.session_state.get(SAVED_SHOWN)


def saved_indicator() -> None:
    """Saved, Not saved or Opening your saved work…, in the place `settle_learner` reserved; a lesson
    page's fragment draws it again after a click, which may have failed to save."""
    status = st.session_state[SAVED_SHOWN] = saved_status()
    slot = st.session_state.get(SAVED_SLOT)
    if slot is None:  # a page run on its own, without Home.py's frame (AppTest's first switch)
        return
    with slot:
        if status == "opening":
            st.caption(lessons.sentence("identity", "opening"))
        elif status == "unsaved":
            st.warning(lessons.sentence("identity", "not_saved"), icon=":material/cloud_off:")
        else:
            st.caption(lessons.sentence("identity", "saved"))


def _switch_to(learner: str) -> None:
    state.use_learner(learner, keep_work=False)
    st.session_state[ADOPT] = learner


def _resume() -> None:
    typed = st.session_state.get("identity.code", "")
    st.session_state["identity.code"] = ""
    try:
        found = learner_store().learner_for_code(typed)
    except StoreUnavailable:
        st.session_state[FLASH] = ("error", lessons.sentence("identity", "store_down"))
        return
    if found is None:
        # The same words whatever the code was: nobody learns which codes exist.
        st.session_state[FLASH] = ("error", lessons.sentence("identity", "code_refused"))
        return
    _switch_to(found)
    st.session_state[FLASH] = ("success", lessons.sentence("identity", "work_opened"))
    rerun_whole_app()  # the page shows the opened work


def _start_over() -> None:
    if st.session_state.get("identity.start_over.confirm"):
        st.session_state["identity.start_over.confirm"] = False
        _switch_to(new_learner_id())
        st.session_state[FLASH] = ("success", lessons.sentence("identity", "fresh_lab"))
        rerun_whole_app()


def saved_work_box() -> None:
    """The sidebar box with the resume code, continuing from another device, and starting over, for
    `ui.boxes.sidebar_boxes`: its widgets rerun the boxes alone unless their outcome changes the page."""
    if FLASH in st.session_state:  # the outcome of a click in the box is read in the box
        st.session_state[SAVED_WORK_OPEN] = True
    # Built only while open: closed, as it nearly always is, it sends nothing on a page switch.
    box = st.expander(
        lessons.sentence("identity", "box_title"),
        icon=":material/badge:",
        key=SAVED_WORK_OPEN,
        on_change="rerun",
    )
    if not box.open:
        return
    with box:
        code = state.resume_code()
        if code is not None:
            # Plain Markdown is safe here: a code is made of our own letters and digits only.
            st.markdown(lessons.sentence("identity", "resume_code", code=show_code(code)))
            st.caption(lessons.sentence("identity", "resume_code_hint"))
        # Not a form or a code block, so a page's own forms and code stay the only ones it has.
        st.text_input(lessons.sentence("identity", "continue_from"), key="identity.code")
        st.button(lessons.sentence("identity", "continue_button"), on_click=_resume, key="identity.resume")
        if flash := st.session_state.pop(FLASH, None):
            kind, message = flash
            (st.error if kind == "error" else st.success)(message)
            if kind == "success" and ADOPT in st.session_state:
                # The browser is yet to store the opened work's id; its report is one more run, and
                # the message must outlast it.
                st.session_state[FLASH] = flash
        st.caption(lessons.sentence("identity", "start_over_note"))
        st.checkbox(lessons.sentence("identity", "start_over_confirm"), key="identity.start_over.confirm")
        st.button(
            lessons.sentence("identity", "start_over_button"),
            on_click=_start_over,
            key="identity.start_over",
            disabled=not st.session_state.get("identity.start_over.confirm"),
        )
