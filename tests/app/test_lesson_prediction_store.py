"""A lesson prediction locked on a page is locked in the store: it comes back in a new session,
another session of the same learner cannot change it, and a progress file only adds missing ones."""

from __future__ import annotations

from core.progress_file import export_progress
from core.questions import load_bank
from store.ids import new_learner_id
from tests.app.conftest import installation_key, predict
from tests.app.test_learner_record import AT, _session_of
from ui.database import learner_store

LINEAR = "pages/linear_layer.py"
GELU = "predict.linear.gelu"
# With the page's defaults (A100 80GB, fp32) GELU is memory-bound.
HELD = {"choice": "memory-bound", "actual": "memory-bound"}


def test_a_locked_lesson_prediction_survives_and_a_second_session_cannot_change_it():
    learner = new_learner_id()
    first, second = _session_of(learner, LINEAR), _session_of(learner, LINEAR)
    predict(first, "linear.gelu", "memory-bound")
    # The second tab opened before the first locked, so it still offers the question.
    predict(second, "linear.gelu", "compute-bound")
    assert learner_store().load(learner)["records"][GELU] == HELD
    assert second.session_state["records"][GELU] == HELD  # the tab reloaded what the store kept
    again = _session_of(learner, LINEAR)
    assert again.session_state["records"][GELU] == HELD
    assert "predict.linear.gelu.lock" not in [b.key for b in again.button]
    held = f"**{load_bank().prediction('linear.gelu').option_text('memory-bound')}**"
    assert any(held in c.value for c in again.caption)  # the locked guess, shown as given


def test_restoring_a_file_adds_missing_guesses_and_never_replaces_a_stored_one():
    learner = new_learner_id()
    learner_store().put_record(learner, GELU, HELD)
    at = _session_of(learner)
    at.session_state["records"] = {}  # as if the guess was locked in another tab after this one loaded
    matmul = {"choice": "compute-bound", "actual": "compute-bound"}
    wrong = {"choice": "compute-bound", "actual": "memory-bound"}
    snapshot = {
        "answers": {},
        "settings": {},
        "records": {GELU: wrong, "predict.linear.matmul": matmul},
        "handed_in_at": None,
    }
    data = export_progress(snapshot, exported_at=AT, key=installation_key())
    at.file_uploader(key="restore.file").upload("progress.json", data, "application/json").run()
    at.button(key="restore.go").click().run()
    expected = {GELU: HELD, "predict.linear.matmul": matmul}
    assert {name: at.session_state["records"][name] for name in expected} == expected
    assert learner_store().load(learner)["records"] == expected
