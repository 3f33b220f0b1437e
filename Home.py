"""Entry point: declares the lab's pages in lesson order and draws the shared frame."""

from pathlib import Path

import streamlit as st

from ui.frame import progress_sidebar
from ui.state import ensure_state

PAGES_DIR = Path(__file__).parent / "pages"

st.set_page_config(page_title="Reading a Training Run", page_icon=str(Path(__file__).parent / "assets" / "favicon.png"), layout="wide")
ensure_state()

page = st.navigation(
    [
        st.Page(PAGES_DIR / "home.py", title="Home", icon=":material/home:", default=True),
        st.Page(PAGES_DIR / "four_runs.py", title="Four runs", icon=":material/sort:", url_path="four-runs"),
        st.Page(PAGES_DIR / "execution_stack.py", title="Execution stack", icon=":material/layers:", url_path="execution-stack"),
    ]
)
progress_sidebar()
page.run()
