"""Entry point: declares the lab's pages in lesson order and draws the shared frame."""

import streamlit as st

from server.changes import Refused, install
from server.run_slots import run_slot
from server.sockets import disable_nagle_once
from ui.boxes import sidebar_boxes
from ui.frame import FAVICON_URL, framed, progress_summary
from ui.identity import saved_work_box, settle_learner
from ui.nav import menu
from ui.rooms import room_box
from ui.signing import weak_key_refused
from ui.state import ensure_state, save_seeded

# A folder called pages/ makes Streamlit run a process's very first script in its old
# pages-folder mode, which cannot resolve our url paths ("Page not found" on a deep link).
# st.navigation below switches that mode off for every later run of the process; nothing public
# can switch it off before the first (see docs/hosting.md).
try:
    install()  # serve.py has done it at startup already
except Refused as refused:
    st.error(str(refused))  # under `streamlit run Home.py`: the guards are not in, so nothing else is served
    st.stop()

st.set_page_config(
    page_title="Reading a Training Run",
    page_icon=FAVICON_URL,
    layout="wide",
)
ensure_state()
disable_nagle_once()


def lab() -> None:
    """The frame and the page the browser asked for; a few runs of the process work at once and the
    others queue (server/run_slots.py)."""
    with run_slot():
        page = st.navigation(menu())
        # Before anything is drawn from the learner's state: whose work this is, loaded from the store.
        settle_learner()
        progress_summary()
        sidebar_boxes(saved_work_box, room_box)
        try:
            with framed():
                page.run()
        finally:
            # The defaults a first visit showed go to the store together, once the page is drawn.
            redraw = save_seeded()
    if redraw:
        st.rerun()  # another tab had stored some of them: draw the page with the learner's values


# A weak key would let anyone holding one signed file forge others: the app says so and nothing else.
if not weak_key_refused():
    lab()
