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

from charts.memory import TERM_COLOURS

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


# Every page of the lab; Home and the execution stack draw no chart but have tables and columns to fit.
EVERY_PAGE = [
    "",
    "four-runs",
    "execution-stack",
    "linear-layer",
    "memory-budget",
    "run-a",
    "quiz-report",
    "scaling",
]
WITH_CHARTS = {"four-runs", "linear-layer", "memory-budget", "run-a", "scaling"}


@pytest.mark.parametrize("path", EVERY_PAGE)
def test_every_chart_and_table_fits_a_phone(learner, path):
    assert_everything_fits(learner, path, width_px=390, height_px=844)


def assert_everything_fits(learner, path: str, *, width_px: int, height_px: int) -> None:
    """Open `path` at this window size, lock its predictions, and check that no chart or table reaches past
    the right edge of the window."""
    learner.page.set_viewport_size({"width": width_px, "height": height_px})
    learner.open(path)
    learner.predict_all()
    drawn = learner.page.locator(DRAWN_CHART)
    if path in WITH_CHARTS:
        drawn.first.wait_for()
        learner.page.wait_for_timeout(300)  # Vega lays a chart out a moment after drawing it
    window_px = learner.page.evaluate("() => document.documentElement.clientWidth")
    boxes = learner.page.locator(f'{DRAWN_CHART}, [data-testid="stTable"], [data-testid="stDataFrame"]')
    rights_px = boxes.evaluate_all("items => items.map(i => i.getBoundingClientRect().right)")
    assert (path not in WITH_CHARTS or drawn.count()) and all(right <= window_px for right in rights_px), (
        path,
        window_px,
        rights_px,
    )
    assert learner.exceptions() == []
