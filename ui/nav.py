"""The lab's pages in lesson order: the menu Home.py declares, and the "Next" link at the end of a page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

PAGES_DIR = Path(__file__).resolve().parent.parent / "pages"


@dataclass(frozen=True)
class PageEntry:
    """One page of the menu: its file in pages/, the title the menu shows, its icon and URL path."""

    file: str
    title: str
    icon: str
    url_path: str | None = None
    lesson: bool = True


PAGES = (
    PageEntry("home.py", "Home", ":material/home:"),
    PageEntry("four_runs.py", "Four runs", ":material/sort:", "four-runs"),
    PageEntry("your_run.py", "Your run", ":material/insights:", "your-run"),
    # A tool beside the lessons: no part in data/lab.json names it.
    PageEntry("your_oom.py", "Your OOM", ":material/memory_alt:", "your-oom", lesson=False),
    PageEntry("execution_stack.py", "Execution stack", ":material/layers:", "execution-stack"),
    PageEntry("linear_layer.py", "Linear layer cost", ":material/calculate:", "linear-layer"),
    PageEntry("memory_budget.py", "Memory budget", ":material/memory:", "memory-budget"),
    PageEntry("run_a.py", "Run A experiment", ":material/science:", "run-a"),
    PageEntry("quiz_report.py", "Quiz and report", ":material/assignment_turned_in:", "quiz-report"),
    PageEntry("scaling.py", "Scaling out", ":material/hub:", "scaling"),
    # Not a lesson: no part in data/lab.json names it, so it stays out of progress.
    PageEntry("instructor.py", "Instructor", ":material/co_present:", "instructor", lesson=False),
)


LESSONS = tuple(entry for entry in PAGES if entry.lesson)


def _page(entry: PageEntry) -> st.Page:
    return st.Page(
        PAGES_DIR / entry.file,
        title=entry.title,
        icon=entry.icon,
        url_path=entry.url_path,
        default=entry.url_path is None,
    )


def menu() -> list[st.Page]:
    """Every page as `st.navigation` takes it, Home first and the default. Built afresh on every run
    (about 0.2 ms): st.navigation marks the page it returns as the one this run may call, and a page object
    kept across runs is shared by two runs of one session when a rerun starts a new script thread before
    the stopped one has finished (Streamlit's `runner.fastReruns`): the newer run's call then unmarks the
    page the older one was about to call, which refuses it."""
    return [_page(entry) for entry in PAGES]


def page_for(page: str) -> st.Page:
    """A page object for "pages/<file>.py", for `st.page_link`: linking a page object skips the
    file-path lookup Streamlit does for a link given as a path."""
    return _page(_entry(page))


def title_of(page: str) -> str:
    """The menu title of a page given as "pages/<file>.py", so links read exactly like the menu."""
    return _entry(page).title


def _entry(page: str) -> PageEntry:
    name = Path(page).name
    for entry in PAGES:
        if entry.file == name:
            return entry
    raise ValueError(f"{page!r} is not a page of this lab.")


def next_link(page: str) -> None:
    """A "Next →" link to the lesson after `page` in the menu; the last lesson links back to Home."""
    index = LESSONS.index(_entry(page))
    following = LESSONS[(index + 1) % len(LESSONS)]
    st.divider()
    st.page_link(page_for(following.file), label=f"Next → {following.title}", icon=following.icon)
