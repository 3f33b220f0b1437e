"""A learner's record in the store, through the app: it survives a new session, a resume code
moves it, start over leaves it locked, restores never replace its locks, and an unreachable store
is said plainly while the lab keeps working."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from core import lessons
from core.progress_file import export_progress
from core.questions import load_bank
from core.scaling.evidence import PREDICTIONS
from core.scaling.scenarios import load_scaling
from store.ids import new_learner_id, show_code
from tests.app.conftest import HOME, LOCK_PREDICTION, answer, installation_key, open_box
from tests.harness.server import free_port
from ui import state
from ui.database import learner_store
from ui.identity import RUNS, SAVED_WORK_OPEN

QUIZ = "pages/quiz_report.py"
SCALING = "pages/scaling.py"
AT = "2026-11-30T14:05:09+00:00"


def _session_of(learner: str | None, page: str = QUIZ, **link: str) -> AppTest:
    """A new session (a reload, a new tab, another replica) that the browser says belongs to
    `learner` (None: a browser that has not said), run through Home.py's frame, then on `page`, at a
    URL holding `link`'s query parameters."""
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.session_state[state.LEARNER_ID] = learner
    at.query_params.update(link)
    # The first run goes through the router, so later page switches keep the sidebar frame.
    return at.run().switch_page(page).run()


def _saved_note(at: AppTest) -> list[str]:
    """Which of the saved indicator's sentences the page shows: "opening", "not_saved" or "saved"."""
    notes = {lessons.sentence("identity", key): key for key in ("opening", "not_saved", "saved")}
    return [notes[e.value] for e in [*at.caption, *at.warning] if e.value in notes]


def _said(key: str) -> list[str]:
    """The saved-work box's message `key`, as the one message in its place."""
    return [lessons.sentence("identity", key)]


def test_answers_persist_into_a_new_session_of_the_same_learner():
    learner, right = new_learner_id(), load_bank().question("q1").correct
    first = _session_of(learner)
    answer(first, "q1", right)
    assert "saved" in _saved_note(first)
    again = _session_of(learner)
    assert not again.exception
    assert again.session_state["answers"] == {"q1": right}
    assert again.radio(key="marked.q1.locked").disabled
    assert [m.value for m in again.main.metric] == ["0/9", "1/3", "1/12", "0/6"]


def test_a_session_the_browser_never_names_is_saved_under_its_own_fresh_id():
    at = AppTest.from_file(str(HOME), default_timeout=30).run()
    assert "opening" in _saved_note(at) and at.session_state[state.LEARNER_ID] is None
    at.switch_page(QUIZ).run()  # the browser still has not answered: the session's fresh id is used
    answer(at, "q2", "c")
    learner = at.session_state[state.LEARNER_ID]
    assert learner and learner_store().load(learner)["answers"] == {"q2": "c"}
    assert _session_of(new_learner_id()).session_state["answers"] == {}


def test_a_second_session_cannot_change_an_answer_locked_by_the_first():
    learner = new_learner_id()
    first, second = _session_of(learner), _session_of(learner)
    answer(first, "q1", "a")
    answer(second, "q1", "b")  # this tab did not know: the store refuses and the tab reloads
    assert second.session_state["answers"] == {"q1": "a"}
    assert learner_store().load(learner)["answers"] == {"q1": "a"}


def test_restoring_a_file_never_replaces_what_the_store_has_locked():
    learner = new_learner_id()
    learner_store().add_answer(learner, "q1", "a")  # locked in another tab after this one loaded
    at = _session_of(learner)
    at.session_state["answers"] = {}
    snapshot = {"answers": {"q1": "b", "q2": "c"}, "settings": {}, "records": {}, "handed_in_at": None}
    data = export_progress(snapshot, exported_at=AT, key=installation_key())
    at.file_uploader(key="restore.file").upload("progress.json", data, "application/json").run()
    at.button(key="restore.go").click().run()
    assert at.session_state["answers"] == {"q1": "a", "q2": "c"}
    assert learner_store().load(learner)["answers"] == {"q1": "a", "q2": "c"}


def test_a_resume_code_opens_the_work_in_another_session():
    learner = new_learner_id()
    answer(_session_of(learner), "q3", "b")
    code = learner_store().learner(learner).resume_code
    elsewhere = open_box(_session_of(None), SAVED_WORK_OPEN)
    elsewhere.text_input(key="identity.code").input(show_code(code).lower())
    elsewhere.button(key="identity.resume").click().run()
    assert elsewhere.session_state[state.LEARNER_ID] == learner
    assert elsewhere.session_state["answers"] == {"q3": "b"}
    resume_code = lessons.sentence("identity", "resume_code", code=show_code(code))
    assert resume_code in [m.value for m in elsewhere.markdown]


def test_a_wrong_resume_code_is_refused_without_saying_more():
    at = _session_of(None)
    assert not [box for box in at.text_input if box.key == "identity.code"]  # built only while open
    open_box(at, SAVED_WORK_OPEN)
    messages = []
    for typed in ("0000-0000-0000-0000", "nonsense"):
        at.text_input(key="identity.code").input(typed)
        at.button(key="identity.resume").click().run()
        messages.append([e.value for e in at.error])
    assert messages[0] == messages[1] == _said("code_refused")
    assert at.session_state["answers"] == {}


