"""Every marked check comes before the text or widget that answers it, and a wrong answer names its trap."""

from collections.abc import Iterator
from typing import Any

import pytest

from core.questions import load_bank
from tests.app.conftest import (
    FOUR_RUNS_SORTED,
    answer,
    lock_answer,
    open_page,
    reveal_roofline,
    sketch_budget,
    sort_four_runs,
)

# Lock the page's own predictions first, so everything the page can show is on it.
REVEAL = {
    "pages/four_runs.py": sort_four_runs,
    "pages/linear_layer.py": reveal_roofline,
    "pages/memory_budget.py": sketch_budget,
}


def _walk(node: Any) -> Iterator[Any]:
    """Every element of the page in the order it is drawn."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _first(at, matches) -> int:
    for index, node in enumerate(_walk(at.main)):
        if matches(node):
            return index
    raise AssertionError("nothing on the page matched")


def _question(question_id: str):
    # Open, or locked where the page shows what gives it away only once it is answered.
    return lambda node: (
        getattr(node, "key", None) in (f"marked.{question_id}.choice", f"marked.{question_id}.locked")
    )


def _chart(node: Any) -> bool:
    return node.type == "vega_lite_chart"


def _text(fragment: str):
    return lambda node: node.type == "markdown" and fragment in str(getattr(node, "value", ""))


@pytest.mark.parametrize(
    ("page", "question_id", "reveal"),
    [
        ("pages/four_runs.py", "r1", _chart),
        ("pages/four_runs.py", "r4", _chart),
        ("pages/execution_stack.py", "c1", lambda node: getattr(node, "key", None) == "stack.symptom"),
        ("pages/linear_layer.py", "c2", _text("arithmetic intensity")),
        ("pages/linear_layer.py", "c2", _chart),
        ("pages/memory_budget.py", "c3", _text("no_grad")),
        ("pages/memory_budget.py", "c4", _chart),
    ],
)
def test_the_check_comes_before_what_gives_it_away(page, question_id, reveal):
    at = open_page(page)
    at = REVEAL.get(page, lambda opened: opened)(at)
    assert not at.exception
    assert _first(at, _question(question_id)) < _first(at, reveal)


def test_four_runs_shows_no_dashboard_until_all_four_runs_are_sorted():
    at = open_page("pages/four_runs.py")
    *first_three, last = FOUR_RUNS_SORTED.items()
    for question_id, option_id in first_three:
        assert not at.get("vega_lite_chart") and not at.tabs  # nothing a dashboard shows is drawn yet
        answer(at, question_id, option_id)
    assert not at.get("vega_lite_chart") and not at.tabs
    answer(at, *last)
    assert [t.label for t in at.tabs] == ["Run A", "Run B", "Run C", "Run D"]
    assert len(at.get("vega_lite_chart")) == 2  # Run A's two panels, its tab open first


def test_the_lock_that_completes_the_sorting_draws_the_dashboards_in_its_own_run():
    at = open_page("pages/four_runs.py")
    *first_three, (question_id, option_id) = FOUR_RUNS_SORTED.items()
    for earlier in first_three:
        answer(at, *earlier)
    lock_answer(at, question_id, option_id)  # no second run: what the lock's own run drew
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 2


def test_a_wrong_answer_names_the_misconception_behind_it():
    at = open_page("pages/linear_layer.py")
    answer(at, "c2", "a")
    [warning] = [w.value for w in at.warning if "Not quite" in w.value]
    misconception = load_bank().question("c2").misconception("a")
    assert misconception is not None and misconception in warning
