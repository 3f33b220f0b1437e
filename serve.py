"""The served entry point: the lab (Home.py) with its per-process caches warmed before the first visitor.

    streamlit run serve.py --server.port 8501 --server.address 127.0.0.1

`streamlit run` finds the `st.App` below and serves Home.py through it; the startup hook (Streamlit's
documented `lifespan`) installs our server hooks, imports the lab, loads its shared data and freezes it
out of the garbage collector's scans first, and the server answers its health check only once that is
done (README, Hosting). `streamlit run Home.py` still works, cold.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st
from starlette.middleware import Middleware

from ui import server_hooks
from ui.backend_url import BackendBaseUrl
from ui.warm import freeze_loaded, warm_caches


@asynccontextmanager
async def _warm_first(_app: Any) -> AsyncIterator[None]:
    server_hooks.install()  # before any session opens (ui/server_hooks.py)
    warm_caches()
    freeze_loaded()  # after warming, so the shared data is out of the garbage collector's scans too
    yield


# The page tells the browser where the root is, so a link to a lesson connects without a probe.
app = st.App("Home.py", lifespan=_warm_first, middleware=[Middleware(BackendBaseUrl)])
