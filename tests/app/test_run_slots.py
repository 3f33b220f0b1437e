"""The process's script slots: at most N runs work at once, a run inside a run goes straight in, and a
slot comes back however the run ends."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest

from server.run_slots import PROCESS_SLOTS, RunSlots, in_a_run_slot

WAIT_S = 10  # generous: a test fails on a deadlock, never on a slow machine


def _most_at_once(slots: RunSlots, runs: int) -> int:
    """Start `runs` threads that each hold a slot until all the others have tried; count the most inside."""
    inside, most = 0, 0
    lock = threading.Lock()
    arrived = threading.Barrier(runs, timeout=WAIT_S)

    def run() -> None:
        nonlocal inside, most
        arrived.wait()
        with slots.held():
            with lock:
                inside += 1
                most = max(most, inside)
            # Stay inside long enough for any thread that could get in beside us to do so.
            threading.Event().wait(0.05)
            with lock:
                inside -= 1

    threads = [threading.Thread(target=run) for _ in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
        assert not thread.is_alive(), "a run never got a slot"
    return most


@pytest.mark.parametrize("count", [1, 2, 3])
def test_no_more_runs_work_at_once_than_there_are_slots(count):
    assert _most_at_once(RunSlots(count, stuck_s=WAIT_S), runs=8) == count


def test_zero_slots_lets_every_run_in_at_once():
    assert _most_at_once(RunSlots(0, stuck_s=WAIT_S), runs=6) == 6


def test_a_run_inside_a_run_takes_no_second_slot():
    # One slot, and its holder counts as stuck only after a minute: a nested run that waited for a slot
    # would wait that long for its own outer run.
    slots = RunSlots(1, stuck_s=60)
    inside = threading.Event()

    def full_run_calling_its_fragment() -> None:
        with slots.held(), slots.held():
            inside.set()

    threading.Thread(target=full_run_calling_its_fragment, daemon=True).start()
    assert inside.wait(1.0), "the nested run waited for a slot its own run holds"
    with slots.held():  # and the slot is free again afterwards
        pass


def test_a_slot_comes_back_when_the_run_raises():
    slots = RunSlots(1, stuck_s=WAIT_S)
    with pytest.raises(RuntimeError), slots.held():
        raise RuntimeError("st.rerun() and st.stop() end a run by raising")
    done = threading.Event()

    def other_run() -> None:
        with slots.held():
            done.set()

    threading.Thread(target=other_run).start()
    assert done.wait(WAIT_S)


@contextlib.contextmanager
def _run_holding_a_slot(slots: RunSlots) -> Iterator[None]:
    """Another thread's run inside a slot for the whole block (a run waiting on a store that does not
    answer, say)."""
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with slots.held():
            inside.set()
            leave.wait(WAIT_S)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(WAIT_S)
    try:
        yield
    finally:
        leave.set()
        holder.join(WAIT_S)


def test_a_run_stuck_in_its_slot_keeps_others_out_only_until_it_counts_as_stuck():
    slots = RunSlots(1, stuck_s=0.05)

    def other_run() -> None:
        with slots.held():
            pass

    with _run_holding_a_slot(slots):
        other = threading.Thread(target=other_run)
        other.start()
        other.join(WAIT_S)
        assert not other.is_alive(), "a run waited for a stuck slot to come back"


def test_a_negative_count_is_refused_in_words():
    with pytest.raises(ValueError, match="cannot be negative"):
        RunSlots(-1)


def test_a_slotted_function_keeps_its_name_for_streamlit_and_runs_in_the_process_slot():
    seen: list[int] = []

    @in_a_run_slot
    def body(value: int) -> int:
        seen.append(PROCESS_SLOTS._held.depth)
        return value * 2

    assert body(21) == 42 and seen == [1]
    # st.fragment names a fragment after its function: the wrapper must not change that name.
    assert body.__qualname__.endswith("body") and body.__module__ == __name__


def test_a_waiting_run_sleeps_until_a_slot_comes_back(monkeypatch):
    # Dozens of waiting runs that woke every few milliseconds to look would crowd out the runs working.
    slots = RunSlots(1, stuck_s=WAIT_S)
    looks = 0
    count_looks = slots._until_all_stuck_s

    def counted() -> float:
        nonlocal looks
        looks += 1
        return count_looks()

    monkeypatch.setattr(slots, "_until_all_stuck_s", counted)
    waiters = [threading.Thread(target=lambda: slots.held().__enter__()) for _ in range(5)]
    with slots.held():
        for waiter in waiters:
            waiter.start()
        threading.Event().wait(1.0)  # four polls each at the old quarter-second pace
        assert looks == len(waiters)  # one look each, on the way in
