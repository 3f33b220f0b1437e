"""Widgets whose values live in our own settings store, so they survive leaving the page.

Streamlit forgets a widget's key when its page is not rendered; we seed the widget from
`ui.state` each run and copy changes back in its `on_change` callback.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.settings_schema import section as schema_section
from ui import links, state


def _copy_back(section: str, name: str) -> None:
    key = state.widget_key(section, name)
    if key not in st.session_state:
        # Other work was opened (Start over, a resume code) since the browser drew this widget: the app
        # dropped its key, and the value the browser still sends belongs to the work that was replaced.
        return
    try:
        value = schema_section(section).field(name).check(st.session_state[key])
    except ValueError:
        # Only a client that bypasses the browser UI can send this; keep the last good value.
        st.session_state[key] = state.section_settings(section)[name]
        return
    state.store_setting(section, name, value)
    links.forget_notes(section)


def persistent(section: str, name: str) -> dict[str, Any]:
    """Keyword arguments for a widget that remembers `section.name` across pages.

    The default comes from `data/settings/<section>.json`. Usage:
    ``st.slider("Batch", f.min, f.max, step=f.step, **persistent("linear", "batch"))``.
    """
    links.adopt_once(section)
    if name not in state.stored_settings(section):
        # Storing the default marks the page as visited, so the report can tell.
        state.store_setting(section, name, schema_section(section).field(name).default, seed=True)
    key = state.widget_key(section, name)
    if key not in st.session_state:
        st.session_state[key] = state.section_settings(section)[name]
    links.mirror(section)
    return {
        "key": key,
        "on_change": _copy_back,
        "args": (section, name),
    }
