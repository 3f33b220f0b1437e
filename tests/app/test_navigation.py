"""Every page ends with a "Next →" link in menu order, and Home's links read like the menu."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import open_page
from ui.nav import LESSONS, title_of


def _links(at) -> list[tuple[str, str]]:
    return [(link.proto.label, link.proto.page) for link in at.get("page_link")]


@pytest.mark.parametrize("index", range(len(LESSONS)))
def test_each_lesson_ends_with_a_link_to_the_next(index):
    page, following = LESSONS[index], LESSONS[(index + 1) % len(LESSONS)]
    at = open_page(f"pages/{page.file}")
    assert not at.exception
    label, _ = _links(at)[-1]
    assert label == f"Next → {following.title}"


def test_home_links_use_the_menu_titles():
    at = open_page("pages/home.py")
    labels = [label for label, _ in _links(at)][:-1]  # the last is "Next →"
    assert labels == [entry.title for entry in LESSONS[1:]]


def test_an_unknown_page_is_a_readable_error():
    with pytest.raises(ValueError, match="not a page of this lab"):
        title_of("pages/nowhere.py")


def test_home_sets_out_the_four_quiet_failures_before_we_start():
    prose = " ".join(m.value for m in open_page("pages/home.py").markdown)
    for fragment in ("an eighth of the card", "200 tokens", "overflow FP16", "learning nothing"):
        assert fragment in prose


def _two_menus() -> None:
    import streamlit as st

    from ui.nav import menu

    first, second = menu(), menu()
    st.session_state["same_titles"] = [p.title for p in first] == [p.title for p in second]
    st.session_state["shared"] = len({id(p) for p in first} & {id(p) for p in second})


def test_no_two_runs_share_a_page_object():
    # Under runner.fastReruns a rerun starts a new script thread before the stopped one has finished, so
    # two runs of one session can overlap; st.navigation marks the page object it returns as callable and
    # page.run() unmarks it, so a shared object lets the newer run refuse the older one's page.run().
    at = AppTest.from_function(_two_menus).run()
    assert not at.exception
    assert at.session_state["same_titles"] and at.session_state["shared"] == 0
