"""The workshop proxy and what Streamlit serves as files: it compresses the page and the scripts
(Streamlit sends them uncompressed), and keeps the scripts, which are named by their content and
served as immutable, so that a replica sends each one once, not once per browser.

One `streamlit run serve.py`, as deploy/start.sh serves the lab, behind deploy/proxy.sh (Debian's
HAProxy, HTTPS with its self-signed certificate).
"""

from __future__ import annotations

import gzip
import re
import ssl
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from bench.proxy import workshop_proxy
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer

# The self-signed certificate deploy/proxy.sh makes for a trial: the test trusts it on loopback only.
_LOOPBACK_TLS = ssl._create_unverified_context()


def _get(url: str, *, gzip_ok: bool, browsing: bool = False) -> tuple[bytes, str]:
    """The raw body (as sent) and its Content-Encoding; `browsing` asks as a browser opening a page."""
    headers = {"Accept-Encoding": "gzip" if gzip_ok else "identity"}
    if browsing:
        headers["Accept"] = "text/html,application/xhtml+xml,*/*;q=0.8"
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, context=_LOOPBACK_TLS, timeout=30) as reply:
        return reply.read(), reply.headers.get("Content-Encoding", "identity")


def _age(url: str) -> str | None:
    """The Age header of a reply, which HAProxy adds to what it serves from its cache."""
    with urllib.request.urlopen(url, context=_LOOPBACK_TLS, timeout=30) as reply:
        reply.read()
        return reply.headers.get("Age")


@dataclass(frozen=True)
class Urls:
    proxy: str  # through deploy/proxy.sh
    app: str  # the replica itself


@pytest.fixture(scope="module")
def urls(haproxy: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Urls]:
    logs = tmp_path_factory.mktemp("proxy")
    with StreamlitServer(REPO_ROOT / "serve.py", post_script_gc=False, log_path=logs / "app.log") as app:
        with workshop_proxy([app.port], logs / "proxy.log") as port:
            yield Urls(proxy=f"https://127.0.0.1:{port}", app=f"http://127.0.0.1:{app.port}")


def _main_script(urls: Urls) -> str:
    """The path of the page's main script, from the page the replica serves."""
    page, _ = _get(f"{urls.app}/", gzip_ok=False)
    [script] = re.findall(rb'src="\./(static/js/index\.[^"]+\.js)"', page)
    return script.decode()


@pytest.mark.parametrize("path", ["", "main script"])
def test_the_page_and_its_main_script_travel_compressed_when_the_browser_accepts_gzip(
    urls: Urls, path: str
) -> None:
    path = _main_script(urls) if path == "main script" else path
    as_served, _ = _get(f"{urls.app}/{path}", gzip_ok=False)
    packed, encoding = _get(f"{urls.proxy}/{path}", gzip_ok=True)
    assert encoding == "gzip"
    assert gzip.decompress(packed) == as_served
    if path:
        assert len(packed) < len(as_served) / 2  # a script is text: well under half once packed


def test_a_browser_that_does_not_accept_gzip_gets_the_script_as_the_replica_serves_it(urls: Urls) -> None:
    path = _main_script(urls)
    body, encoding = _get(f"{urls.proxy}/{path}", gzip_ok=False)
    assert encoding == "identity"
    assert body == _get(f"{urls.app}/{path}", gzip_ok=False)[0]


def test_a_script_is_fetched_from_the_replica_once_and_then_served_by_the_proxy(urls: Urls) -> None:
    path = f"{urls.proxy}/{_main_script(urls)}"
    _age(path)  # the first browser's request reaches the replica, and the proxy keeps the reply
    assert _age(path) is not None
    assert _age(f"{urls.proxy}/") is None  # the page itself is not kept (Streamlit marks it no-cache)


def test_a_lesson_opened_through_the_proxy_names_the_root_and_travels_compressed(urls: Urls) -> None:
    # serve.py's middleware (server/backend_url.py) adds its script to the page a browser opens.
    as_served, _ = _get(f"{urls.app}/four-runs", gzip_ok=False, browsing=True)
    packed, encoding = _get(f"{urls.proxy}/four-runs", gzip_ok=True, browsing=True)
    assert encoding == "gzip"
    page = gzip.decompress(packed)
    assert page == as_served
    assert page.count(b"BACKEND_BASE_URL") == 1
