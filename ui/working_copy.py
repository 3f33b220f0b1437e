"""The learner's working copy in `st.session_state`: the keys it lives under and what reads it whole.

Everything a learner produces lives under keys we own, so it survives page switches (widget
keys do not) and serialises as one plain dict for the report and the progress file:

- ``answers``: marked question id -> chosen option id (first answer only);
- ``settings``: section -> {name: value} for sliders and choices;
- ``records``: name -> plain JSON value for forms and written text (Run A decision, ...);
- ``handed_in_at``: ISO timestamp once the lab is handed in, else None.

After the hand-in the answers are locked, the tools are not: a setting changed then is kept under
``learner.explored`` in this tab only, laid over the settings it shows and left out of the work
handed in. `ui.state` writes the working copy and the learner store together.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.settings_schema import load_schema

ANSWERS = "answers"
SETTINGS = "settings"
RECORDS = "records"
HANDED_IN_AT = "handed_in_at"
LEARNER_ID = "learner.id"  # whose record this session works on; None until the browser says
LOADED = "learner.loaded"  # the learner id whose record is loaded into the working copy
UNSAVED = "learner.unsaved"  # True while something in the working copy is not in the store
RESUME_CODE = "learner.resume_code"
SEEDED = "learner.seeded"  # section -> {name: default} first shown in this run, not yet in the store
EXPLORED = "learner.explored"  # section -> {name: value} changed after the hand-in: this tab only


def ensure_state() -> None:
    """Create the learner's keys once per session."""
    # Every reader calls this, dozens of times a run, and each session-state access takes
    # Streamlit's lock: the keys are created together and never removed, so one check suffices.
    if UNSAVED in st.session_state:
        return
    st.session_state.setdefault(ANSWERS, {})
    st.session_state.setdefault(SETTINGS, {})
    st.session_state.setdefault(RECORDS, {})
    st.session_state.setdefault(HANDED_IN_AT, None)
    st.session_state.setdefault(LEARNER_ID, None)
    st.session_state.setdefault(LOADED, None)
    st.session_state.setdefault(SEEDED, {})
    st.session_state.setdefault(EXPLORED, {})
    st.session_state.setdefault(UNSAVED, False)


def read_only() -> bool:
    """True once the lab is handed in: no answer, prediction or record may change after that."""
    ensure_state()
    return st.session_state[HANDED_IN_AT] is not None


def snapshot() -> dict[str, Any]:
    """Everything the learner has produced, as one plain dict (copies, safe to hand to core). What was
    explored after the hand-in is not part of it."""
    ensure_state()
    return {
        ANSWERS: dict(st.session_state[ANSWERS]),
        SETTINGS: {k: dict(v) for k, v in st.session_state[SETTINGS].items()},
        RECORDS: dict(st.session_state[RECORDS]),
        HANDED_IN_AT: st.session_state[HANDED_IN_AT],
    }


def widget_key(section: str, name: str) -> str:
    """The widget key that shows the setting `section.name` (also the name tests find the widget by)."""
    return f"{section}.{name}"


def replace(new_state: dict[str, Any]) -> None:
    """Make `new_state` the working copy, and let every settings widget it changes re-seed from it."""
    for name, section in load_schema().items():
        values = {**section.defaults(), **new_state[SETTINGS].get(name, {})}
        for field in section.fields:
            key = widget_key(name, field.name)
            # A widget seeds itself from our store only when its key is absent. One that shows the new
            # value already keeps its key: the browser still draws it, and its next change must count.
            if key in st.session_state and st.session_state[key] != values[field.name]:
                del st.session_state[key]
    st.session_state[ANSWERS] = dict(new_state[ANSWERS])
    st.session_state[SETTINGS] = {k: dict(v) for k, v in new_state[SETTINGS].items()}
    st.session_state[RECORDS] = dict(new_state[RECORDS])
    st.session_state[HANDED_IN_AT] = new_state[HANDED_IN_AT]
    st.session_state[SEEDED] = {}  # defaults shown for the work being replaced
    st.session_state[EXPLORED] = {}  # explored over the work being replaced
