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
    before = colour_pixels(chart_png(learner), TERM_COLOURS["activations"])
    assert before > SWATCH_PX
    assert colour_pixels(chart_png(learner), TERM_COLOURS["parameters"]) > SWATCH_PX
    learner.slide(
        "Batch (B)", presses=2
    )  # 4 -> 6 sequences: activations grow by half, the bar stays under the device line
    after = colour_pixels(chart_png(learner), TERM_COLOURS["activations"])
    assert after > before * 1.2
    assert learner.exceptions() == [] and learner.console_errors == []


def test_the_roofline_points_move_when_the_batch_does(learner):
    # The roofline's axes, title and legend are fixed, so only drawn rows can change its picture.
    learner.open("linear-layer")
    before = hashlib.sha256(chart_png(learner)).hexdigest()
    learner.slide("Batch (B)", presses=3)
    assert hashlib.sha256(chart_png(learner)).hexdigest() != before
    assert learner.exceptions() == [] and learner.console_errors == []


@pytest.mark.parametrize("path", ["four-runs", "linear-layer", "memory-budget", "run-a"])
def test_every_chart_fits_a_laptop_window(learner, path):
    learner.page.set_viewport_size({"width": 1280, "height": 800})
    learner.open(path)
    drawn = learner.page.locator(DRAWN_CHART)
    drawn.first.wait_for()
    window_px = learner.page.evaluate("() => document.documentElement.clientWidth")
    rights_px = drawn.evaluate_all("charts => charts.map(c => c.getBoundingClientRect().right)")
    assert rights_px and max(rights_px) <= window_px
