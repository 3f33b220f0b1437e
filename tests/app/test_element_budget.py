"""Each page keeps to its element budget (tests/app/element_budget.toml): under a class clicking at once
the server's CPU for a run follows the number of elements it draws, so a page may not quietly grow."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.predictions import record_name
from core.questions import load_bank
from tests.app.conftest import HOME, LOCK_ANSWER, drawn, open_page
from ui.nav import PAGES

BUDGET_FILE = Path(__file__).with_name("element_budget.toml")
STATES = ("new", "done")


def budgets() -> dict[str, dict[str, int]]:
    """The budget file, read as it is: state -> page file -> elements a whole run may draw."""
    return tomllib.loads(BUDGET_FILE.read_text())


def _learner(state: str) -> AppTest:
    at = AppTest.from_file(str(HOME), default_timeout=30)
    if state == "done":
        bank = load_bank()
        at.session_state["answers"] = {q.id: q.correct for q in bank.questions}
        at.session_state["records"] = {
            record_name(p.id): {"choice": p.option_ids()[0], "actual": p.option_ids()[0]}
            for p in bank.predictions
        }
    return open_page(at=at)


def _visit_every_page(state: str) -> dict[str, Counter[str]]:
    at = _learner(state)
    counts = {}
    for entry in PAGES:
        at = open_page(f"pages/{entry.file}", at=at)
        assert not at.exception, f"{entry.file} raised: {at.exception}"
        if state == "done":  # the seeded work took: nothing is left to lock
            still_open = [b.label for b in at.button if b.label == LOCK_ANSWER or _locks_a_guess(b)]
            assert still_open == [], f"{entry.file} still asks: {still_open}"
        counts[entry.file] = drawn(at)
    return counts


def _locks_a_guess(button: Any) -> bool:
    return bool(button.key) and button.key.startswith("predict.") and button.key.endswith(".lock")


def test_counting_takes_every_element_and_block_of_the_main_area():
    def page() -> None:
        import streamlit as st

        st.markdown("a line")
        with st.container(border=True):
            st.caption("in a box")
            left, right = st.columns(2)
            left.metric("Checks", "1/2")
        st.sidebar.progress(0.5)  # the frame's place: not the page's

    at = AppTest.from_function(page).run()
    assert drawn(at) == Counter({"markdown": 1, "flex_container": 2, "caption": 1, "column": 2, "metric": 1})


def test_the_budget_file_names_every_page_in_both_states_and_nothing_else():
    files = {entry.file for entry in PAGES}
    loaded = budgets()
    assert set(loaded) == set(STATES)
    for state in STATES:
        assert set(loaded[state]) == files, state
        assert all(isinstance(n, int) and n > 0 for n in loaded[state].values()), state


@pytest.mark.parametrize("state", STATES)
def test_every_page_draws_no_more_than_its_budget(state):
    limits = budgets()[state]
    over = {
        page: f"{sum(kinds.values())} drawn, budget {limits[page]}: {dict(kinds.most_common(6))}"
        for page, kinds in _visit_every_page(state).items()
        if sum(kinds.values()) > limits[page]
    }
    assert over == {}, (
        "Over the element budget in tests/app/element_budget.toml (each element costs the server "
        "about 0.4 ms of CPU a run when a class clicks at once; see the file's header):\n"
        + "\n".join(f"  {page}: {text}" for page, text in over.items())
    )
