"""Let a widget look up its own key in Session State without a copy of the whole state.

Streamlit 1.67's radio, slider, select box, number, text, date and time inputs each ask whether their
key holds None (or, for a slider, a range) as they are drawn, and ask it of
`SessionState.filtered_state`: a fresh dict of every key the session holds, each value looked up and
presented. On a lesson page with ~35 keys and ten such widgets that is the session's whole state worked
out ten times a run, for one key each time: about 4% of a loaded server's CPU (bench/README.md,
twenty-fifth round; Streamlit's issue 9415 describes the same cost growing with the widget count).

Here those widgets get a view of the session's state whose `filtered_state` answers `key in` and
`[key]` for one key directly: `SessionState` finds a user key, or the keyed widget it names, the way
`filtered_state` does, and presents the value the same way. Any other use of the view (iterating it,
its length, a key shaped like a widget id or an internal key) goes to the real `filtered_state`.

Streamlit has no hook for this. Each widget module's `get_session_state` is replaced once per process,
only while every one of them still reads `filtered_state` through it; otherwise nothing changes and one
warning says why.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from streamlit.runtime import state as streamlit_state
from streamlit.runtime.state.common import is_element_id
from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX, SessionState

from ui.decided_once import DecidedOnce

_LOGGER = logging.getLogger(__name__)
# Each widget module and the functions of it that read `filtered_state` through its `get_session_state`.
WIDGET_READERS = {
    "streamlit.elements.widgets.radio": ("RadioMixin._radio",),
    "streamlit.elements.widgets.slider": ("SliderMixin._slider",),
    "streamlit.elements.widgets.number_input": ("NumberInputMixin._number_input",),
    "streamlit.elements.widgets.selectbox": ("SelectboxMixin._selectbox",),
    "streamlit.elements.widgets.text_widgets": (
        "TextWidgetsMixin._text_input",
        "TextWidgetsMixin._text_area",
    ),
    "streamlit.elements.widgets.time_widgets": (
        "TimeWidgetsMixin._time_input",
        "TimeWidgetsMixin._date_input",
        "TimeWidgetsMixin._datetime_input",
    ),
}


def _plain_key(key: object) -> bool:
    """A key a script gives a widget, as `filtered_state` lists it under its own name."""
    return (
        isinstance(key, str) and not is_element_id(key) and not key.startswith(STREAMLIT_INTERNAL_KEY_PREFIX)
    )


class OwnKeyState(Mapping[str, Any]):
    """`filtered_state` as one widget reads it: a plain key is looked up alone, anything else in the copy.

    Looked up under the session's lock, as `filtered_state` is, and without the yield to a waiting rerun
    that `SafeSessionState`'s own `in` and `[]` make: a widget being drawn is not interrupted here.
    """

    def __init__(self, session_state: SafeSessionState) -> None:
        self._session_state = session_state

    def __contains__(self, key: object) -> bool:
        if not _plain_key(key):
            return key in self._session_state.filtered_state
        with self._session_state._lock:
            return key in self._session_state._state

    def __getitem__(self, key: str) -> Any:
        if not _plain_key(key):
            return self._session_state.filtered_state[key]
        with self._session_state._lock:
            return self._session_state._state[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._session_state.filtered_state)

    def __len__(self) -> int:
        return len(self._session_state.filtered_state)


class _WidgetSessionState:
    """The session's state for a widget module: as Streamlit's, with `filtered_state` read key by key."""

    def __init__(self, session_state: SafeSessionState) -> None:
        self._session_state = session_state

    @property
    def filtered_state(self) -> OwnKeyState:
        return OwnKeyState(self._session_state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session_state, name)


def widget_session_state() -> _WidgetSessionState:
    """What a widget module's `get_session_state` returns from now on."""
    return _WidgetSessionState(streamlit_state.get_session_state())


def _reads_filtered_state(module: Any, qualified_name: str) -> bool:
    owner_name, _, function_name = qualified_name.partition(".")
    function = getattr(getattr(module, owner_name, None), function_name, None)
    code = getattr(function, "__code__", None)
    return code is not None and {"get_session_state", "filtered_state"} <= set(code.co_names)


def _streamlit_has_shape(modules: Mapping[str, Any]) -> bool:
    return (
        all(
            getattr(module, "get_session_state", None) is streamlit_state.get_session_state
            and all(_reads_filtered_state(module, name) for name in WIDGET_READERS[module_name])
            for module_name, module in modules.items()
        )
        and _session_state_has_shape()
    )


def _session_state_has_shape() -> bool:
    """The session state's lock and state where this reads them, and the look-ups `filtered_state` makes."""
    return (
        {"_state", "_lock"} <= set(SafeSessionState.__annotations__)
        and isinstance(getattr(SafeSessionState, "filtered_state", None), property)
        and all(name in vars(SessionState) for name in ("__contains__", "__getitem__", "filtered_state"))
    )


def install() -> bool:
    """Let widgets look up their own key from now on, deciding once (later calls only answer); whether
    Streamlit's code was replaced."""
    return _installed()


def _replace() -> bool:
    try:
        modules = {name: importlib.import_module(name) for name in WIDGET_READERS}
    except ImportError:
        modules = {}
    if not modules or not _streamlit_has_shape(modules):
        _LOGGER.warning(
            "Streamlit's widgets read Session State differently now; each copies the whole state again "
            "(ui/own_key_lookup.py)."
        )
        return False
    for module in modules.values():
        module.get_session_state = widget_session_state  # type: ignore[attr-defined]
    return True


_installed = DecidedOnce(_replace)
