"""Part E: steps and time to a quality target from the McCandlish batch curve."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.scaling.quality import compare_policies, steps_to_target
from core.scaling.scenarios import Convergence, StragglerPolicy, track

CLOUD_CURVE = Convergence(minimum_steps=2500, critical_batch=2048)


def test_time_to_target_worked_by_hand():
    # 2,500 x (1 + 2,048 / 256) = 2,500 x 9 = 22,500 steps; at 1 s a step that is 6.25 h.
    assert steps_to_target(convergence=CLOUD_CURVE, global_batch=256) == 22_500
    result = compare_policies(
        step_ms=1000, global_batch=256, convergence=CLOUD_CURVE, straggler=StragglerPolicy(0.75, 1.55)
    )
    assert result.strict.time_to_target_h == pytest.approx(6.25)
    # Dropping stragglers: 750 ms steps, ceil(22,500 x 1.55) = 34,875 steps -> 26,156 s = 7.266 h.
    assert result.drop.steps == 34_875
    assert result.drop.time_to_target_h == pytest.approx(750 * 34_875 / 3.6e6)
    assert result.winner == "strict"


def test_a_batch_at_the_critical_size_doubles_the_minimum_steps():
    assert steps_to_target(convergence=CLOUD_CURVE, global_batch=2048) == 5000


def test_cheap_straggler_policy_wins_and_equal_times_tie():
    curve = track("tinyml").convergence
    cheap = compare_policies(
        step_ms=10, global_batch=256, convergence=curve, straggler=StragglerPolicy(0.5, 1.0)
    )
    assert cheap.winner == "drop"
    even = compare_policies(
        step_ms=10, global_batch=256, convergence=curve, straggler=StragglerPolicy(1.0, 1.0)
    )
    assert even.winner == "tie"


@pytest.mark.parametrize("bad", [dict(global_batch=0), dict(work_multiplier=0.9)])
def test_bad_inputs_are_refused(bad):
    with pytest.raises(ValueError):
        steps_to_target(convergence=CLOUD_CURVE, **({"global_batch": 256} | bad))


@given(st.floats(1, 1e6), st.floats(1, 1e6))
def test_a_bigger_batch_never_needs_more_steps_and_never_beats_the_minimum(batch, extra):
    small = steps_to_target(convergence=CLOUD_CURVE, global_batch=batch)
    large = steps_to_target(convergence=CLOUD_CURVE, global_batch=batch + extra)
    assert CLOUD_CURVE.minimum_steps <= large <= small
