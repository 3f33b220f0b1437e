"""The detectors' rolling median and plateau search, checked against the naive versions they replace."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.diagnose.detectors import SPIKE_MADS, SPIKE_RATIO, SPIKE_WINDOW, plateau_step, spike_steps
from core.diagnose.stats import mad, median, rolling_median
from tests.core.diagnose_helpers import make_run

# Few distinct values make ties (and values leaving the window that equal the median) common.
VALUES = st.lists(st.integers(-3, 3).map(float) | st.floats(-1e6, 1e6), min_size=1, max_size=80)


def _naive_rolling(values: list[float], width: int) -> list[float]:
    return [median(values[max(0, i - width + 1) : i + 1]) for i in range(len(values))]


def _naive_plateau(steps: list[float], values: list[float]) -> float:
    """The search as it was: each index checks every smoothed value after it (O(n²))."""
    width = max(3, len(values) // 10)
    smoothed = _naive_rolling(values, width)
    final, start = median(values[-width:]), median(values[:width])
    tolerance = max(0.02 * abs(final), 0.1 * max(0.0, start - final))
    for i in range(len(smoothed)):
        if all(abs(v - final) <= tolerance for v in smoothed[i:]):
            return steps[i]
    return steps[-1]


def _naive_spikes(values: list[float]) -> tuple[float, ...]:
    found = []
    for i in range(SPIKE_WINDOW, len(values)):
        recent = values[i - SPIKE_WINDOW : i]
        level = median(recent)
        if values[i] - level > max(SPIKE_MADS * mad(recent), SPIKE_RATIO * abs(level)) > 0:
            found.append(float(i))
    return tuple(found)


@given(VALUES, st.integers(1, 30))
def test_the_rolling_median_equals_the_median_of_each_window(values, width):
    assert rolling_median(values, width) == _naive_rolling(values, width)


@given(VALUES.filter(lambda v: len(v) >= 3))
def test_the_plateau_step_equals_the_quadratic_search(values):
    steps = [float(i) for i in range(len(values))]
    assert plateau_step(steps, values) == _naive_plateau(steps, values)


@given(st.lists(st.integers(0, 5).map(float) | st.floats(0, 100), min_size=1, max_size=120))
def test_spike_steps_equal_the_window_by_window_search(values):
    assert spike_steps(make_run(loss=values).series["loss"]) == _naive_spikes(values)


def test_a_worked_example():
    # Windows of 3: [5] [5,1] [5,1,3] [1,3,2] [3,2,8] -> 5, 3, 3, 2, 3.
    assert rolling_median([5.0, 1.0, 3.0, 2.0, 8.0], 3) == [5.0, 3.0, 3.0, 2.0, 3.0]
