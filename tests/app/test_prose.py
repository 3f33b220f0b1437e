"""Headings and paragraphs drawn together: one Markdown element, the same text and order as drawn apart."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.app.conftest import headings, markdown_blocks
from ui.prose import HEADER, SUBHEADER, TITLE, heading, literal


def test_the_three_levels_are_the_markdown_of_title_header_and_subheader():
    assert heading("Memory budget", TITLE) == "# Memory budget"
    assert heading("Where the memory goes") == "## Where the memory goes"
    assert heading("Sketch, then see", SUBHEADER) == "### Sketch, then see"


@pytest.mark.parametrize("level", [0, 4, -1])
def test_a_level_st_title_header_and_subheader_do_not_draw_is_refused(level):
    with pytest.raises(ValueError, match="1, 2 or 3"):
        heading("Too deep", level)


@given(st.text().filter(lambda text: not text.strip() or "\n" in text))
def test_an_empty_heading_or_one_of_several_lines_is_refused(text):
    with pytest.raises(ValueError, match="one line"):
        heading(text, HEADER)


def test_literal_escapes_what_markdown_streamlit_or_latex_would_read():
    assert literal("loss*2 [nan] $5 :red[x]") == r"loss\*2 \[nan\] \$5 \:red\[x\]"
    assert literal("plain words") == "plain words"


@given(st.text())
def test_literal_text_unescapes_to_itself_and_leaves_no_special_character_bare(text):
    escaped = literal(text)
    bare = []
    index = 0
    while index < len(escaped):
        if escaped[index] == "\\":
            index += 2  # an escape and the character it protects
            continue
        bare.append(escaped[index])
        index += 1
    assert not set(bare) & set("\\`*_{}[]()#+-.!|<>~$:&")
    assert re.sub(r"\\(.)", r"\1", escaped, flags=re.DOTALL) == text


def _page():
    import streamlit as st

    from ui.prose import HEADER, TITLE, heading, prose

    prose(heading("A title", TITLE), "The first paragraph.", "", heading("A section", HEADER), "- a\n- b")
    st.button("A widget between")
    prose("Alone.")


def test_the_blocks_are_one_element_in_order_and_empty_ones_are_left_out():
    at = AppTest.from_function(_page).run()
    assert [m.value for m in at.markdown] == [
        "# A title\n\nThe first paragraph.\n\n## A section\n\n- a\n- b",
        "Alone.",
    ]
    assert headings(at, 1) == ["A title"] and headings(at, 2) == ["A section"]
    assert markdown_blocks(at) == ["# A title", "The first paragraph.", "## A section", "- a\n- b", "Alone."]
