"""The backoff on failed attempts, worked by hand, and properties that hold for any history."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.attempts import Backoff, Failures, ProcessTally

SIGN_IN = Backoff(free=5, first_wait_s=2.0, max_wait_s=300.0, forget_after_s=3600.0)


def test_five_failures_are_free_then_the_wait_doubles_to_its_ceiling():
    failures = Failures()
    waits = []
    for _ in range(14):
        failures = SIGN_IN.after_failure(failures, 100.0)
        waits.append(SIGN_IN.wait_s(failures, 100.0))
    # 0 ×5; then 2, 4, 8, 16, 32, 64, 128, 256 s; then the 300 s ceiling.
    assert waits == [0, 0, 0, 0, 0, 2, 4, 8, 16, 32, 64, 128, 256, 300]


def test_the_wait_runs_from_the_last_failure_and_an_hour_forgets_it():
    failures = Failures(count=7, last_s=1000.0)  # the seventh failure waits 4 s
    assert SIGN_IN.wait_s(failures, 1001.0) == 3.0
    assert SIGN_IN.wait_s(failures, 1004.0) == 0.0
    assert SIGN_IN.current(failures, 1000.0 + 3599.0) == failures
    assert SIGN_IN.current(failures, 1000.0 + 3600.0) == Failures()
    assert SIGN_IN.after_failure(failures, 4600.0) == Failures(count=1, last_s=4600.0)


def test_a_backoff_that_waits_longer_than_it_remembers_is_refused():
    with pytest.raises(ValueError, match="waits no longer than it remembers"):
        Backoff(free=5, first_wait_s=2.0, max_wait_s=300.0, forget_after_s=60.0)


@given(
    st.lists(st.floats(min_value=0.0, max_value=200.0), min_size=1, max_size=40),
    st.floats(min_value=0.0, max_value=400.0),
)
def test_a_wait_never_exceeds_the_ceiling_and_never_shrinks_with_another_failure(gaps, later):
    failures, now_s = Failures(), 0.0
    for gap in gaps:
        now_s += gap
        before = SIGN_IN.wait_s(failures, now_s)
        failures = SIGN_IN.after_failure(failures, now_s)
        after = SIGN_IN.wait_s(failures, now_s)
        assert 0.0 <= before <= after <= SIGN_IN.max_wait_s
    # Times are floats: (now + later) - last can differ from later in its last bit.
    assert SIGN_IN.wait_s(failures, now_s + later) <= max(0.0, SIGN_IN.max_wait_s - later) + 1e-9


def test_the_process_tally_loses_no_failure_across_threads():
    tally = ProcessTally(SIGN_IN)

    def fail_many() -> None:
        for _ in range(500):
            tally.fail(10.0)

    threads = [threading.Thread(target=fail_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.fail(10.0).count == 4001
    assert tally.wait_s(10.0) == 300.0
