"""The one place that reads and writes a learner's work: the working copy in `st.session_state`
(`ui.working_copy`, whose names are re-exported here) and the learner store, together.

The store (`store/`, opened by `ui.database`) is the record. Every writer below updates the working
copy and writes the same change to the store as it happens. When the store cannot be reached the
change stays in memory, the session is marked unsaved, and `sync` retries on every run. When the
session learns whose work it is (`use_learner`), `sync` loads that learner's record; locked rows in
the store always win. After the hand-in answers, predictions and records are locked; settings still
change, in this tab only (the tools keep working, the work handed in stays as it was).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import streamlit as st

from core import client_values
from core.answers import record_first
from core.questions import load_bank
from core.settings_schema import load_schema
from core.settings_schema import section as schema_section
from store import LearnerStore, Refused, StoreUnavailable
from ui.database import learner_store
from ui.working_copy import (
    ANSWERS,
    EXPLORED,
    HANDED_IN_AT,
    LEARNER_ID,
    LOADED,
    RECORDS,
    RESUME_CODE,
    SEEDED,
    SETTINGS,
    UNSAVED,
    ensure_state,
    read_only,
    replace,
    snapshot,
    widget_key,
)


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
    if not accepted:
        return False
    st.session_state[ANSWERS] = updated
    _save(lambda store, learner: store.add_answer(learner, question_id, option_id))
    # False when the store already held another answer (given in another tab) and reloaded it.
    return st.session_state[ANSWERS].get(question_id) == option_id


def section_settings(section: str) -> dict[str, Any]:
    """One page section's settings as its tools show them: the schema's defaults overlaid with what the
    learner stored, and with what they changed after the hand-in."""
    return {**recorded_settings(section), **st.session_state[EXPLORED].get(section, {})}


def recorded_settings(section: str) -> dict[str, Any]:
    """One page section's settings as the learner's work holds them: the schema's defaults overlaid with
    what the learner stored (what the report and the hand-in count)."""
    ensure_state()
    # Defaults are filled in here, not stored, so a page first opened after hand-in still has them.
    return {**schema_section(section).defaults(), **st.session_state[SETTINGS].get(section, {})}


def stored_settings(section: str) -> dict[str, Any]:
    """Only what this session stored for a section (empty if the learner never opened its page)."""
    ensure_state()
    return dict(st.session_state[SETTINGS].get(section, {}))


def store_setting(section: str, name: str, value: Any, *, seed: bool = False) -> None:
    """Remember one setting, unless the page schema refuses it; after the hand-in in this tab only. With
    `seed`, a default shown on a first visit: kept only where the learner has none, and stored with the
    run's other defaults by `save_seeded`."""
    ensure_state()
    try:
        value = client_values.check_setting(section, name, value, schema=load_schema())
    except ValueError:
        return
    if read_only():
        if not seed:  # the tools keep working; the work handed in stays as it was
            explored = st.session_state[EXPLORED]
            explored[section] = {**explored.get(section, {}), name: value}
        return
    sections = st.session_state[SETTINGS]
    current = sections.get(section, {})
    if seed:
        if name not in current:
            sections[section] = {**current, name: value}
            seeded = st.session_state[SEEDED]
            seeded[section] = {**seeded.get(section, {}), name: value}
        return
    sections[section] = {**current, name: value}

    def write(store: LearnerStore, learner: str) -> None:
        # Another tab may have changed this section since this one loaded: take the store's copy.
        sections[section] = store.put_setting(learner, section, name, value)

    _save(write)


def save_seeded() -> bool:
    """Store the defaults this run showed first, one write per section, each only where the store has
    no value yet (so an older tab never undoes another's settings). True when the store held something
    else for one of them, or refused them: the page drew stale values and must run again."""
    ensure_state()
    seeded = st.session_state[SEEDED]
    if not seeded:
        return False
    st.session_state[SEEDED] = {}
    stale = False
    for section, values in seeded.items():
        kept = _save(partial(_put_seeded, section, values))
        held = st.session_state[SETTINGS].get(section, {})
        differs = [name for name, value in values.items() if held.get(name) != value]
        for name in differs:
            # A widget seeds itself from our store only when its key is absent.
            st.session_state.pop(widget_key(section, name), None)
        stale = stale or not kept or bool(differs)
    return stale


def _put_seeded(section: str, values: dict[str, Any], store: LearnerStore, learner: str) -> None:
    # Another tab may have stored some of these since this one loaded: take the store's copy.
    st.session_state[SETTINGS][section] = store.put_settings_if_absent(learner, section, values)


def record(name: str) -> Any:
    """A stored record (form result, written text), or None if there is none yet."""
    ensure_state()
    return st.session_state[RECORDS].get(name)


def store_record(name: str, value: Any) -> bool:
    """Store a record (a plain JSON value); False if handed in, its schema refuses it, or the store
    keeps another prediction under that name (locked in another tab; the working copy then shows it)."""
    return store_records({name: value})


