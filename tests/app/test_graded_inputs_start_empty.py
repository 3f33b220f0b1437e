"""Every graded input, on every page, starts with nothing chosen: a guess the learner never made cannot be
locked in, and no starting position can sit within a prediction's tolerance of its answer."""

import json
from pathlib import Path

import pytest

from core.questions import load_bank
from tests.app.conftest import open_page

LAB = json.loads((Path(__file__).resolve().parents[2] / "data" / "lab.json").read_text())
PAGES = sorted({part["page"] for part in LAB["parts"]} | {"pages/scaling.py"})
GRADED = ("predict.", "marked.", "scaling.predict.")
CHOOSERS = ("radio", "selectbox", "select_slider", "slider")


def graded_inputs(at) -> dict[str, object]:
    """Every open (not locked) graded input the page drew, by key, with the value it starts with."""
    return {
        w.key: w.value
        for kind in CHOOSERS
        for w in at.get(kind)
        if w.key and w.key.startswith(GRADED) and not w.key.endswith(".locked")
    }


@pytest.mark.parametrize("page", PAGES)
def test_no_graded_input_starts_on_an_option(page):
    at = open_page(page)
    assert not at.exception
    started = {key: value for key, value in graded_inputs(at).items() if value is not None}
    assert started == {}, f"{page}: these graded inputs start on an option: {started}"


def test_every_prediction_drawn_on_first_open_was_checked():
    """The check above sees the lesson predictions a page asks before anything else is done."""
    seen = set()
    for page in ("pages/linear_layer.py", "pages/memory_budget.py"):
        seen |= set(graded_inputs(open_page(page)))
    asked_first = {p.id for p in load_bank().predictions if p.part in ("linear", "memory")}
    assert {f"predict.{pid}" for pid in asked_first} <= seen
