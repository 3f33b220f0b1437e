"""No sequence of operations unlocks a locked answer, and two sessions racing to answer the same
question end with exactly one stored answer (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.scaling.evidence import PREDICTIONS
from store import LearnerStore, Refused

QUESTIONS = ("r1", "r2", "c1")
OPTIONS = ("a", "b", "c")
AT = "2026-11-30T14:05:09+00:00"

_choice = st.fixed_dictionaries({}, optional={q: st.sampled_from(OPTIONS) for q in QUESTIONS})
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("answer"), st.sampled_from(QUESTIONS), st.sampled_from(OPTIONS)),
        st.tuples(st.just("predict"), _choice),
        st.tuples(st.just("merge"), _choice, _choice),
        st.tuples(st.just("settings"), st.integers(1, 256)),
        st.tuples(st.just("hand_in")),
    ),
    max_size=12,
)


def _apply(store: LearnerStore, learner: str, operation: tuple[Any, ...]) -> None:
    kind, *args = operation
    try:
        if kind == "answer":
            store.add_answer(learner, args[0], args[1])
        elif kind == "predict":
            store.put_record(learner, PREDICTIONS, args[0])
        elif kind == "merge":
            records = {PREDICTIONS: args[1]}
            store.merge(
                learner, {"answers": args[0], "settings": {}, "records": records, "handed_in_at": None}
            )
        elif kind == "settings":
            store.put_settings(learner, "linear", {"batch": args[0]})
        else:
            store.hand_in(learner, AT)
    except Refused:
        pass  # refused after the hand-in: that is one of the outcomes under test


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPERATIONS)
def test_no_sequence_of_operations_changes_a_locked_answer_or_prediction(
    store: LearnerStore, operations: list[tuple[Any, ...]]
) -> None:
    learner = store.new_learner().id
    locked: dict[str, dict[str, str]] = {"answers": {}, PREDICTIONS: {}}
    for operation in operations:
        _apply(store, learner, operation)
        stored = store.load(learner)
        now = {"answers": stored["answers"], PREDICTIONS: stored["records"].get(PREDICTIONS, {})}
        for kind, seen in locked.items():
            assert {key: now[kind][key] for key in seen} == seen  # nothing locked moved or vanished
            seen.update(now[kind])


def _race(stores: list[LearnerStore], learner: str, question: str) -> list[bool]:
    """Both stores answer `question` differently at the same instant; whether each was accepted."""
    start = threading.Barrier(len(stores))
    accepted = [False] * len(stores)

    def answer(index: int) -> None:
        start.wait()
        accepted[index] = stores[index].add_answer(learner, question, OPTIONS[index])

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return accepted


def test_two_sessions_answering_at_once_store_exactly_one_answer(store_url: str) -> None:
    # Two stores on one database, like two replicas (or two tabs) of one learner.
    stores = [LearnerStore.open(store_url), LearnerStore.open(store_url)]
    learner = stores[0].new_learner().id
    for round_number in range(8):
        question = f"q{round_number}"
        accepted = _race(stores, learner, question)
        assert sorted(accepted) == [False, True]
        winner = OPTIONS[accepted.index(True)]
        for each in stores:
            assert each.load(learner)["answers"][question] == winner
