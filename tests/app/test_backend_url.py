"""The served page tells Streamlit's frontend where the app's root is (server/backend_url.py)."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest
import streamlit
from hypothesis import given
from hypothesis import strategies as st
from starlette.types import Message, Receive, Scope, Send

import serve
from server.backend_url import BackendBaseUrl, is_a_page_path, root_path, root_script, with_root_script
from server.message_rate import MessageCap
from server.stream_frames import StreamFrames

STATIC = Path(streamlit.__file__).parent / "static"
PAGE = b"<!DOCTYPE html><html><head><title>lab</title></head><body></body></html>"
NAVIGATION = [
    (b"accept", b"text/html,application/xhtml+xml,*/*;q=0.8"),
    (b"accept-encoding", b"gzip, br"),
    (b"if-none-match", b'"abc"'),
    (b"if-modified-since", b"Fri, 04 Dec 2026 22:00:00 GMT"),
]
FILE_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"content-length", str(len(PAGE)).encode()),
    (b"etag", b'"abc"'),
    (b"last-modified", b"Fri, 04 Dec 2026 22:00:00 GMT"),
    (b"cache-control", b"no-cache"),
]


class Server:
    """A stand-in for Streamlit's app: records what reached it and answers with one response."""

    def __init__(
        self,
        status: int = 200,
        headers: list[tuple[bytes, bytes]] | None = None,
        body: bytes | list[bytes] = PAGE,
    ):
        self.status = status
        self.headers = FILE_HEADERS if headers is None else headers
        self.chunks = [body] if isinstance(body, bytes) else list(body)
        self.seen: Scope = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.seen = scope
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        for index, chunk in enumerate(self.chunks):
            more = index < len(self.chunks) - 1
            await send({"type": "http.response.body", "body": chunk, "more_body": more})


def fetch(
    server: Server,
    headers: list[tuple[bytes, bytes]] = NAVIGATION,
    method: str = "GET",
    base: str = "",
    path: str = "/four-runs",
) -> tuple[Message, dict[bytes, bytes], bytes]:
    """Run one request through the middleware; the response's start message, headers and body."""
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": method, "path": path, "headers": headers}
    asyncio.run(BackendBaseUrl(server, base_url_path=base)(scope, receive, send))
    start = sent[0]
    body = b"".join(message.get("body", b"") for message in sent[1:])
    return start, dict(start["headers"]), body


def test_the_root_follows_streamlits_base_url_path() -> None:
    assert root_path("") == "/"
    assert root_path("lab") == "/lab/"
    assert root_path("/lab/") == "/lab/"
    assert root_path("classes/march") == "/classes/march/"


def test_the_script_sets_the_frontends_backend_url_from_the_pages_own_origin() -> None:
    script = root_script("lab").decode()
    assert script.startswith("<script>") and script.endswith("</script>")
    # Resolved by the browser against the page's URL, keeping anything a host set before.
    assert 'BACKEND_BASE_URL: new URL("/lab/", window.location.href).href' in script
    assert "Object.assign({}, window.__streamlit," in script


def test_a_navigation_gets_the_page_with_the_script_first_in_its_head() -> None:
    server = Server()
    start, headers, body = fetch(server)
    assert start["status"] == 200
    assert body == PAGE.replace(b"<head>", b"<head>" + root_script(""))
    assert headers[b"content-length"] == str(len(body)).encode()
    assert headers[b"cache-control"] == b"no-cache"
    # Built per request: the file's validators went, and the app was asked for the whole page, plain.
    assert b"etag" not in headers and b"last-modified" not in headers
    asked = dict(server.seen["headers"])
    assert asked == {b"accept": NAVIGATION[0][1]}


@pytest.mark.parametrize(
    ("path", "base", "page"),
    [
        ("/", "", True),
        ("/four-runs", "", True),
        ("/lab", "lab", True),
        ("/lab/four-runs", "/lab/", True),
        ("/four-runs", "lab", False),  # outside the app's root
        ("/_stcore/health", "", False),
        ("/component/lab.identity/index.html", "", False),
        ("/lab/media/report.html", "lab", False),
        ("/app/static/notes.html", "", False),
        ("/static/index.html", "", False),
    ],
)
def test_pages_are_the_paths_outside_streamlits_own_routes(path: str, base: str, page: bool) -> None:
    assert is_a_page_path(path, base) is page


def test_an_html_file_under_streamlits_own_routes_keeps_its_bytes() -> None:
    server = Server()
    _, answered, body = fetch(server, path="/component/lab.identity/index.html")
    assert (body, answered) == (PAGE, dict(FILE_HEADERS))
    assert server.seen["headers"] == NAVIGATION


