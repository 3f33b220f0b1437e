"""Pipeline bubble and retained micro-batches (parts C and D)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.scaling.pipeline import bubble_fraction, bubble_ms, retained_micro_batches


@pytest.mark.parametrize(
    "micro_batches, expected",
    [(2, 7 / 9), (4, 7 / 11), (8, 7 / 15), (16, 7 / 23)],  # (8 - 1) / (m + 8 - 1)
)
def test_bubble_fraction_for_eight_stages(micro_batches, expected):
    assert bubble_fraction(stages=8, micro_batches=micro_batches) == pytest.approx(expected)


def test_eight_stages_by_hand_in_decimals():
    assert [round(bubble_fraction(stages=8, micro_batches=m), 3) for m in (2, 4, 8, 16)] == [
        0.778,
        0.636,
        0.467,
        0.304,
    ]


def test_bubble_time_is_the_idle_share_of_the_total():
    # 2 stages, 8 micro-batches, 400 ms of work: idle = 1/8 x 400 = 50 ms, and 50 / 450 = 1/9 = (2-1)/(8+2-1).
    idle = bubble_ms(stages=2, micro_batches=8, busy_ms=400)
    assert idle == pytest.approx(50)
    assert idle / (400 + idle) == pytest.approx(bubble_fraction(stages=2, micro_batches=8))


def test_retained_micro_batches_are_capped_by_depth():
    assert [retained_micro_batches(stages=8, micro_batches=m) for m in (2, 4, 8, 16)] == [2, 4, 8, 8]


def test_a_single_stage_has_no_bubble_and_bad_counts_are_refused():
    assert bubble_fraction(stages=1, micro_batches=4) == 0
    for bad in (dict(stages=0, micro_batches=4), dict(stages=4, micro_batches=0)):
        with pytest.raises(ValueError):
            bubble_fraction(**bad)


@given(st.integers(1, 64), st.integers(1, 256), st.integers(1, 256))
def test_more_micro_batches_never_grow_the_bubble(stages, fewer, more_by):
    assert bubble_fraction(stages=stages, micro_batches=fewer + more_by) <= bubble_fraction(
        stages=stages, micro_batches=fewer
    )
    assert retained_micro_batches(stages=stages, micro_batches=fewer + more_by) >= retained_micro_batches(
        stages=stages, micro_batches=fewer
    )
