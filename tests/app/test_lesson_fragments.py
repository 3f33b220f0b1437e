"""Every lesson page draws its body through `ui.frame.lesson_page`, so a click on the page reruns the
body (one fragment) and not the frame around it; the browser test checks what that sends."""

from __future__ import annotations

import ast

import pytest

from ui.nav import LESSONS, PAGES_DIR

# Top-level statements a page may have besides its last line: imports, definitions and constants.
ALLOWED = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


@pytest.mark.parametrize("entry", LESSONS, ids=lambda entry: entry.file)
def test_a_lesson_page_draws_nothing_outside_its_fragment(entry):
    module = ast.parse((PAGES_DIR / entry.file).read_text())
    body = module.body[1:] if ast.get_docstring(module) else module.body
    *definitions, last = body
    assert ast.unparse(last) == "lesson_page(draw)", f"{entry.file} must end with lesson_page(draw)"
    drawn = [ast.unparse(node).splitlines()[0] for node in definitions if not isinstance(node, ALLOWED)]
    assert drawn == [], f"{entry.file} runs these outside draw(): {drawn}"
