"""The burst model behind the sizing rule, worked by hand."""

import pytest

from bench.scale_model import burst


def test_one_replica_serves_a_burst_one_run_after_another():
    # 100 runs of 20 ms in a row: the 95th learner waits 95 x 20 ms, the last 2 s; 100 in 2 s is 50 a second.
    model = burst(100, 1, 20.0)
    assert (model.p95_ms, model.slowest_ms, model.reruns_per_s) == (1900.0, 2000.0, 50.0)


def test_eight_replicas_share_the_queue_unevenly_when_the_class_does_not_divide():
    # 100 over 8: four replicas hold 13 learners, four hold 12. Positions 1 to 12 hold 8 learners
    # each (96) and position 13 the last 4, so the 95th wait is position 12 (240 ms) and the slowest
    # 13 x 20 = 260 ms; 100 learners in 0.26 s.
    model = burst(100, 8, 20.0, delivery_ms=5.0)
    assert model.p95_ms == 245.0
    assert model.slowest_ms == 265.0
    assert model.reruns_per_s == pytest.approx(1000 * 100 / 265)


def test_a_burst_without_learners_is_refused():
    with pytest.raises(ValueError, match="at least one learner"):
        burst(0, 2, 20.0)
