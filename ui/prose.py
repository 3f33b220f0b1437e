"""Headings and paragraphs that follow one another, drawn as one Markdown element.

Streamlit charges a busy server by the element, not by its length: under a class clicking at once,
twenty paragraphs cost about 7.5 ms more a run as twenty elements and 0.2 ms more as one
(bench/README.md, the fourteenth round's price list). A heading and the text under it read the same
either way, so a page hands them over together. Only our own text goes here; what a learner typed is
shown with `st.text`, or escaped with `literal` where it goes into an alert, never as Markdown.
"""

from __future__ import annotations

import re

import streamlit as st

# Everything CommonMark, Streamlit's colour and icon directives (`:red[…]`) or its LaTeX (`$…$`) would read.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")

TITLE, HEADER, SUBHEADER = 1, 2, 3  # the levels of st.title, st.header and st.subheader


def heading(text: str, level: int = HEADER) -> str:
    """`text` as a Markdown heading of `level` (1 to 3, as st.title, st.header, st.subheader draw it)."""
    if level not in (TITLE, HEADER, SUBHEADER):
        raise ValueError(f"A heading's level is 1, 2 or 3, not {level}.")
    if not text.strip() or "\n" in text:
        raise ValueError("A heading is one line of text.")
    return f"{'#' * level} {text}"


def prose(*blocks: str) -> None:
    """Draw `blocks` (headings from `heading`, paragraphs, lists) as one Markdown element, in order."""
    st.markdown("\n\n".join(block for block in blocks if block))


def literal(text: str) -> str:
    """`text` with every character Markdown would read escaped, so an alert shows it exactly as written."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
