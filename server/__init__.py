"""Everything that changes how Streamlit's server behaves; `ui/` holds page helpers only.

`server/changes.py` lists the changes to Streamlit's private code and installs them; the other modules
change the server through public API (sockets, run slots, the page's backend URL, warming at start).
"""
