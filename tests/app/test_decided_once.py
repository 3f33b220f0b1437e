"""Something is decided once per process (server/decided_once.py), however many calls race."""

from __future__ import annotations

import threading
import time

from server.decided_once import DecidedOnce


def test_the_first_call_decides_and_later_calls_only_answer() -> None:
    decisions: list[bool] = []

    def decide() -> bool:
        decisions.append(False)
        return False

    installed = DecidedOnce(decide)
    assert [installed(), installed(), installed()] == [False, False, False]
    assert len(decisions) == 1  # a fix that did not go in is not tried again


def test_calls_that_race_decide_once() -> None:
    decisions: list[bool] = []

    def slow_decide() -> bool:
        decisions.append(True)
        time.sleep(0.05)  # long enough for every other thread to arrive while it decides
        return True

    installed = DecidedOnce(slow_decide)
    answers: list[bool] = []
    threads = [threading.Thread(target=lambda: answers.append(installed())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [True] * 8
    assert decisions == [True]


def test_a_none_answer_counts_as_decided() -> None:
    decisions: list[None] = []
    refusal = DecidedOnce(lambda: decisions.append(None))  # install()'s answer: None when all went in
    assert [refusal(), refusal()] == [None, None]
    assert decisions == [None]
