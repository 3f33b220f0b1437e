"""The theme of the message that opens a run, filled in once per process (ui/theme_once.py): the same bytes
as Streamlit's own code gives, presence included, read from the config once until it is parsed again."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from streamlit import config
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

from ui import theme_once
from ui.decided_once import DecidedOnce

# The six sections in the order Streamlit 1.67's _create_new_session_message fills them in, and where.
SECTIONS: list[tuple[str, Callable[[Any], CustomThemeConfig]]] = [
    ("theme", lambda theme: theme),
    ("theme.light", lambda theme: theme.light),
    ("theme.dark", lambda theme: theme.dark),
    ("theme.sidebar", lambda theme: theme.sidebar),
    ("theme.light.sidebar", lambda theme: theme.light.sidebar),
    ("theme.dark.sidebar", lambda theme: theme.dark.sidebar),
]
# A config that sets a bit of everything Streamlit handles on its own: a base, colours, a list of chart
# colours, a font face, heading sizes as one string; a light variant that sets only its base to the
# enum's zero (present, yet nothing to write), a sidebar colour, and variants that set nothing.
BUSY_THEME: dict[str, dict[str, Any]] = {
    "theme": {
        "base": "dark",
        "primaryColor": "#c8553d",
        "textColor": "#111111",
        "chartCategoricalColors": ["#000000", "#ffffff"],
        "fontFaces": [{"family": "Lab", "url": "app/static/lab.woff2", "weight": 400}],
        "headingFontSizes": "2rem",
    },
    "theme.light": {"base": "light"},
    "theme.dark": {"primaryColor": None},
    "theme.sidebar": {"backgroundColor": "#eeeeee"},
}


def _streamlits_populate() -> Callable[[CustomThemeConfig, str], None]:
    # Once this worker has installed the copy, Streamlit's own function is the one it keeps.
    return theme_once._streamlits.get("populate") or app_session._populate_theme_msg


def _opening_theme(populate: Callable[[CustomThemeConfig, str], None]) -> ForwardMsg:
    """A run's opening message with only its theme filled in, section by section as Streamlit does."""
    message = ForwardMsg()
    for section, part in SECTIONS:
        populate(part(message.new_session.custom_theme), section)
    return message


@pytest.fixture
def fresh_copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """No section filled in yet, Streamlit's own function behind the copy; yields the sections read."""
    monkeypatch.setattr(theme_once, "_filled", {})
    monkeypatch.setattr(theme_once, "_streamlits", {"populate": _streamlits_populate()})
    read: list[str] = []
    real_read = config.get_options_for_section

    def counting_read(section: str) -> dict[str, Any]:
        read.append(section)
        return real_read(section)

    monkeypatch.setattr(config, "get_options_for_section", counting_read)
    yield read


def _use_theme(monkeypatch: pytest.MonkeyPatch, sections: dict[str, dict[str, Any]]) -> None:
    everything_unset = {name: None for name in config.get_options_for_section("theme")}
    # Streamlit's code edits the font faces it is given: each read gets a copy.
    monkeypatch.setattr(
        config,
        "get_options_for_section",
        lambda section: {**everything_unset, **copy.deepcopy(sections.get(section, {}))},
    )


def test_the_projects_theme_comes_out_byte_for_byte_and_is_read_once(fresh_copies: list[str]) -> None:
    streamlits = _opening_theme(_streamlits_populate()).SerializeToString(deterministic=True)
    fresh_copies.clear()
    first = _opening_theme(theme_once.populate_theme_once)
    assert len(fresh_copies) == 6  # each section read once, to fill it in
    second = _opening_theme(theme_once.populate_theme_once)
    assert len(fresh_copies) == 6  # and never again
    assert first.SerializeToString(deterministic=True) == streamlits
    assert second.SerializeToString(deterministic=True) == streamlits
    assert second.new_session.custom_theme.primary_color == "#b84a33"  # .streamlit/config.toml
    assert not second.new_session.custom_theme.HasField("dark")


@pytest.mark.usefixtures("fresh_copies")
def test_a_busy_theme_comes_out_byte_for_byte_presence_included(monkeypatch: pytest.MonkeyPatch) -> None:
    _use_theme(monkeypatch, BUSY_THEME)
    streamlits = _opening_theme(_streamlits_populate()).SerializeToString(deterministic=True)
    for _ in range(2):  # filled in, then copied
        copied = _opening_theme(theme_once.populate_theme_once)
        assert copied.SerializeToString(deterministic=True) == streamlits
    theme = copied.new_session.custom_theme
    assert theme.HasField("light") and theme.light.ByteSize() == 0  # its base is the enum's zero
    assert theme.HasField("sidebar") and theme.sidebar.background_color == "#eeeeee"
    assert not theme.HasField("dark")  # a variant that sets nothing stays absent
    assert list(theme.chart_categorical_colors) == ["#000000", "#ffffff"]
    assert theme.font_faces[0].family == "Lab"


@pytest.mark.usefixtures("fresh_copies")
def test_parsing_the_config_again_drops_the_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_session, "_populate_theme_msg", _streamlits_populate())
    monkeypatch.setattr(theme_once, "_installed", DecidedOnce(theme_once._replace))
    assert theme_once.install()
    assert app_session._populate_theme_msg is theme_once.populate_theme_once
    _use_theme(monkeypatch, {"theme": {"primaryColor": "#000001"}})
    assert _opening_theme(theme_once.populate_theme_once).new_session.custom_theme.primary_color == "#000001"
    _use_theme(monkeypatch, {"theme": {"primaryColor": "#000002"}})
    # Set without a parse (as only a test can): the copy stands.
    assert _opening_theme(theme_once.populate_theme_once).new_session.custom_theme.primary_color == "#000001"
    config._on_config_parsed.send()  # what Streamlit signals once it has parsed its config files
    assert _opening_theme(theme_once.populate_theme_once).new_session.custom_theme.primary_color == "#000002"


def test_the_pinned_streamlit_has_the_theme_filling_this_replaces() -> None:
    # A Streamlit upgrade that changes it fails here, where the app would only warn and go slower.
    assert theme_once.install()
    assert app_session._populate_theme_msg is theme_once.populate_theme_once


def test_a_changed_streamlit_is_left_alone_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def changed(msg: CustomThemeConfig, section: str = "theme", *, dark: bool = False) -> None:
        config.get_options_for_section(section)

    monkeypatch.setattr(app_session, "_populate_theme_msg", changed)
    with caplog.at_level(logging.WARNING, logger=theme_once.__name__):
        assert not theme_once._replace()
    assert app_session._populate_theme_msg is changed
    assert "has changed" in caplog.text
