"""Part E: steps and time to a quality target from the McCandlish batch curve."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.scaling.quality import compare_policies, steps_to_target
from core.scaling.tracks import Convergence, StragglerPolicy

CLOUD_CURVE = Convergence(minimum_steps=2500, critical_batch=2048)


def test_time_to_target_worked_by_hand():
    # 2,500 x (1 + 2,048 / 256) = 2,500 x 9 = 22,500 steps; at 1 s + a 10 ms lag a step: 1.01 x 6.25 h.
    assert steps_to_target(convergence=CLOUD_CURVE, global_batch=256) == 22_500
    result = compare_policies(
        step_ms=1000, global_batch=256, convergence=CLOUD_CURVE, straggler=StragglerPolicy(10, 1.55)
    )
    assert result.strict.step_ms == 1010
    assert result.strict.time_to_target_h == pytest.approx(6.3125)
    # Dropping stragglers: 1,000 ms steps with no wait, ceil(22,500 x 1.55) = 34,875 steps = 9.6875 h.
    assert result.drop.steps == 34_875
    assert result.drop.time_to_target_h == pytest.approx(1000 * 34_875 / 3.6e6)
    assert result.winner == "strict"


def test_a_batch_at_the_critical_size_doubles_the_minimum_steps():
    assert steps_to_target(convergence=CLOUD_CURVE, global_batch=2048) == 5000


def test_a_lag_longer_than_the_lost_work_makes_dropping_win_and_the_break_even_ties():
    curve = Convergence(minimum_steps=1000, critical_batch=256)  # 2,000 steps at a batch of 256
    # Dropping costs (1.5 - 1) x 4 ms = 2 ms a step's worth of extra steps: a 3 ms lag is worse.
    short = compare_policies(
        step_ms=4, global_batch=256, convergence=curve, straggler=StragglerPolicy(3, 1.5)
    )
    assert (short.strict.time_to_target_h, short.drop.time_to_target_h) == pytest.approx(
        (7 * 2000 / 3.6e6, 4 * 3000 / 3.6e6)
    )
    assert short.winner == "drop"
    even = compare_policies(step_ms=4, global_batch=256, convergence=curve, straggler=StragglerPolicy(2, 1.5))
    assert even.winner == "tie"  # 6 ms x 2,000 = 4 ms x 3,000
    long = compare_policies(
        step_ms=400, global_batch=256, convergence=curve, straggler=StragglerPolicy(3, 1.5)
    )
    assert long.winner == "strict"


@given(st.floats(0.01, 1e5), st.floats(0.01, 1e4), st.floats(1.0, 3.0))
def test_dropping_wins_exactly_when_the_lag_outweighs_the_lost_work(step_ms, lag_ms, work):
    curve = Convergence(minimum_steps=1000, critical_batch=1000)  # 2,000 steps at a batch of 1,000
    result = compare_policies(
        step_ms=step_ms, global_batch=1000, convergence=curve, straggler=StragglerPolicy(lag_ms, work)
    )
    strict, drop = (step_ms + lag_ms) * 2000, step_ms * math.ceil(2000 * work)
    if abs(strict - drop) > 0.011 * max(strict, drop):  # clear of the 1% tie band
        assert result.winner == ("drop" if drop < strict else "strict")


@pytest.mark.parametrize("bad", [dict(global_batch=0), dict(work_multiplier=0.9)])
def test_bad_inputs_are_refused(bad):
    with pytest.raises(ValueError):
        steps_to_target(convergence=CLOUD_CURVE, **({"global_batch": 256} | bad))


@given(st.floats(1, 1e6), st.floats(1, 1e6))
def test_a_bigger_batch_never_needs_more_steps_and_never_beats_the_minimum(batch, extra):
    small = steps_to_target(convergence=CLOUD_CURVE, global_batch=batch)
    large = steps_to_target(convergence=CLOUD_CURVE, global_batch=batch + extra)
    assert CLOUD_CURVE.minimum_steps <= large <= small
