"""Share links: a page's settings mirrored in its URL, and a link from a colleague adopted once.

Links carry settings only (never answers or learner text). Anything in a link that the
schema cannot use is skipped with a short note, so a bad link never breaks a page.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from core.settings_schema import section as schema_section
from core.share_links import LinkReading, link_setup
from ui import state

ADOPTED = "links.adopted"  # sections whose URL values were already taken in this session
NOTES = "links.notes"  # section -> notes about values that were not used


def adopt_once(section: str) -> None:
    """On a section's first render in a session, take its settings from the URL."""
    adopted = st.session_state.setdefault(ADOPTED, [])
    if section in adopted:
        return
    st.session_state[ADOPTED] = [*adopted, section]
    params = {name: st.query_params.get_all(name) for name in st.query_params.keys()}
    # The address bar leaves settings at their defaults out (see `mirror`), so a link is a whole setup.
    reading: LinkReading = link_setup(schema_section(section), params)
    current = state.section_settings(section)
    for name, value in reading.values.items():
        if value != current[name]:
            state.store_setting(section, name, value)
    if reading.notes:
        st.session_state[NOTES] = {**st.session_state.get(NOTES, {}), section: list(reading.notes)}


def forget_notes(section: str) -> None:
    """Drop the notes about a link once the learner changes a setting themselves."""
    notes = st.session_state.get(NOTES, {})
    if section in notes:
        st.session_state[NOTES] = {k: v for k, v in notes.items() if k != section}


def _setup_text(section: str) -> dict[str, str]:
    """The section's settings as a link writes them: field name to text."""
    chosen = state.section_settings(section)
    return {f.name: f.to_text(chosen[f.name]) for f in schema_section(section).fields}


def mirror(section: str) -> None:
    """Keep the section's settings that differ from their defaults in the page's URL, all in one update;
    a setting at its default stays out of it, as Streamlit leaves out a URL-bound widget's default."""
    # Every change of the URL is an entry in the browser's history. Writing a setting at a time left a
    # page only after as many presses of Back as it has settings; writing defaults made even a first
    # visit one press longer.
    fields = schema_section(section).fields
    chosen = state.section_settings(section)
    wanted = {f.name: [f.to_text(chosen[f.name])] for f in fields if chosen[f.name] != f.default}
    params = st.query_params
    # One pass over the URL: every look-up in st.query_params takes the session's lock.
    given = {name: params.get_all(name) for name in params}
    names = {f.name for f in fields}
    if {name: values for name, values in given.items() if name in names} != wanted:
        params.from_dict({**{name: v for name, v in given.items() if name not in names}, **wanted})


def share_box(section: str) -> None:
    """Any notes about an unusable link, and the link that reproduces this page's setup."""
    for note in st.session_state.get(NOTES, {}).get(section, []):
        st.warning(note, icon=":material/link_off:")
    # Built only while open: the page reruns on every move of a slider, and the link is rarely read.
    box = st.expander(
        "Share this setup", icon=":material/share:", key=share_open_key(section), on_change="rerun"
    )
    if not box.open:
        return
    query = urlencode(_setup_text(section))
    with box:
        st.caption(
            "This link opens the page with the same settings. It carries no answers and nothing you wrote."
        )
        st.code(f"{st.context.url or ''}?{query}", language=None, wrap_lines=True)


def share_open_key(section: str) -> str:
    """The session-state key that says whether a section's "Share this setup" box is open."""
    return f"links.share_open.{section}"
