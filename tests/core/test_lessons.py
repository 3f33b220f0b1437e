"""Lesson text as content: templates are checked when read and when filled, and the code and the
files under data/lessons agree on what exists and which figures each text names."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import lessons
from core.datafiles import read_json

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("pages", "core", "ui", "charts")


def test_a_template_fills_its_figures_with_their_formats() -> None:
    template = lessons.parse_template("t", "Weights {weights_gb:.1f} GB of {device_gib:g} GiB.\n")
    assert template.names == {"weights_gb", "device_gib"}
    assert template.fill({"weights_gb": 2.4567, "device_gib": 24.0}) == "Weights 2.5 GB of 24 GiB."


def test_literal_braces_are_not_figures() -> None:
    template = lessons.parse_template("t", "A dict is written {{}} and holds {count} keys.")
    assert template.names == {"count"}
    assert template.fill({"count": 3}) == "A dict is written {} and holds 3 keys."


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Weights {} GB", "plain name"),
        ("Weights {0} GB", "plain name"),
        ("Weights {brief.weights_gb} GB", "plain name"),
        ("Weights {weights_gb GB", "unmatched brace"),
        ("Weights weights_gb} GB", "unmatched brace"),
    ],
)
def test_a_field_that_is_not_a_plain_name_is_refused(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        lessons.parse_template("lessons/x/y.md", text)


def test_a_missing_or_unknown_figure_is_named() -> None:
    template = lessons.parse_template("lessons/x/y.md", "{a} and {b}")
    with pytest.raises(ValueError, match=r"lessons/x/y.md needs the figure\(s\) b"):
        template.fill({"a": 1})
    with pytest.raises(ValueError, match=r"does not use the figure\(s\) c"):
        template.fill({"a": 1, "b": 2, "c": 3})


def test_unknown_pages_sections_and_sentences_are_refused() -> None:
    with pytest.raises(ValueError, match="no lesson text"):
        lessons.text("home", "no_such_section")
    with pytest.raises(ValueError, match="not the name of a lesson folder"):
        lessons.text("../core", "intro")
    with pytest.raises(ValueError, match="no sentence 'no_such_key'"):
        lessons.sentence("home", "no_such_key")


@given(
    names=st.lists(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), min_size=1, max_size=5, unique=True)
)
def test_filling_every_named_figure_leaves_no_field_behind(names: list[str]) -> None:
    template = lessons.parse_template("t", " ".join(f"<{{{name}}}>" for name in names))
    filled = template.fill({name: index for index, name in enumerate(names)})
    assert filled == " ".join(f"<{index}>" for index in range(len(names)))


def _calls() -> list[tuple[str, str, str, set[str] | None]]:
    """Every `lessons.text(...)`/`lessons.sentence(...)` with literal names in the code: (kind, page,
    name, keyword figures, or None when figures are passed as **mapping)."""
    found = []
    for folder in CODE_DIRS:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "lessons"
                    and node.func.attr in {"text", "sentence"}
                ):
                    continue
                args = [a.value for a in node.args[:2] if isinstance(a, ast.Constant)]
                if len(args) != 2:
                    continue
                keywords = {k.arg for k in node.keywords if k.arg is not None}
                spread = any(k.arg is None for k in node.keywords)
                found.append((node.func.attr, str(args[0]), str(args[1]), None if spread else keywords))
    return found


def test_every_lesson_file_reads_cleanly() -> None:
    templates = lessons.all_templates()
    assert {"lessons/home/intro.md", "lessons/home/sentences.toml:question"} <= {t.source for t in templates}
    assert all(t.text for t in templates), "an empty lesson text"


def test_the_code_names_only_texts_that_exist_and_gives_each_its_figures() -> None:
    calls = _calls()
    assert calls, "no lesson text is used by the code"
    for kind, page, name, keywords in calls:
        template = lessons.section(page, name) if kind == "text" else lessons.sentences(page)[name]
        if keywords is not None:
            assert keywords == template.names, f"{template.source}: code gives {sorted(keywords)}"


def test_every_lesson_text_is_used_by_the_code() -> None:
    used = {(page, name) for _, page, name, _ in _calls()}
    literals: set[str] = set()
    for folder in CODE_DIRS:
        for path in (ROOT / folder).rglob("*.py"):
            literals |= {
                n.value
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
    for template in lessons.all_templates():
        page, rest = template.source.removeprefix("lessons/").split("/", 1)
        name = rest.removesuffix(".md").split(":")[-1]
        # A page may pick a text by a name it holds in data (a part id, a track); the name must still
        # appear in the code or be used by a literal call.
        assert (page, name) in used or name in literals, f"{template.source} is not used by any page"


def test_home_s_time_estimate_covers_reading_the_lab_and_answering_it():
    main_lab = (
        "home",
        "four_runs",
        "your_run",
        "execution_stack",
        "linear",
        "memory",
        "run_a",
        "quiz_report",
    )
    lesson_words = sum(
        len(path.read_text(encoding="utf-8").split())
        for folder in main_lab
        for path in (lessons.LESSONS_DIR / folder).iterdir()
    )
    bank = read_json("lab.json")
    asked = len(bank["questions"]) + len(bank["predictions"])
    bank_words = len(json.dumps(bank["questions"] + bank["predictions"]).split())
    # 200 words a minute for technical text, and a minute to settle each answer or prediction.
    least_minutes = (lesson_words + bank_words) / 200 + asked
    [stated] = re.findall(r"About (\d+) minutes", lessons.sentence("home", "time_guidance"))
    assert least_minutes <= int(stated) <= 2 * least_minutes
