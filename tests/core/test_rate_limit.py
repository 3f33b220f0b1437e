"""The token bucket behind the per-connection message cap, with time passed in by the test."""

import pytest

from core.rate_limit import TokenBucket


def test_a_burst_up_to_capacity_passes_then_the_rate_holds():
    bucket = TokenBucket.full(capacity=4, per_s=2, now_s=0.0)
    assert [bucket.take(0.0) for _ in range(5)] == [True, True, True, True, False]
    # Half a second at 2 a second earns exactly one message back.
    assert bucket.take(0.5) is True and bucket.take(0.5) is False


def test_a_flood_gets_the_rate_and_not_more():
    bucket = TokenBucket.full(capacity=40, per_s=10, now_s=0.0)
    # 740 messages a second for 10 s, as in the adversarial test: 40 + 10 × 10 get through.
    passed = sum(bucket.take(i / 740) for i in range(7_400))
    assert passed == pytest.approx(140, abs=1)


def test_an_idle_bucket_refills_only_to_capacity():
    bucket = TokenBucket.full(capacity=3, per_s=100, now_s=0.0)
    assert sum(bucket.take(1_000.0) for _ in range(10)) == 3


def test_a_bucket_needs_a_capacity_and_a_rate():
    with pytest.raises(ValueError):
        TokenBucket.full(capacity=0, per_s=1, now_s=0)
    with pytest.raises(ValueError):
        TokenBucket.full(capacity=1, per_s=0, now_s=0)
