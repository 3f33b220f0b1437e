"""Entry point: declares the lab's pages in lesson order and draws the shared frame."""

from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui.frame import progress_sidebar
from ui.nav import menu
from ui.state import ensure_state

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

page = st.navigation(menu())
progress_sidebar()
page.run()