def _full_runs(at: AppTest, click: Callable[[], object]) -> int:
    """How many whole-app runs one click in a sidebar box led to (Home.py's frame counts them)."""
    before = at.session_state[RUNS]
    click()
    at.run()
    return at.session_state[RUNS] - before


def test_a_resume_code_that_opens_work_reruns_the_whole_app_and_still_says_so():
    # AppTest runs the whole script for a click; in a browser the box's fragment runs alone, and only
    # the second run, which the box asks for when other work opened, redraws the page with that work.
    learner = new_learner_id()
    answer(_session_of(learner), "q3", "b")
    code = show_code(learner_store().learner(learner).resume_code)
    at = open_box(_session_of(None), SAVED_WORK_OPEN)
    at.text_input(key="identity.code").input("0000-0000-0000-0000")
    assert _full_runs(at, at.button(key="identity.resume").click) == 1
    assert [e.value for e in at.sidebar.error] == _said("code_refused")
    at.text_input(key="identity.code").input(code)
    assert _full_runs(at, at.button(key="identity.resume").click) == 2
    assert [s.value for s in at.sidebar.success] == _said("work_opened")
    assert at.radio(key="marked.q3.locked").disabled  # the page shows the opened work


def test_start_over_reruns_the_whole_app_and_ticking_the_box_does_not():
    at = _session_of(new_learner_id())
    answer(at, "q1", "a")
    open_box(at, SAVED_WORK_OPEN)
    assert _full_runs(at, at.checkbox(key="identity.start_over.confirm").check) == 1
    assert _full_runs(at, at.button(key="identity.start_over").click) == 2
    assert [s.value for s in at.sidebar.success] == _said("fresh_lab")
    assert at.session_state["answers"] == {} and not at.radio(key="marked.q1.choice").disabled


def test_start_over_gives_a_fresh_lab_and_leaves_the_old_record_locked():
    learner = new_learner_id()
    at = _session_of(learner)
    answer(at, "q1", "a")
    open_box(at, SAVED_WORK_OPEN)
    assert at.button(key="identity.start_over").disabled
    at.checkbox(key="identity.start_over.confirm").check().run()
    at.button(key="identity.start_over").click().run()
    fresh = at.session_state[state.LEARNER_ID]
    assert fresh != learner and at.session_state["answers"] == {}
    answer(at, "q1", "b")
    assert learner_store().load(learner)["answers"] == {"q1": "a"}
    assert learner_store().load(fresh)["answers"] == {"q1": "b"}


def test_an_unreachable_store_is_said_plainly_and_the_work_is_saved_when_it_is_back(
    monkeypatch: pytest.MonkeyPatch,
):
    learner = new_learner_id()
    monkeypatch.setenv("LAB_DATABASE_URL", f"postgresql://lab@127.0.0.1:{free_port()}/lab")
    at = _session_of(learner)
    assert not at.exception
    answer(at, "q1", "a")
    assert at.session_state["answers"] == {"q1": "a"}  # the lab keeps working in memory
    assert "not_saved" in _saved_note(at)
    assert "download.progress" in [d.key for d in at.get("download_button")]  # still available
    monkeypatch.delenv("LAB_DATABASE_URL")
    at.run()  # any click: the app tries again
    assert "saved" in _saved_note(at)
    assert learner_store().load(learner)["answers"] == {"q1": "a"}


def test_everything_the_app_keeps_for_a_learner_is_plain_data():
    at = _session_of(new_learner_id())
    answer(at, "q1", "a")
    # Every key the app owns must pickle (the identity component has no key: its state is Streamlit's).
    owned = [key for key in at.session_state.keys() if not key.startswith("$$")]
    assert state.ANSWERS in owned and state.LEARNER_ID in owned
    for key in owned:
        pickle.dumps(at.session_state[key])


def test_a_locked_prediction_persists_and_a_restore_cannot_replace_it():
    learner = new_learner_id()
    first, second = list(load_scaling().parts["A"].options)[:2]
    at = _session_of(learner, SCALING)
    at.radio(key="scaling.predict.A").set_value(first)
    at.button[[b.label for b in at.button].index(LOCK_PREDICTION)].click().run()
    again = _session_of(learner)
    assert again.session_state["records"][PREDICTIONS] == {"A": first}
    snapshot = {"answers": {}, "settings": {}, "records": {PREDICTIONS: {"A": second}}, "handed_in_at": None}
    data = export_progress(snapshot, exported_at=AT, key=installation_key())
    again.file_uploader(key="restore.file").upload("progress.json", data, "application/json").run()
    again.button(key="restore.go").click().run()
    assert again.session_state["records"][PREDICTIONS] == {"A": first}
    assert learner_store().load(learner)["records"][PREDICTIONS] == {"A": first}


def test_a_first_visit_in_an_older_tab_keeps_what_another_tab_set():
    learner = new_learner_id()
    older = _session_of(learner)  # opened before the other tab touched the Linear layer page
    newer = _session_of(learner, "pages/linear_layer.py")
    newer.slider(key="linear.batch").set_value(64).run()
    older.switch_page("pages/linear_layer.py").run()
    # The older tab shows its defaults only where nothing is stored: the batch of 64 stays.
    assert older.slider(key="linear.batch").value == 64
    assert learner_store().load(learner)["settings"]["linear"]["batch"] == 64
