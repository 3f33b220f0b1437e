"""The one place that reads and writes a learner's state in `st.session_state`.

Everything a learner produces lives under three keys we own, so it survives page switches
(widget keys do not) and serialises as one plain dict for the report and the progress file:

- ``answers``: marked question id -> chosen option id (first answer only);
- ``settings``: section -> {name: value} for sliders and choices;
- ``records``: name -> plain JSON value for forms and written text (Run A decision, ...);
- ``handed_in_at``: ISO timestamp once the lab is handed in, else None.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core import client_values
from core.answers import record_first
from core.questions import load_bank
from core.settings_schema import load_schema
from core.settings_schema import section as schema_section

ANSWERS = "answers"
SETTINGS = "settings"
RECORDS = "records"
HANDED_IN_AT = "handed_in_at"


def ensure_state() -> None:
    """Create the learner's keys once per session."""
    st.session_state.setdefault(ANSWERS, {})
    st.session_state.setdefault(SETTINGS, {})
    st.session_state.setdefault(RECORDS, {})
    st.session_state.setdefault(HANDED_IN_AT, None)


def read_only() -> bool:
    """True once the lab is handed in: nothing may change after that."""
    ensure_state()
    return st.session_state[HANDED_IN_AT] is not None


def answers() -> dict[str, str]:
    """The marked answers given so far (a copy)."""
    ensure_state()
    return dict(st.session_state[ANSWERS])


def give_answer(question_id: str, option_id: str) -> bool:
    """Store a first answer; returns False (and changes nothing) if locked or handed in."""
    ensure_state()
    if read_only():
        return False
    try:
        client_values.check_answer(question_id, option_id, bank=load_bank())
    except ValueError:
        return False  # only a client that bypasses the page can send this
    updated, accepted = record_first(st.session_state[ANSWERS], question_id, option_id)
    st.session_state[ANSWERS] = updated
    return accepted


def section_settings(section: str) -> dict[str, Any]:
    """One page section's settings: the schema's defaults overlaid with what the learner stored."""
    ensure_state()
    # Defaults are filled in here, not stored, so a page first opened after hand-in still has them.
    return {**schema_section(section).defaults(), **st.session_state[SETTINGS].get(section, {})}


def stored_settings(section: str) -> dict[str, Any]:
    """Only what this session stored for a section (empty if the learner never opened its page)."""
    ensure_state()
    return dict(st.session_state[SETTINGS].get(section, {}))


def store_setting(section: str, name: str, value: Any) -> None:
    """Remember one setting, unless the lab is handed in or the page schema refuses it."""
    ensure_state()
    if read_only():
        return
    try:
        value = client_values.check_setting(section, name, value, schema=load_schema())
    except ValueError:
        return
    sections = st.session_state[SETTINGS]
    sections[section] = {**sections.get(section, {}), name: value}


def record(name: str) -> Any:
    """A stored record (form result, written text), or None if there is none yet."""
    ensure_state()
    return st.session_state[RECORDS].get(name)


def store_record(name: str, value: Any) -> bool:
    """Store a record (a plain JSON value); False (nothing stored) if handed in or its schema refuses it."""
    ensure_state()
    if read_only():
        return False
    records = {**st.session_state[RECORDS], name: value}
    try:
        client_values.check_record(name, value, bank=load_bank(), schema=load_schema())
        client_values.check_size({**snapshot(), RECORDS: records})
    except ValueError:
        return False
    st.session_state[RECORDS] = records
    return True


def snapshot() -> dict[str, Any]:
    """Everything the learner has produced, as one plain dict (copies, safe to hand to core)."""
    ensure_state()
    return {
        ANSWERS: dict(st.session_state[ANSWERS]),
        SETTINGS: {k: dict(v) for k, v in st.session_state[SETTINGS].items()},
        RECORDS: dict(st.session_state[RECORDS]),
        HANDED_IN_AT: st.session_state[HANDED_IN_AT],
    }


def hand_in(timestamp_iso: str) -> bool:
    """Mark the lab handed in at this time; False (and nothing changes) if it already was."""
    ensure_state()
    if read_only():
        return False
    st.session_state[HANDED_IN_AT] = timestamp_iso
    return True


def restore(merged: dict[str, Any]) -> bool:
    """Replace the learner's state with a merged snapshot from `core.progress_file.restore`.

    Returns False (and changes nothing) once the lab is handed in.
    """
    # Imported here: ui.settings imports this module.
    from ui.settings import widget_key

    ensure_state()
    if read_only():
        return False
    for section, values in merged[SETTINGS].items():
        for name in values:
            # A widget seeds itself from our store only when its key is absent.
            st.session_state.pop(widget_key(section, name), None)
    st.session_state[ANSWERS] = dict(merged[ANSWERS])
    st.session_state[SETTINGS] = {k: dict(v) for k, v in merged[SETTINGS].items()}
    st.session_state[RECORDS] = dict(merged[RECORDS])
    st.session_state[HANDED_IN_AT] = merged[HANDED_IN_AT]
    return True
