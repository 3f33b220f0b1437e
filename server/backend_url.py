"""Tell the browser where the server's root is, so a link to a lesson connects at once.

Streamlit's frontend does not know the app's root when it opens on a page's own URL
(`/four-runs`). It probes `/four-runs/_stcore/health` first, gets a 404, waits 100 ms and only
then tries `/_stcore/health`: every visit that starts on a lesson, rather than on Home, connects
about 0.1 s later. The frontend reads the root from `window.__streamlit.BACKEND_BASE_URL`, the
setting Streamlit added for hosts that serve its page themselves (streamlit/streamlit#11378; #11537
names this very 404). `BackendBaseUrl` is ASGI middleware for `st.App` (serve.py) that adds one
script setting it to the app's root to every page of the app a browser opens. Nothing else
changes: the frontend then probes only the root, on the same origin.

Where the page has no `<head>` to put it in (a Streamlit release that changed its page), the page
goes out as it was, with a warning: the lessons still open, as before, just later.
"""

from __future__ import annotations

import json
import logging
import re

import streamlit as st
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_LOGGER = logging.getLogger(__name__)

_ASKED_AWAY = (b"accept-encoding", b"if-none-match", b"if-modified-since")
_REPLACED = (b"content-length", b"etag", b"last-modified")
# Streamlit's own routes under the app's root (its reserved prefixes, and the app's static folder).
_STREAMLIT_ROUTES = ("_stcore/", "media/", "component/", "static/", "app/static/")
_HEAD = re.compile(rb"<head(\s[^>]*)?>", re.IGNORECASE)


def root_path(base_url_path: str) -> str:
    """The app's root as a URL path, from Streamlit's `server.baseUrlPath`: "/" or "/lab/"."""
    inner = base_url_path.strip("/")
    return f"/{inner}/" if inner else "/"


def root_script(base_url_path: str) -> bytes:
    """The script that hands the frontend the app's root, resolved against the page's own origin."""
    # The browser resolves the path, so the URL is right behind a proxy that terminates TLS; no "<"
    # goes into the script as it is, so a configured path cannot close the tag.
    path = json.dumps(root_path(base_url_path)).replace("<", "\\u003c")
    return (
        "<script>window.__streamlit = Object.assign({}, window.__streamlit, "
        f"{{BACKEND_BASE_URL: new URL({path}, window.location.href).href}});</script>"
    ).encode()


def with_root_script(page: bytes, base_url_path: str) -> bytes | None:
    """`page` with the script right after its `<head>` tag; None where it has no such tag."""
    head = _HEAD.search(page)
    if head is None:
        return None
    return page[: head.end()] + root_script(base_url_path) + page[head.end() :]


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes:
    return next((value for key, value in headers if key.lower() == name), b"")


def is_a_page_path(path: str, base_url_path: str) -> bool:
    """Whether `path` may name one of the app's pages: under its root and outside Streamlit's own
    routes, so a file served there (a custom component's HTML, say) keeps its bytes."""
    root = root_path(base_url_path)
    if not (path + "/").startswith(root):
        return False
    return not path[len(root) :].startswith(_STREAMLIT_ROUTES)


def _opens_a_page(scope: Scope) -> bool:
    # A browser's navigation accepts HTML; the frontend's own requests (health, host config) do not.
    return (
        scope["type"] == "http"
        and scope["method"] == "GET"
        and b"text/html" in _header(scope["headers"], b"accept")
    )


class BackendBaseUrl:
    """ASGI middleware: every page of the app a browser opens tells the frontend where the root is."""

    def __init__(self, app: ASGIApp, base_url_path: str | None = None) -> None:
        self.app = app
        self._base_url_path = base_url_path  # None: Streamlit's `server.baseUrlPath`, read per page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass requests through; hold an HTML page's reply until its body can get the script."""
        base = self._base() if _opens_a_page(scope) else None
        if base is None or not is_a_page_path(scope["path"], base):
            await self.app(scope, receive, send)
            return
        # The page is a few kilobytes: asked for plain, so the script goes in without unpacking it,
        # and whole, so no validator can answer with the copy a browser kept from before.
        headers = [(key, value) for key, value in scope["headers"] if key.lower() not in _ASKED_AWAY]
        held: Message | None = None
        body: list[bytes] = []

        async def add_script(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                kind = _header(message.get("headers", []), b"content-type")
                if message["status"] == 200 and kind.startswith(b"text/html"):
                    held = message
                    return
            elif message["type"] == "http.response.body" and held is not None:
                body.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                await self._send_page(held, b"".join(body), base, send)
                return
            await send(message)

        await self.app({**scope, "headers": headers}, receive, add_script)

    def _base(self) -> str:
        if self._base_url_path is not None:
            return self._base_url_path
        return str(st.get_option("server.baseUrlPath") or "")

    @staticmethod
    async def _send_page(start: Message, page: bytes, base: str, send: Send) -> None:
        changed = with_root_script(page, base)
        if changed is None:
            _LOGGER.warning(
                "The app's page has no <head> tag; links to a lesson will probe the lesson's path "
                "before the app's root, as Streamlit does without help."
            )
            changed = page
        # The page is built per request: its length changes and the file's validators no longer apply.
        headers = [(key, value) for key, value in start["headers"] if key.lower() not in _REPLACED]
        headers.append((b"content-length", str(len(changed)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": changed, "more_body": False})
