"""No sequence of operations unlocks a locked answer or prediction, and two sessions racing to
answer the same question (or lock the same lesson prediction) end with exactly one stored
(SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.scaling.evidence import PREDICTIONS
from store import LearnerStore, Refused

QUESTIONS = ("r1", "r2", "c1")
OPTIONS = ("a", "b", "c")
LESSON = ("predict.linear.gelu", "predict.memory.breaks")
AT = "2026-11-30T14:05:09+00:00"

_choice = st.fixed_dictionaries({}, optional={q: st.sampled_from(OPTIONS) for q in QUESTIONS})
_guess = st.fixed_dictionaries({"choice": st.sampled_from(OPTIONS), "actual": st.sampled_from(OPTIONS)})
_guesses = st.fixed_dictionaries({}, optional={name: _guess for name in LESSON})
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("answer"), st.sampled_from(QUESTIONS), st.sampled_from(OPTIONS)),
        st.tuples(st.just("predict"), _choice),
        st.tuples(st.just("lesson"), st.sampled_from(LESSON), _guess),
        st.tuples(st.just("merge"), _choice, _choice, _guesses),
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
        elif kind == "lesson":
            store.put_record(learner, args[0], args[1])
        elif kind == "merge":
            records = {PREDICTIONS: args[1], **args[2]}
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
    locked: dict[str, dict[str, Any]] = {"answers": {}, PREDICTIONS: {}, "lesson": {}}
    for operation in operations:
        _apply(store, learner, operation)
        stored = store.load(learner)
        now = {
            "answers": stored["answers"],
            PREDICTIONS: stored["records"].get(PREDICTIONS, {}),
            "lesson": {name: stored["records"][name] for name in LESSON if name in stored["records"]},
        }
        for kind, seen in locked.items():
            assert {key: now[kind][key] for key in seen} == seen  # nothing locked moved or vanished
            seen.update(now[kind])


Write = Callable[[LearnerStore, str, str, str], bool]
Kept = Callable[[dict[str, Any], str], str]


def _answer(store: LearnerStore, learner: str, question: str, option: str) -> bool:
    return store.add_answer(learner, question, option)


def _answer_kept(stored: dict[str, Any], question: str) -> str:
    return str(stored["answers"][question])


def _lock_guess(store: LearnerStore, learner: str, prediction: str, option: str) -> bool:
    return store.put_record(learner, f"predict.{prediction}", {"choice": option, "actual": "a"})


def _guess_kept(stored: dict[str, Any], prediction: str) -> str:
    return str(stored["records"][f"predict.{prediction}"]["choice"])


def _race(stores: list[LearnerStore], learner: str, question: str, write: Write) -> list[bool]:
    """Both stores write `question` differently at the same instant; whether each was accepted."""
    start = threading.Barrier(len(stores))
    accepted = [False] * len(stores)

    def answer(index: int) -> None:
        start.wait()
        accepted[index] = write(stores[index], learner, question, OPTIONS[index])

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return accepted


@pytest.mark.parametrize(
    ("write", "kept"),
    [(_answer, _answer_kept), (_lock_guess, _guess_kept)],
    ids=["answer", "lesson prediction"],
)
def test_two_sessions_answering_at_once_store_exactly_one_answer(
    store_url: str, write: Write, kept: Kept
) -> None:
    # Two stores on one database, like two replicas (or two tabs) of one learner.
    stores = [LearnerStore.open(store_url), LearnerStore.open(store_url)]
    learner = stores[0].new_learner().id
    for round_number in range(8):
        question = f"q{round_number}"
        accepted = _race(stores, learner, question, write)
        assert sorted(accepted) == [False, True]
        winner = OPTIONS[accepted.index(True)]
        for each in stores:
            assert kept(each.load(learner), question) == winner
