"""Charts draw their rows in a real browser: the rows travel as Arrow datasets, cached layouts and
fresh rows alike, and only a browser shows that Vega-Lite reads them.

The budget check counts the pixels of a bar's own colour in a screenshot of the chart: the
legend shows every colour too, but as a small swatch, and a drawn bar covers many times more.
"""

import hashlib
from io import BytesIO

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from charts.memory import TERM_COLOURS
from core import lessons
from core.questions import load_bank
from core.run_a import FIRST_EXPERIMENTS
from tests.e2e.conftest import shown

pytestmark = pytest.mark.e2e

SWATCH_PX = 300  # comfortably more than any legend swatch of one colour
DRAWN_CHART = '[data-testid="stVegaLiteChart"] svg.marks'  # Vega's drawing, there once a chart is drawn


def colour_pixels(png: bytes, colour: str, tolerance: int = 8) -> int:
    """How many pixels of the image are within `tolerance` (per channel) of the hex `colour`."""
    target = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    pixels = np.asarray(Image.open(BytesIO(png)).convert("RGB"), dtype=int)
    return int((np.abs(pixels - target) <= tolerance).all(axis=-1).sum())


def chart_png(learner) -> bytes:
    """A screenshot of the page's first chart."""
    chart = learner.page.locator('[data-testid="stVegaLiteChart"]').first
    chart.scroll_into_view_if_needed()
    learner.page.wait_for_timeout(300)  # Vega draws a moment after the element appears
    return chart.screenshot()


def test_the_memory_budget_bar_is_drawn_and_grows_with_the_batch(learner):
    learner.open("memory-budget")
    learner.predict_all()
    before = colour_pixels(chart_png(learner), TERM_COLOURS["activations"])
    assert before > SWATCH_PX
    assert colour_pixels(chart_png(learner), TERM_COLOURS["parameters"]) > SWATCH_PX
    learner.slide(
        "Batch (B)", presses=2
    )  # 4 -> 6 sequences: activations grow by half, the bar stays under the device line
    after = colour_pixels(chart_png(learner), TERM_COLOURS["activations"])
    assert after > before * 1.2
    # The legend reads each term's GB from the drawn rows: 6 sequences of 1,024 tokens keep 3.22 GB.
    legend = (
        learner.page.locator('[data-testid="stVegaLiteChart"]').first.locator("svg text").all_text_contents()
    )
    assert "Saved activations: 3.22 GB" in legend and "Optimizer state: 6.44 GB" in legend
    assert learner.exceptions() == [] and learner.console_errors == []


def test_the_roofline_points_move_when_the_batch_does(learner):
    # The roofline's axes, title and legend are fixed, so only drawn rows can change its picture.
    learner.open("linear-layer")
    learner.predict_all()
    before = hashlib.sha256(chart_png(learner)).hexdigest()
    learner.slide("Batch (B)", presses=3)
    assert hashlib.sha256(chart_png(learner)).hexdigest() != before
    assert learner.exceptions() == [] and learner.console_errors == []


@pytest.mark.parametrize("path", ["four-runs", "linear-layer", "memory-budget", "run-a"])
def test_every_chart_fits_a_laptop_window(learner, path):
    assert_everything_fits(learner, path, width_px=1280, height_px=800)


# Every page of the lab, with the tables it shows once its predictions are locked and its expanders open
# (Run A's experiments too: three answers, the phases, and two each for the four experiments and for the
# pair). Four runs, the execution stack and Your run show none, but have columns to fit.
TABLES_SHOWN = {
    "": 1,
    "four-runs": 0,
    "execution-stack": 0,
    "linear-layer": 3,
    "memory-budget": 5,
    "run-a": 6,
    "your-run": 0,
    "quiz-report": 2,
    "scaling": 1,  # part A's; the other tabs' are checked one tab at a time below
}
WITH_CHARTS = {"four-runs", "linear-layer", "memory-budget", "run-a", "your-run", "scaling"}
TABLES = '[data-testid="stTable"]:visible, [data-testid="stDataFrame"]:visible'


@pytest.mark.parametrize("path", TABLES_SHOWN)
def test_every_chart_and_table_fits_a_phone(learner, path):
    # On a 390 px phone a table that only fits its box by scrolling inside it hides its last columns.
    assert_everything_fits(learner, path, width_px=390, height_px=844)
    assert learner.page.locator(TABLES).count() == TABLES_SHOWN[path], path  # every one checked, none skipped


def assert_everything_fits(learner, path: str, *, width_px: int, height_px: int) -> None:
    """Open `path` at this window size, lock its predictions, and check that no chart or table reaches past
    the right edge of the window."""
    learner.page.set_viewport_size({"width": width_px, "height": height_px})
    learner.open(path)
    learner.predict_all()
    if path == "four-runs":  # the dashboards open once the runs are sorted
        learner.sort_four_runs()
    if path == "run-a":  # a saved decision opens the experiments: two more timelines and their tables
        learner.submit_form(0, "Only activations grow with the tokens.", option=FIRST_EXPERIMENTS["batch"])
        learner.page.get_by_role("heading", name=lessons.sentence("run_a", "two_changes_heading")).wait_for()
        learner.predict_all()  # the pair's guess, which the pair's timeline and table wait for
    open_every_expander(learner)
    expected_charts = {"run-a": 6}.get(path, 1 if path in WITH_CHARTS else 0)
    assert_shown_fits(learner, path, expected_charts)


