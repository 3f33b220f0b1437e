"""Fill in the theme of the message that opens a run once per process, not once per run.

Streamlit 1.67 opens every script run, a fragment's too, with a `new_session` message, and fills its
theme from six config sections (`[theme]`, its light, dark and sidebar variants), each read by scanning
all of the ~370 config options (`config.get_options_for_section`). In a class clicking at once that was
2.6% of the server's CPU (bench/README.md, twenty-third round), for the same theme every time: a
script cannot set a theme option (`st.set_option` takes only `client.*` options), so the theme changes
only when Streamlit parses its config files again.

Here each section, once filled in, is kept as bytes and copied into the next run's message, and the
copies are dropped whenever Streamlit parses its config again. The copy is exact, presence included: a
section that sets nothing leaves its part of the message absent, as Streamlit's own code does.

Streamlit has no hook for this. `app_session._populate_theme_msg` is replaced once per process, only
while it still has the shape this was written against; otherwise nothing changes and one warning says
why.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from streamlit import config
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

from ui.decided_once import DecidedOnce

_LOGGER = logging.getLogger(__name__)
# Each section's part as Streamlit filled it in: whether it is present, and its bytes.
_filled: dict[str, tuple[bool, bytes]] = {}
_streamlits: dict[str, Callable[..., Any]] = {}


def _fill(section: str) -> tuple[bool, bytes]:
    """The `section`'s part as Streamlit's own code fills it in: whether present, and its bytes."""
    # Filled in as a field of another theme, so that whether Streamlit's code set anything at all (a
    # default value too, which writes no bytes) shows as the field's presence.
    holder = CustomThemeConfig()
    _streamlits["populate"](holder.sidebar, section)
    return holder.HasField("sidebar"), holder.sidebar.SerializeToString()


def populate_theme_once(msg: CustomThemeConfig, section: str = "theme") -> None:
    """`app_session._populate_theme_msg`, copied from the section as first filled in by this process."""
    filled = _filled.get(section)
    if filled is None:
        # Two runs may fill the same section at once; both get the same bytes, and either copy is kept.
        filled = _filled[section] = _fill(section)
    present, content = filled
    if present:
        msg.SetInParent()
        msg.MergeFromString(content)


def _forget_filled() -> None:
    _filled.clear()


def _streamlit_has_shape() -> bool:
    populate = getattr(app_session, "_populate_theme_msg", None)
    return (
        inspect.isfunction(populate)
        and list(inspect.signature(populate).parameters) == ["msg", "section"]
        and "get_options_for_section" in populate.__code__.co_names
        and callable(getattr(config, "on_config_parsed", None))
        and "sidebar" in CustomThemeConfig.DESCRIPTOR.fields_by_name
    )


def install() -> bool:
    """Fill the theme in once per process from now on, deciding once (later calls only answer); whether
    Streamlit's code was replaced."""
    return _installed()


def _replace() -> bool:
    if not _streamlit_has_shape():
        _LOGGER.warning(
            "Streamlit's theme filling has changed; each run reads the theme config again (ui/theme_once.py)."
        )
        return False
    _streamlits["populate"] = app_session._populate_theme_msg
    # force_connect: called on every parse from now on, not once now because the config is parsed already.
    config.on_config_parsed(_forget_filled, force_connect=True)
    app_session._populate_theme_msg = populate_theme_once
    return True


_installed = DecidedOnce(_replace)
