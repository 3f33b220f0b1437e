"""Lesson text as content: what a page says lives in `data/lessons/<page>/`, not in Python.

A page section is one Markdown file (`<section>.md`); short sentences of a page (captions, verdicts,
labels) are entries of its `sentences.toml`. Either may name figures the code supplies, written as
Python format fields: `{weights_gb:.1f}`. A template is checked when it is read (every field a plain
name) and when it is filled (every field given a figure, no figure it does not name), so an
instructor can reword a sentence freely and a test catches a figure that went missing.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from core.datafiles import DATA_DIR

LESSONS_DIR = DATA_DIR / "lessons"
SENTENCES_FILE = "sentences.toml"


@dataclass(frozen=True)
class Template:
    """One piece of lesson text and the names of the figures it needs."""

    # Where it lives, for messages: "lessons/memory/intro.md" or "lessons/memory/sentences.toml:fits".
    source: str
    text: str
    names: frozenset[str]

    def fill(self, figures: Mapping[str, object]) -> str:
        """The text with every named figure in place; a missing or unexpected figure is a ValueError."""
        missing = sorted(self.names - figures.keys())
        unknown = sorted(figures.keys() - self.names)
        if missing:
            raise ValueError(f"{self.source} needs the figure(s) {', '.join(missing)}.")
        if unknown:
            raise ValueError(f"{self.source} does not use the figure(s) {', '.join(unknown)}.")
        return self.text.format_map(figures)


def parse_template(source: str, text: str) -> Template:
    """A template from raw text; fields must be plain names (no `{}`, `{0}` or `{a.b}`)."""
    names: set[str] = set()
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    except ValueError as err:
        raise ValueError(
            f"{source} has an unmatched brace ({err}); write a literal brace as {{{{ or }}}}."
        ) from None
    for field in fields:
        if not field.isidentifier():
            raise ValueError(
                f"{source} names the figure {{{field}}}; a figure must be a plain name like weights_gb."
            )
        names.add(field)
    return Template(source=source, text=text.strip(), names=frozenset(names))


def _page_dir(page: str) -> Path:
    if not page.isidentifier():
        raise ValueError(f"{page!r} is not the name of a lesson folder.")
    return LESSONS_DIR / page


@cache
def section(page: str, name: str) -> Template:
    """The Markdown section `data/lessons/<page>/<name>.md`."""
    path = _page_dir(page) / f"{name}.md"
    if not name.isidentifier() or not path.is_file():
        raise ValueError(f"There is no lesson text lessons/{page}/{name}.md.")
    return parse_template(f"lessons/{page}/{name}.md", path.read_text(encoding="utf-8"))


@cache
def sentences(page: str) -> Mapping[str, Template]:
    """Every entry of `data/lessons/<page>/sentences.toml`, by key."""
    path = _page_dir(page) / SENTENCES_FILE
    source = f"lessons/{page}/{SENTENCES_FILE}"
    if not path.is_file():
        raise ValueError(f"There is no {source}.")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{source} is not valid TOML: {err}") from None
    templates = {}
    for key, value in raw.items():
        if not isinstance(value, str):
            raise ValueError(f"{source}: {key} must be a string of text.")
        templates[key] = parse_template(f"{source}:{key}", value)
    return templates


def text(page: str, name: str, **figures: object) -> str:
    """The section `name` of `page` with its figures filled in."""
    return section(page, name).fill(figures)


def sentence(page: str, key: str, **figures: object) -> str:
    """The sentence `key` of `page`'s sentences.toml with its figures filled in."""
    entries = sentences(page)
    if key not in entries:
        raise ValueError(f"lessons/{page}/{SENTENCES_FILE} has no sentence {key!r}.")
    return entries[key].fill(figures)


def all_templates() -> list[Template]:
    """Every template under `data/lessons/`, read and checked (for tests and reviewers)."""
    found: list[Template] = []
    for folder in sorted(p for p in LESSONS_DIR.iterdir() if p.is_dir()):
        for path in sorted(folder.glob("*.md")):
            found.append(section(folder.name, path.stem))
        if (folder / SENTENCES_FILE).is_file():
            found.extend(sentences(folder.name).values())
    return found