def open_every_expander(learner) -> None:
    """Open every closed expander of the main area, so that the tables inside are measured too."""
    closed = learner.page.locator(
        '[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary'
    )
    for _ in range(closed.count()):
        closed.first.click()
        # A box built only while open reruns its part of the page when opened: wait for that run (a
        # fixed pause can lose the race on a busy machine); it also outlasts the opening animation.
        learner.settle()


def test_the_instructor_view_fits_a_phone(learner, second_learner):
    # The class view's tables, a wrong answer's included, with one learner in the room.
    link = learner.create_room()
    second_learner.join_room(link)
    second_learner.nav("Four runs")
    second_learner.answer(load_bank().question("r1").option_text("speed"))  # a wrong answer, on purpose
    learner.page.set_viewport_size({"width": 390, "height": 844})
    learner.page.get_by_text(shown(lessons.sentence("instructor", "wrong_answers_heading"))).wait_for()
    expect(learner.page.locator(TABLES)).to_have_count(3, timeout=15_000)  # the view refreshes every 5 s
    assert_shown_fits(learner, "instructor", expected_charts=1)


def assert_shown_fits(learner, where: str, expected_charts: int) -> None:
    """No chart or table in view (hidden tabs aside) reaches past the window, no table scrolls sideways
    inside its box, and no chart's text is drawn past its own edge (a legend or label cut off even though
    the chart's box fits, or drawn over what follows the chart)."""
    drawn = learner.page.locator(f"{DRAWN_CHART}:visible")
    if expected_charts:
        drawn.first.wait_for()
        learner.page.wait_for_timeout(300)  # Vega lays a chart out a moment after drawing it
    window_px = learner.page.evaluate("() => document.documentElement.clientWidth")
    boxes = learner.page.locator(f"{DRAWN_CHART}:visible, {TABLES}")
    rights_px = boxes.evaluate_all("items => items.map(i => i.getBoundingClientRect().right)")
    assert drawn.count() >= expected_charts and all(right <= window_px for right in rights_px), (
        where,
        window_px,
        rights_px,
    )
    # A chart's text past its own right edge, or below the box the page keeps for it, over what follows.
    cut = drawn.locator("text").evaluate_all(
        """items => items.filter(i => {
            const text = i.getBoundingClientRect();
            const svg = i.closest('svg').getBoundingClientRect();
            const box = i.closest('[data-testid="stVegaLiteChart"]').getBoundingClientRect();
            return text.right > svg.right + 1 || text.bottom > box.bottom + 1;
        }).map(i => i.textContent)"""
    )
    assert cut == [], (where, cut)
    assert_no_table_scrolls_sideways(learner, where)
    assert learner.exceptions() == []


@pytest.mark.parametrize("width_px", [390, 1366])
def test_every_scaling_tab_fits_and_every_tab_is_on_the_strip(learner, width_px):
    learner.page.set_viewport_size({"width": width_px, "height": 900})
    learner.open("scaling")
    tabs = learner.page.get_by_role("tab")
    assert tabs.count() == 6
    if width_px == 1366:  # a laptop shows the whole strip, Synthesis included, without scrolling it
        strip = learner.page.get_by_role("tablist").first.evaluate(
            "t => [t.getBoundingClientRect().right, t.scrollWidth, t.clientWidth]"
        )
        rights = tabs.evaluate_all("ts => ts.map(t => t.getBoundingClientRect().right)")
        assert strip[1] == strip[2] and max(rights) <= strip[0], (strip, rights)
    for index in range(tabs.count()):
        tabs.nth(index).click()
        learner.settle()
        learner.predict_all()
        # Every part draws a chart; the synthesis tab only tables.
        assert_shown_fits(learner, f"scaling tab {index} at {width_px}", 0 if index == 5 else 1)
        assert learner.page.locator(TABLES).count() >= 1  # every tab shows its figures as a table too


def assert_no_table_scrolls_sideways(learner, where: str) -> None:
    """Every table in view is as wide as its box or narrower: neither it nor anything inside it is wider
    than its own box (a table that fits the window can still hide columns behind a sideways scroll)."""
    overflowing = learner.page.locator(TABLES).evaluate_all(
        """tables => tables.map(t => [
                t.innerText.slice(0, 40),
                [t, ...t.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1)
                    .map(e => `${e.tagName} ${e.scrollWidth}>${e.clientWidth}`),
            ]).filter(([, wide]) => wide.length)"""
    )
    assert overflowing == [], (where, overflowing)


def test_the_scaling_efficiency_chart_keeps_its_title_and_a_plot_of_its_own_height(learner):
    # Fitting the whole chart into its height once left Part A's plot a sliver under its legend, untitled.
    learner.page.set_viewport_size({"width": 390, "height": 844})
    learner.open("scaling")
    learner.predict_all()
    chart = learner.page.locator(f"{DRAWN_CHART}:visible").first
    chart.wait_for()
    learner.page.wait_for_timeout(300)
    tops = dict(
        chart.locator("text").evaluate_all(
            "ts => ts.map(t => [t.textContent, t.getBoundingClientRect().top])"
        )
    )
    assert "Parallel efficiency as the pool grows" in tops
    assert tops["0.0"] - tops["1.0"] >= 200, tops  # charts.scaling.HEIGHT is 280 px, 1.0 sits at 95% of it
