"""The benchmark's store that keeps nothing (`bench.no_store_server`) answers every store method whose
answer the app reads as the real store would, so `run_load --store off` measures the same pages."""

from __future__ import annotations

import inspect
from typing import Any

from bench.no_store_server import NullStore
from store import LearnerStore

EMPTY: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}


def test_every_store_method_with_an_answer_beyond_yes_or_no_is_written_out():
    answering = {
        name
        for name, method in inspect.getmembers(LearnerStore, inspect.isfunction)
        if not name.startswith("_") and inspect.signature(method).return_annotation not in ("bool", "None")
    }
    assert {"learner", "load", "merge", "open_record", "put_setting"} <= answering
    assert answering - {"new_learner", "learner_for_code", "remove_idle"} <= set(vars(NullStore))


def test_a_first_load_without_a_store_keeps_the_session_s_own_work():
    work = {**EMPTY, "settings": {"memory": {"batch": 64}}}
    stored, code = NullStore().open_record("a" * 32, work, shown={"memory": {"batch": 8, "seq": 2048}})
    assert stored["settings"] == {"memory": {"batch": 64, "seq": 2048}}
    assert code == "NO-STORE"
