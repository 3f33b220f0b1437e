"""axe-core on every page, in the states a learner reaches: no serious or critical WCAG 2.1 A/AA violation.

The states: each page fresh, and each lesson page then with every prediction and marked question locked
(what they hide drawn, charts included), every box opened and every tab shown; the lab handed in (every
widget read-only); the instructor's view of a room. Also what axe cannot judge: a keyboard user
tabbing through the menu sees where they are.
"""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from core import lessons

pytestmark = pytest.mark.e2e

# Every page in the menu, by path ("" is Home).
PAGES = [
    "",
    "four-runs",
    "your-run",
    "execution-stack",
    "linear-layer",
    "memory-budget",
    "run-a",
    "quiz-report",
    "scaling",
    "instructor",
]
LESSON_PAGES = [path for path in PAGES if path not in ("", "instructor")]
WCAG_21_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("serious", "critical")
MAX_LOCKS = 12  # more marked questions and predictions than any page asks
CLOSED_BOX = '[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary'
MAX_TABS = 60  # presses of Tab that reach every menu link from the page's start

_axe = Axe()


def violations(page: Page) -> list[str]:
    """Each serious or critical WCAG 2.1 A/AA violation on the page, one line per element, readable in a
    failure: the rule, its impact, the element and what axe says to fix."""
    found = _axe.run(page, options={"runOnly": {"type": "tag", "values": WCAG_21_A_AA}})
    return [
        f"{rule['id']} ({rule['impact']}) at {node['target']}: "
        + " ".join((node.get("failureSummary") or rule["help"]).split())
        for rule in found.response["violations"]
        if rule["impact"] in BLOCKING
        for node in rule["nodes"]
    ]


def check(page: Page, state: str, found: dict[str, list[str]]) -> None:
    """Run axe on what the page shows now and keep its serious findings under `state`."""
    if lines := violations(page):
        found[state] = lines


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{state}:\n  " + "\n  ".join(lines) for state, lines in found.items())


def lock_everything(learner) -> None:
    """Lock every prediction and marked question the page shows, the first option of each, until none is
    left open: what they hide (charts, dashboards, results) is then drawn."""
    page = learner.page
    for _ in range(MAX_LOCKS):
        learner.predict_all()
        open_questions = page.locator('[data-testid="stMain"] [data-testid="stForm"]:visible').filter(
            has=page.get_by_role("button", name="Lock in my answer")
        )
        if open_questions.count() == 0:
            return
        form = open_questions.first
        form.get_by_role("radiogroup").locator("label").first.click()
        learner.lock(form, "Lock in my answer")
    raise AssertionError(f"questions kept appearing after {MAX_LOCKS} were locked")


def open_every_box(learner) -> None:
    """Open each closed box (st.expander) in the page's main area."""
    page = learner.page
    for _ in range(20):
        closed = page.locator(
            '[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary'
        )
        if closed.count() == 0:
            return
        closed.first.click()
        learner.settle()


def tabs(page: Page) -> list[str]:
    return page.locator('[data-testid="stMain"] [role="tab"]').all_inner_texts()


def test_home_and_the_instructor_page_fresh_have_no_serious_violation(learner):
    # The lesson pages are checked fresh by the walk below, each in the state it opens in.
    found: dict[str, list[str]] = {}
    for path in PAGES:
        if path not in LESSON_PAGES:
            learner.open(path)
            check(learner.page, path or "home", found)
    assert not found, "axe-core found serious or critical violations:\n" + report(found)


@pytest.mark.parametrize("path", LESSON_PAGES)
def test_a_page_fresh_then_answered_with_boxes_and_tabs_open_has_no_serious_violation(learner, path):
    """The page as it opens; then every prediction and question locked (what they hide drawn: charts,
    dashboards, feedback), every box opened, each tab shown in turn."""
    page = learner.open(path)
    found: dict[str, list[str]] = {}
    check(page, f"{path}, fresh", found)
    lock_everything(learner)
    open_every_box(learner)
    check(page, f"{path}, answered and opened", found)
    for index, title in enumerate(tabs(page)):
        page.locator('[data-testid="stMain"] [role="tab"]').nth(index).click()
        learner.settle()
        open_every_box(learner)
        check(page, f"{path}, tab {title.strip()}", found)
    assert not found, "axe-core found serious or critical violations:\n" + report(found)


def test_every_page_handed_in_has_no_serious_violation(learner):
    """After hand-in every widget is disabled; what the learner gave is still readable."""
    page = learner.open("quiz-report")
    lock_everything(learner)  # the lab is handed in once the quiz is answered
    page.get_by_text(lessons.sentence("quiz_report", "hand_in_confirm"), exact=True).click()
    learner.settle()
    page.get_by_role("button", name=lessons.sentence("quiz_report", "hand_in_button")).click()
    learner.settle()
    locked = lessons.sentence("quiz_report", "read_only_now", handed_in="").split(" The tools")[0].strip()
    expect(page.get_by_text(locked, exact=False)).to_be_visible()
    found: dict[str, list[str]] = {}
    for path in LESSON_PAGES:
        learner.open(path)
        check(page, f"{path}, handed in", found)
    assert not found, "axe-core found serious or critical violations:\n" + report(found)


def test_a_locked_answer_names_the_chosen_option_in_readable_text(learner):
    """A disabled radio is drawn faded (Streamlit's 40% text colour, about 2.3:1): the option the learner
    chose is also said in text, outside the disabled widget."""
    page = learner.open("execution-stack")
    form = page.locator('[data-testid="stMain"] [data-testid="stForm"]').filter(
        has=page.get_by_role("button", name="Lock in my answer")
    )
    chosen = form.get_by_role("radiogroup").locator("label").first.inner_text().strip()
    form.get_by_role("radiogroup").locator("label").first.click()
    learner.lock(form, "Lock in my answer")
    # The feedback under the locked radio restates the choice, at full text contrast.
    said = page.locator('[data-testid="stMain"] [data-testid="stAlert"]').filter(has_text="You chose")
    expect(said).to_have_count(1)
    assert f"You chose {chosen}" in " ".join(said.inner_text().split())


def test_the_instructor_view_has_no_serious_violation(learner):
    learner.create_room()
    found: dict[str, list[str]] = {}
    check(learner.page, "instructor, room open", found)
    open_every_box(learner)
    check(learner.page, "instructor, boxes open", found)
    assert not found, "axe-core found serious or critical violations:\n" + report(found)


FOCUS_RING = """e => {
    const style = getComputedStyle(e);
    return {
        outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
        shadow: style.boxShadow !== 'none',
    };
}"""


def test_menu_links_show_a_focus_ring_on_tab(learner):
    """Tab through the page: every menu link the keyboard reaches shows an outline or a ring."""
    page = learner.open()
    links = page.locator('[data-testid="stSidebarNav"] a')
    reached: dict[str, dict[str, bool]] = {}
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        focused = page.locator('[data-testid="stSidebarNav"] a:focus-visible')
        if focused.count():
            reached[focused.inner_text().strip().splitlines()[-1].strip()] = focused.evaluate(FOCUS_RING)
        if len(reached) == links.count():
            break
    assert len(reached) == links.count(), f"Tab reached only these menu links: {sorted(reached)}"
    no_ring = {title: ring for title, ring in reached.items() if not (ring["outline"] or ring["shadow"])}
    assert not no_ring, f"menu links with no focus ring on Tab: {no_ring}"
