"""File uploads as a browser sends them to a server on this machine, and what the server then holds.

The browser PUTs a file as multipart form data to /_stcore/upload_file/<session>/<file id>, with
Streamlit's XSRF token in a header matching its cookie, then sends a rerun whose file uploader
value names the file. The server mints file ids for the browser, but its upload route stores any id
a client names, as an attacker would use it; these helpers do the same. Only loopback.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence

import httpx
from streamlit.proto.WidgetStates_pb2 import WidgetState

from tests.harness.load_client import LOOPBACK, _loopback_tls

_XSRF_COOKIE = "_streamlit_xsrf"
# /_stcore/metrics lines such as: cache_memory_bytes{cache_type="UploadedFileManager",cache="",...} 1234
_UPLOAD_BYTES = re.compile(r'^cache_memory_bytes\{cache_type="UploadedFileManager"[^}]*\}\s+(\d+)', re.M)


def new_file_id() -> str:
    """A file id of the kind the server hands out."""
    return str(uuid.uuid4())


async def put_file(
    port: int,
    session_id: str,
    file_id: str,
    data: bytes,
    *,
    cookies: dict[str, str],
    tls: bool = False,
    name: str = "progress.json",
    timeout_s: float = 60.0,
    source: str = LOOPBACK,
) -> tuple[int, str]:
    """PUT one file for this session, as the browser does, from the loopback address `source`; returns
    the status and the reply's text."""
    scheme = "https" if tls else "http"
    headers = {"X-Xsrftoken": cookies.get(_XSRF_COOKIE, "")}
    verify = _loopback_tls() if tls else False
    transport = httpx.AsyncHTTPTransport(verify=verify, local_address=source)
    async with httpx.AsyncClient(transport=transport, cookies=cookies, timeout=timeout_s) as client:
        reply = await client.put(
            f"{scheme}://{LOOPBACK}:{port}/_stcore/upload_file/{session_id}/{file_id}",
            files={"file": (name, data, "application/octet-stream")},
            headers=headers,
        )
    return reply.status_code, reply.text


def uploader_state(widget_id: str, files: Sequence[tuple[str, str, int]]) -> WidgetState:
    """A file uploader's value naming these files, each (file id, name, size in bytes)."""
    state = WidgetState(id=widget_id)
    value = state.file_uploader_state_value
    for file_id, name, size in files:
        info = value.uploaded_file_info.add()
        info.file_id, info.name, info.size = file_id, name, size
    return state


def held_upload_bytes(port: int, timeout_s: float = 10.0) -> int:
    """The bytes of uploaded files a replica holds, from its metrics (0 when it holds none). Straight to
    the replica: the workshop proxy refuses /_stcore/metrics from outside."""
    reply = httpx.get(f"http://{LOOPBACK}:{port}/_stcore/metrics", timeout=timeout_s)
    reply.raise_for_status()
    return sum(int(found) for found in _UPLOAD_BYTES.findall(reply.text))
