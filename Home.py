"""Entry point: declares the lab's pages in lesson order and draws the shared frame."""

from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui.frame import progress_sidebar
from ui.sockets import disable_nagle_once
from ui.state import ensure_state

PAGES_DIR = Path(__file__).parent / "pages"

# A folder called pages/ makes Streamlit first run the app in its old directory mode, which
# cannot resolve our url paths and pops up "Page not found" on every shared deep link. Our
# navigation is declared below, so we switch that mode off for every later script run.
PagesManager.uses_pages_directory = False

st.set_page_config(
    page_title="Reading a Training Run",
    page_icon=str(Path(__file__).parent / "assets" / "favicon.png"),
    layout="wide",
)
ensure_state()
disable_nagle_once()

page = st.navigation(
    [
        st.Page(PAGES_DIR / "home.py", title="Home", icon=":material/home:", default=True),
        st.Page(PAGES_DIR / "four_runs.py", title="Four runs", icon=":material/sort:", url_path="four-runs"),
        st.Page(
            PAGES_DIR / "execution_stack.py",
            title="Execution stack",
            icon=":material/layers:",
            url_path="execution-stack",
        ),
        st.Page(
            PAGES_DIR / "linear_layer.py",
            title="Linear layer cost",
            icon=":material/calculate:",
            url_path="linear-layer",
        ),
        st.Page(
            PAGES_DIR / "memory_budget.py",
            title="Memory budget",
            icon=":material/memory:",
            url_path="memory-budget",
        ),
        st.Page(
            PAGES_DIR / "run_a.py", title="Run A experiment", icon=":material/science:", url_path="run-a"
        ),
        st.Page(
            PAGES_DIR / "quiz_report.py",
            title="Quiz and report",
            icon=":material/assignment_turned_in:",
            url_path="quiz-report",
        ),
        st.Page(PAGES_DIR / "scaling.py", title="Scaling out", icon=":material/hub:", url_path="scaling"),
    ]
)
progress_sidebar()
page.run()