def store_records(values: Mapping[str, Any]) -> bool:
    """`store_record` for records that belong together, written in one transaction: all or none."""
    ensure_state()
    if read_only():
        return False
    records = {**st.session_state[RECORDS], **values}
    try:
        for name, value in values.items():
            client_values.check_record(name, value, bank=load_bank(), schema=load_schema())
        client_values.check_size({**snapshot(), RECORDS: records})
    except ValueError:
        return False
    st.session_state[RECORDS] = records
    return _save(lambda store, learner: store.put_records(learner, values))


def hand_in(timestamp_iso: str) -> bool:
    """Mark the lab handed in at this time; False (and nothing changes) if it already was."""
    ensure_state()
    if read_only():
        return False
    st.session_state[HANDED_IN_AT] = timestamp_iso
    _save(lambda store, learner: store.hand_in(learner, timestamp_iso))
    return st.session_state[HANDED_IN_AT] == timestamp_iso  # another tab may have handed in first


def restore(merged: dict[str, Any]) -> bool:
    """Replace the learner's state with a merged snapshot from `core.progress_file.restore`.

    What the store has locked stays as it is. Returns False (and changes nothing) once the lab
    is handed in.
    """
    ensure_state()
    if read_only():
        return False
    replace(merged)
    st.session_state[UNSAVED] = True
    sync()
    return True


def learner_id() -> str | None:
    """The learner whose record this session works on, or None before the browser has said."""
    ensure_state()
    return st.session_state[LEARNER_ID]


def resume_code() -> str | None:
    """The resume code of this session's learner, once their record is loaded."""
    ensure_state()
    return st.session_state.get(RESUME_CODE)


def unsaved() -> bool:
    """True while some of the working copy is not in the store yet."""
    ensure_state()
    return bool(st.session_state[UNSAVED])


def use_learner(new_id: str, *, keep_work: bool) -> None:
    """Work on `new_id`'s record from now on; `sync` loads it.

    With `keep_work` what this session did so far is added to that record (the first id a
    session learns); without it the working copy starts empty (resume code, start over).
    """
    ensure_state()
    if new_id == st.session_state[LEARNER_ID]:
        return
    if not keep_work:
        replace({ANSWERS: {}, SETTINGS: {}, RECORDS: {}, HANDED_IN_AT: None})
        st.session_state[UNSAVED] = False
    st.session_state[LEARNER_ID] = new_id
    st.session_state.pop(RESUME_CODE, None)


def sync() -> None:
    """Load the learner's record once, and save whatever the store is missing; cheap when saved."""
    ensure_state()
    learner = st.session_state[LEARNER_ID]
    first_load = learner is not None and st.session_state[LOADED] != learner
    if learner is None or not (first_load or st.session_state[UNSAVED]):
        return
    try:
        if first_load:
            stored, code = _open_record(learner_store(), learner)
            st.session_state[RESUME_CODE] = code  # a later save keeps it: only a new learner changes it
        else:
            stored = learner_store().merge(learner, snapshot())
    except (StoreUnavailable, Refused):
        st.session_state[UNSAVED] = True
        return
    replace(stored)
    st.session_state.update({LOADED: learner, UNSAVED: False})


def _open_record(store: LearnerStore, learner: str) -> tuple[dict[str, Any], str]:
    """This session's work laid over the learner's record, for the first load, in one transaction.

    Before the session knew its learner it could only have stored defaults, values from a share
    link, and whatever a learner did in that moment; only values that differ from the defaults
    replace the record's, so a reload never resets the record's settings.
    """
    mine = snapshot()
    shown: dict[str, dict[str, Any]] = {}
    changed: dict[str, dict[str, Any]] = {}
    for section, values in mine[SETTINGS].items():
        defaults = schema_section(section).defaults()
        shown[section] = {name: value for name, value in values.items() if defaults.get(name) == value}
        changed[section] = {name: value for name, value in values.items() if defaults.get(name) != value}
    return store.open_record(learner, {**mine, SETTINGS: changed}, shown=shown)


def _save(write: Callable[[LearnerStore, str], object]) -> bool:
    """Write one change to the store for this session's learner; False if the store would not take it.

    When it cannot be written now (no learner yet, store unreachable) the session is marked
    unsaved and `sync` retries. When the store refuses it or keeps what it had (locked or handed
    in elsewhere, e.g. in another tab), the working copy is reloaded from the record.
    """
    learner = st.session_state[LEARNER_ID]
    if learner is None or st.session_state[LOADED] != learner:
        st.session_state[UNSAVED] = True
        return True
    try:
        kept = write(learner_store(), learner) is not False
    except Refused:
        kept = False
    except StoreUnavailable:
        st.session_state[UNSAVED] = True
        return True
    if not kept:
        _reload(learner)
    return kept


def _reload(learner: str) -> None:
    try:
        replace(learner_store().load(learner))
    except StoreUnavailable:
        st.session_state[UNSAVED] = True