def test_a_page_sent_in_pieces_is_joined_before_the_script_goes_in() -> None:
    pieces = [PAGE[:9], PAGE[9:20], PAGE[20:]]
    _, headers, body = fetch(Server(body=pieces), base="lab", path="/lab/four-runs")
    assert body == PAGE.replace(b"<head>", b"<head>" + root_script("lab"))
    assert headers[b"content-length"] == str(len(body)).encode()


@pytest.mark.parametrize(
    ("headers", "method"),
    [
        ([(b"accept", b"*/*"), (b"accept-encoding", b"gzip")], "GET"),  # the frontend's health check
        ([(b"accept", b"application/json")], "GET"),
        (NAVIGATION, "HEAD"),
        (NAVIGATION, "POST"),
    ],
)
def test_requests_that_are_not_a_browser_opening_a_page_pass_untouched(
    headers: list[tuple[bytes, bytes]], method: str
) -> None:
    server = Server()
    _, answered, body = fetch(server, headers=headers, method=method)
    assert body == PAGE
    assert answered == dict(FILE_HEADERS)
    assert server.seen["headers"] == headers


@pytest.mark.parametrize(
    ("status", "kind"),
    [(304, b"text/html"), (404, b"text/html"), (200, b"application/json"), (200, b"text/plain")],
)
def test_replies_other_than_a_page_pass_untouched(status: int, kind: bytes) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(PAGE)).encode())]
    start, answered, body = fetch(Server(status=status, headers=headers))
    assert (start["status"], body, answered) == (status, PAGE, dict(headers))


def test_a_page_without_a_head_goes_out_as_it_was_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    page = b"<html><body>changed</body></html>"
    headers = [(b"content-type", b"text/html"), (b"content-length", str(len(page)).encode())]
    with caplog.at_level(logging.WARNING, logger="server.backend_url"):
        _, answered, body = fetch(Server(headers=headers, body=page))
    assert body == page
    assert answered[b"content-length"] == str(len(page)).encode()
    assert "no <head> tag" in caplog.text


def test_websockets_and_lifespan_pass_untouched() -> None:
    seen: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["type"])

    async def nothing_comes() -> Message:
        raise AssertionError("the middleware read from a connection it should only pass on")

    async def nothing_goes(message: Message) -> None:
        raise AssertionError("the middleware sent on a connection it should only pass on")

    for kind in ("websocket", "lifespan"):
        asyncio.run(BackendBaseUrl(app)({"type": kind, "headers": NAVIGATION}, nothing_comes, nothing_goes))
    assert seen == ["websocket", "lifespan"]


_HTML_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<>"), max_size=40)


@given(before=_HTML_TEXT, attributes=st.sampled_from(["", ' lang="en"', " data-x='1'"]), after=_HTML_TEXT)
def test_the_script_goes_in_once_right_after_the_first_head_tag(
    before: str, attributes: str, after: str
) -> None:
    page = f"{before}<HEAD{attributes}>{after}<head>".encode()
    changed = with_root_script(page, "")
    assert changed is not None
    tag = f"<HEAD{attributes}>".encode()
    assert changed == page.replace(tag, tag + root_script(""), 1)
    assert changed.count(b"BACKEND_BASE_URL") == 1


@given(page=st.binary(max_size=200).filter(lambda page: b"<head" not in page.lower()))
def test_a_page_with_no_head_tag_is_not_changed(page: bytes) -> None:
    assert with_root_script(page, "") is None


def test_the_pinned_streamlit_page_takes_the_script_before_its_bundle_runs() -> None:
    page = (STATIC / "index.html").read_bytes()
    changed = with_root_script(page, "")
    assert changed is not None
    # The bundle reads the setting once, when it loads: the script must come before it.
    assert changed.index(b"BACKEND_BASE_URL") < changed.index(b'<script type="module"')


def test_the_pinned_streamlit_frontend_reads_the_backend_url_it_is_given() -> None:
    # The bundles that read the setting, whatever their files are called and however the directory lists them.
    readers = [
        text
        for path in sorted((STATIC / "static" / "js").glob("*.js"))
        if re.search(r"BACKEND_BASE_URL\(\)\{return \w+\?\.BACKEND_BASE_URL\}", text := path.read_text())
    ]
    # One of them reads window.__streamlit, and probes the page's own path only where that names no backend.
    assert any("window.__streamlit" in text and "_stcore/health" in text for text in readers)


def test_the_served_app_puts_the_middleware_in() -> None:
    assert [entry.cls for entry in serve.app._user_middleware] == [BackendBaseUrl, StreamFrames, MessageCap]
