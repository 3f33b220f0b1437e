"""Entry point: declares the lab's pages in lesson order and draws the shared frame."""

from pathlib import Path

import streamlit as st

from ui.frame import progress_sidebar
from ui.nav import menu
from ui.state import ensure_state

# A folder called pages/ makes Streamlit run a process's very first script in its old
# pages-folder mode, which cannot resolve our url paths ("Page not found" on a deep link).
# st.navigation below switches that mode off for every later run of the process; nothing public
# can switch it off before the first (see README, Hosting).

st.set_page_config(
    page_title="Reading a Training Run",
    page_icon=str(Path(__file__).parent / "assets" / "favicon.png"),
    layout="wide",
)
ensure_state()

page = st.navigation(menu())
progress_sidebar()
page.run()
