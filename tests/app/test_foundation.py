"""The app shell: navigation, Home, the marked-question mechanism and session isolation."""

from streamlit.testing.v1 import AppTest

from core import lessons
from tests.app.conftest import HOME, LOCK_ANSWER, answer, headings, open_page
from ui.nav import PAGES

ROOT = HOME.parent


def _declared_pages() -> list[str]:
    """The page files the menu declares (Home.py builds the menu from `ui.nav.PAGES`)."""
    return [entry.file for entry in PAGES]


def _declared_url_paths() -> list[str]:
    return [entry.url_path for entry in PAGES if entry.url_path]


def test_navigation_declares_exactly_the_pages_that_exist():
    declared = _declared_pages()
    on_disk = sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert sorted(declared) == on_disk
    assert declared[:5] == ["home.py", "four_runs.py", "your_run.py", "your_oom.py", "execution_stack.py"]


def test_every_page_renders_without_an_exception():
    at = open_page()
    for name in _declared_pages():
        open_page(f"pages/{name}", at=at)
        assert not at.exception, name


def test_the_sidebar_summary_is_drawn_by_the_frame(fresh):
    # AppTest only captures the sidebar on a session's first run; the browser tests cover the rest.
    assert [m.value for m in fresh.sidebar.metric] == ["0/9", "0/3"]


def test_home_shows_objectives_progress_and_links(fresh):
    assert not fresh.exception
    assert headings(fresh, 1)[0] == lessons.sentence("home", "title")
    assert [m.value for m in fresh.metric][:3] == ["0/9", "0/3", "0/12"]
    progress = fresh.table[0].value
    assert "Four runs" in progress["Part"].tolist() and set(progress["Done"]) == {"no"}
    # Home links every lesson; the Instructor page is for the instructor and Your OOM a tool, not lessons.
    assert {link.proto.page for link in fresh.get("page_link")} == set(_declared_url_paths()) - {
        "instructor",
        "your-oom",
    }


def test_answering_locks_the_question_and_says_right_or_wrong():
    at = open_page("pages/four_runs.py")
    answer(at, "r2", "mem")  # wrong on purpose
    assert at.session_state["answers"] == {"r2": "mem"}
    locked = at.radio(key="marked.r2.locked")
    assert locked.disabled and locked.value == "mem"
    assert any("Not quite" in w.value and "Throughput" in w.value for w in at.warning)


def test_confirming_with_nothing_selected_asks_for_a_choice():
    at = open_page("pages/four_runs.py")
    at.button[0].click().run()
    assert at.session_state["answers"] == {}
    assert lessons.sentence("marked", "pick_first") in [i.value for i in at.info]


def test_a_locked_answer_is_still_locked_after_visiting_other_pages():
    at = open_page("pages/four_runs.py")
    answer(at, "r1", "mem")
    open_page("pages/execution_stack.py", at=at)
    open_page("pages/home.py", at=at)
    assert [m.value for m in at.metric][:1] == ["1/9"]
    open_page("pages/four_runs.py", at=at)
    assert at.radio(key="marked.r1.locked").value == "mem"
    assert at.radio(key="marked.r1.locked").disabled
    assert any(s.value.startswith("**Right.**") for s in at.success)


def test_a_second_session_starts_with_nothing_answered():
    first = open_page("pages/four_runs.py")
    answer(first, "r1", "mem")
    second = open_page("pages/four_runs.py")
    assert second.session_state["answers"] == {}
    assert second.radio(key="marked.r1.choice").value is None


def _lock_twice():
    import streamlit as st

    from ui import state

    state.ensure_state()
    st.text(f"first={state.give_answer('r1', 'mem')} second={state.give_answer('r1', 'speed')}")


def test_the_lock_is_enforced_where_answers_are_stored_not_only_in_the_widget():
    at = AppTest.from_function(_lock_twice, default_timeout=30).run()
    assert at.text[0].value == "first=True second=False"
    assert at.session_state["answers"] == {"r1": "mem"}


def test_after_hand_in_marked_questions_cannot_be_answered():
    at = open_page("pages/four_runs.py")
    at.session_state["handed_in_at"] = "2026-11-30T10:00:00+00:00"
    at.run()
    assert at.radio(key="marked.r1.choice").disabled
    assert all(b.disabled for b in at.button if b.label == LOCK_ANSWER)


def test_a_setting_the_schema_refuses_is_never_stored():
    # A hand-made client can send any value for a widget; the store only takes schema-valid ones.
    at = AppTest.from_function(_store_bad_value, default_timeout=30).run()
    assert at.session_state["settings"]["stack"] == {"symptom": "oom"}
    assert at.session_state["stack.symptom"] == "oom"


def _store_bad_value():
    import streamlit as st

    from ui.settings import _copy_back, persistent

    persistent("stack", "symptom")
    st.session_state["stack.symptom"] = "<script>"
    _copy_back("stack", "symptom")


def test_a_page_first_opened_after_hand_in_uses_its_defaults():
    at = open_page("pages/home.py")
    at.session_state["handed_in_at"] = "2026-11-30T10:00:00+00:00"
    for page in ("pages/linear_layer.py", "pages/memory_budget.py", "pages/run_a.py", "pages/scaling.py"):
        open_page(page, at=at)
        assert not at.exception, page
    assert at.session_state["settings"] == {}  # nothing is stored after hand-in
