"""Shared helpers for AppTest-driven page tests."""

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core import lessons

HOME = Path(__file__).resolve().parents[2] / "Home.py"
# The buttons that lock a marked answer and a prediction, as the lesson text names them.
LOCK_ANSWER = lessons.sentence("marked", "lock_answer")
LOCK_PREDICTION = lessons.sentence("marked", "lock_prediction")


def says(page: str, key: str, **figures: object) -> str:
    """The sentence `key` of lessons/`page` up to its first figure not given here, the given ones filled in:
    what a test can look for when the rest depends on figures it does not compute."""
    template = lessons.sentences(page)[key]
    cuts = [template.text.index("{" + name) for name in template.names - figures.keys()]
    return template.text[: min(cuts, default=len(template.text))].format_map(figures)


def open_page(page: str | None = None, *, at: AppTest | None = None) -> AppTest:
    """A fresh learner session (or `at`) on `page` (a path like "pages/four_runs.py"), run once; a session
    that has not run yet runs Home first, keeping its query string for `page` (a share link)."""
    if at is None:
        at = AppTest.from_file(str(HOME), default_timeout=30)
    if not _has_run(at):
        # A page switched to before a session's first run would run on its own, in Streamlit's old
        # pages-folder mode, without the frame Home.py draws around it; a browser always gets the frame.
        at.run()
        if page is None:
            return at
    elif page is None:
        return at.run()
    else:
        # A browser drops the query string when the learner follows the navigation menu;
        # AppTest keeps it, so do what the browser does.
        at.query_params.clear()
    return at.switch_page(page).run()


HEADING_TYPES = {1: "title", 2: "header", 3: "subheader"}


def headings(at: AppTest, level: int) -> list[str]:
    """The texts of the level-`level` headings on the page (1 as st.title draws, 2 header, 3 subheader), in
    the order drawn: elements of their own, and lines of a Markdown element that holds a heading with the
    text under it (ui/prose.py)."""
    marker = "#" * level + " "
    found: list[str] = []

    def walk(node) -> None:
        kind = getattr(node, "type", None)
        if kind == HEADING_TYPES[level]:
            found.append(node.value)
        elif kind == "markdown":
            found.extend(line[len(marker) :] for line in node.value.splitlines() if line.startswith(marker))
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                walk(child)

    walk(at.main)
    walk(at.sidebar)
    return found


def drawn(at: AppTest) -> Counter[str]:
    """What the last run drew in the main area, by kind: every element and every block that holds some
    (each is one message the server builds and sends). The sidebar is the frame's, the same on every
    page; AppTest's copy of it depends on the runs before, so it is left out."""
    kinds: Counter[str] = Counter()
    _count(at.main, kinds)
    return kinds


def _count(node: Any, kinds: Counter[str]) -> None:
    children = getattr(node, "children", None) or {}
    for child in children.values():
        kinds[child.type] += 1
        _count(child, kinds)


def markdown_blocks(at: AppTest) -> list[str]:
    """Every Markdown element's text cut at its blank lines, in order: a heading and each paragraph drawn
    together as one element (ui/prose.py) come back one by one, as they would drawn apart."""
    return [block for element in at.markdown for block in element.value.split("\n\n")]


def _has_run(at: AppTest) -> bool:
    try:
        return "answers" in at.session_state
    except Exception:  # AppTest raises before its first run
        return False


def lock_answer(at: AppTest, question_id: str, option_id: str) -> AppTest:
    """Pick an option of a marked question and lock it in; the tree then holds what that click's run drew
    (on most pages the question and the progress summary alone, as the browser's rerun draws them)."""
    at.radio(key=f"marked.{question_id}.choice").set_value(option_id)
    form_buttons = [b for b in at.button if b.label == LOCK_ANSWER]
    index = [r.key for r in at.radio if r.key and r.key.endswith(".choice")].index(
        f"marked.{question_id}.choice"
    )
    form_buttons[index].click()
    return at.run()


def answer(at: AppTest, question_id: str, option_id: str) -> AppTest:
    """Lock in an answer, then run the page again: a browser keeps what the click's run left alone, where
    AppTest's tree holds only what the latest run drew."""
    lock_answer(at, question_id, option_id)
    assert not at.exception, f"locking {question_id} raised: {at.exception}"
    return at.run()


# Four runs' questions and their right answers: the page shows the dashboards once all four are sorted.
FOUR_RUNS_SORTED = {"r1": "mem", "r2": "speed", "r3": "num", "r4": "learn"}


def sort_four_runs(at: AppTest) -> AppTest:
    """Sort all four runs on the Four runs page (right answers), which opens their dashboards."""
    for question_id, option_id in FOUR_RUNS_SORTED.items():
        answer(at, question_id, option_id)
    return at


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """Open the tab `label` of the tabs keyed `key`, as a click does; a page builds only the open tab."""
    at.session_state[key] = label
    return at.run()


def open_box(at: AppTest, key: str) -> AppTest:
    """Open the expander keyed `key`, as a click on its header does; its content is built only while open."""
    at.session_state[key] = True
    return at.run()


def predict(at: AppTest, prediction_id: str, option_id: str) -> AppTest:
    """Pick an option of a lesson prediction (a list or a drop-down menu) and lock it."""
    key = f"predict.{prediction_id}"
    [widget] = [w for kind in (at.radio, at.selectbox) for w in kind if w.key == key]
    widget.set_value(option_id)
    at.button(key=f"predict.{prediction_id}.lock").click()
    return at.run()


def reveal_roofline(at: AppTest) -> AppTest:
    """Lock the Linear layer page's three placements (all memory-bound), which reveals the roofline."""
    for prediction_id in ("linear.layer", "linear.matmul", "linear.gelu"):
        predict(at, prediction_id, "memory-bound")
    return at


def sketch_budget(at: AppTest, term: str = "activations", breaks: str = "4096") -> AppTest:
    """Lock the Memory page's two guesses, which reveals the budget and the sweep."""
    predict(at, "memory.dominant", term)
    return predict(at, "memory.breaks", breaks)


@pytest.fixture
def fresh():
    """A new learner session on the Home page."""
    return open_page()


def chart_rows(chart, name: str) -> list[dict]:
    """The rows a drawn chart's dataset `name` carries to the browser (decoded from its Arrow bytes)."""
    [data] = [d.data.data for d in chart.proto.datasets if d.name == name]
    return pa.ipc.open_stream(data).read_all().to_pylist()


def installation_key() -> str:
    """The signing key the app under test made for itself in the test store (no key is configured)."""
    from store.guards import SIGNING_KEY, GuardStore
    from ui.database import learner_store

    return GuardStore(learner_store()).installation_secret(SIGNING_KEY)
