"""The served entry point: the lab (Home.py) with the server's changes in and its caches warmed first.

    streamlit run serve.py --server.port 8501 --server.address 127.0.0.1

`streamlit run` finds the `st.App` below and serves Home.py through it. Importing this module puts the
changes to Streamlit's server in (server/changes.py) before uvicorn takes a connection, or stops the
process with one sentence where a guard or a fix cannot go into the installed Streamlit. The startup hook
(Streamlit's documented `lifespan`) imports the lab, loads its shared data and freezes it out of the
garbage collector's scans, and the server answers its health check only once that is done (README,
Hosting). `streamlit run Home.py` still works, cold.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st
from starlette.middleware import Middleware

from server.backend_url import BackendBaseUrl
from server.changes import Refused, install
from server.message_rate import MessageCap
from server.stream_frames import StreamFrames
from server.uploads import check_runtime
from server.warm import freeze_loaded, warm_caches

try:
    install()
except Refused as refused:
    raise SystemExit(str(refused)) from None


@asynccontextmanager
async def _warm_first(_app: Any) -> AsyncIterator[None]:
    check_runtime()  # the upload guard wrapped the manager class this server really uses
    warm_caches()
    freeze_loaded()  # after warming, so the shared data is out of the garbage collector's scans too
    yield


# The page tells the browser where the root is, so a link to a lesson connects without a probe; a text
# frame on the websocket closes it with one log line; the message cap drops frames before they are decoded.
app = st.App(
    "Home.py",
    lifespan=_warm_first,
    middleware=[Middleware(BackendBaseUrl), Middleware(StreamFrames), Middleware(MessageCap)],
)
