"""Our guards and fixes in front of Streamlit's server, installed once per process.

`serve.py` installs them in its startup hook, before the first browser connects, so no session's first
messages go out unguarded. Home.py installs them too (every call after the first does nothing), for
`streamlit run Home.py`.
"""

from __future__ import annotations

from server import uploads
from ui import loop_wakeups, message_rate, own_key_lookup, theme_once, widget_types


def install() -> None:
    """Cap each connection's message rate, drop widget values of the wrong type, batch the loop's wake-ups,
    fill in the theme of a run's opening message once, let widgets look up their own key alone, bound the
    uploads a session keeps (server/uploads.py)."""
    message_rate.install()
    uploads.install()
    widget_types.install()
    loop_wakeups.install()
    theme_once.install()
    own_key_lookup.install()
