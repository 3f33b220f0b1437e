"""One simulated browser tab speaking Streamlit's own protocol to a server on this machine.

The handshake follows the browser (frontend/connection in the Streamlit repository):
GET /_stcore/health (which also hands out the XSRF cookie) and /_stcore/host-config,
then a websocket to /_stcore/stream offering the subprotocols ["streamlit", <xsrf token>],
with the page's Origin and the cookie. Every message after that is a binary protobuf:
BackMsg from us, ForwardMsg from the server. A run ends with a script_finished message.
Only the loopback address is ever contacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

from google.protobuf.message import DecodeError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import BackendOperationResponse
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Origin, Subprotocol

from tests.harness.isolation import IsolationTally, foreign_markers
from tests.harness.page_model import FINISHED_COMPILE_ERROR, FINISHED_EARLY, PageModel, ProtocolError

LOOPBACK = "127.0.0.1"
_XSRF_COOKIE = "_streamlit_xsrf"
# The browser's stand-in when it has no XSRF cookie (an empty subprotocol is invalid).
_NO_TOKEN = "PLACEHOLDER_AUTH_TOKEN"


@functools.cache
def _loopback_tls() -> ssl.SSLContext:
    """TLS to our own proxy on this machine, whose certificate is self-signed: encrypted, unverified."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class SessionError(Exception):
    """A failure a learner would notice: no connection, a run that never ends, a broken stream."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


@dataclass(frozen=True)
class RunResult:
    """What one request (a first load or a rerun) cost and produced."""

    latency_ms: float
    status: int
    script_runs: int
    page_hash: str
    exceptions: tuple[str, ...]
    # The fragment the request asked the server to rerun; "" for a whole-page run.
    fragment_id: str = ""


@dataclass
class Traffic:
    """Bytes and messages received over the session's life."""

    messages: int = 0
    bytes_in: int = 0


async def http_get(
    port: int, path: str, *, cookie: str = "", timeout_s: float, tls: bool = False, source: str = LOOPBACK
) -> tuple[int, dict[str, list[str]]]:
    """A minimal HTTP/1.1 GET to the loopback server (over TLS to a proxy): status code and headers.
    `source` is the loopback address it comes from (another one stands for another client address)."""
    context = _loopback_tls() if tls else None
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(LOOPBACK, port, ssl=context, local_addr=(source, 0)), timeout_s
    )
    try:
        lines = [f"GET {path} HTTP/1.1", f"Host: {LOOPBACK}:{port}", "Connection: close"]
        if cookie:
            lines.append(f"Cookie: {cookie}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout_s)
        await asyncio.wait_for(reader.read(), timeout_s)
    finally:
        writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), timeout_s)
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, list[str]] = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers.setdefault(name.strip().lower(), []).append(value.strip())
    return int(status_line.split()[1]), headers


def set_cookies(headers: dict[str, list[str]]) -> dict[str, str]:
    """Every cookie the Set-Cookie headers set: name -> value."""
    found: dict[str, str] = {}
    for raw in headers.get("set-cookie", []):
        jar: SimpleCookie = SimpleCookie()
        jar.load(raw)
        found.update({name: morsel.value for name, morsel in jar.items()})
    return found


def xsrf_cookie(headers: dict[str, list[str]]) -> str:
    """The XSRF cookie value from Set-Cookie headers, or "" if the server set none."""
    return set_cookies(headers).get(_XSRF_COOKIE, "")


@dataclass
class Session:
    """One browser session: connect, request runs, watch every message for other sessions' markers."""

    port: int
    marker: str
    timeout_s: float = 30.0
    tls: bool = False  # through the workshop proxy (deploy/), which serves HTTPS only
    # The loopback address this tab comes from: 127.0.0.2 stands for a client on another address than
    # the learners, whom the proxy and the app tell apart by address.
    source: str = LOOPBACK
    # The browser's cookie jar for this site, kept across reconnects when the caller passes the same
    # dict: the proxy's affinity cookie (deploy/haproxy.cfg) and Streamlit's XSRF cookie.
    cookies: dict[str, str] = field(default_factory=dict)
    model: PageModel = field(default_factory=PageModel)
    text_markers: IsolationTally = field(default_factory=IsolationTally)
    traffic: Traffic = field(default_factory=Traffic)
    _ws: ClientConnection | None = None
    _reader: asyncio.Task[None] | None = None
    _waiter: asyncio.Future[int] | None = None
    _script_runs: int = 0
    # Requests outside a run (a download written on the click), by request id, awaiting their answer.
    _operations: dict[str, asyncio.Future[BackendOperationResponse]] = field(default_factory=dict)

    async def connect(self, url_path: str = "") -> RunResult:
        """Open the page at `url_path` like a fresh browser tab; returns the first run's cost."""
        start = time.perf_counter()
        try:
            status, headers = await http_get(
                self.port,
                "/_stcore/health",
                cookie=self.cookie_header(),
                timeout_s=self.timeout_s,
                tls=self.tls,
                source=self.source,
            )
            if status != 200:
                raise SessionError("health", f"status {status}")
            self.cookies.update(set_cookies(headers))
            token = self.cookies.get(_XSRF_COOKIE, "")
            _, headers = await http_get(
                self.port,
                "/_stcore/host-config",
                cookie=self.cookie_header(),
                timeout_s=self.timeout_s,
                tls=self.tls,
                source=self.source,
            )
            self.cookies.update(set_cookies(headers))
            cookie = self.cookie_header()
            scheme = "s" if self.tls else ""
            self._ws = await connect(
                f"ws{scheme}://{LOOPBACK}:{self.port}/_stcore/stream",
                subprotocols=[Subprotocol("streamlit"), Subprotocol(token or _NO_TOKEN)],
                origin=Origin(f"http{scheme}://{LOOPBACK}:{self.port}"),
                ssl=_loopback_tls() if self.tls else None,
                additional_headers={"Cookie": cookie} if cookie else None,
                open_timeout=self.timeout_s,
                local_addr=(self.source, 0),
                # A browser never pings; it only answers the server's pings.
                ping_interval=None,
                max_size=None,
            )
        except (TimeoutError, OSError, ConnectionClosed, InvalidHandshake, ValueError) as error:
            raise SessionError("connect", f"{type(error).__name__}: {error}") from error
        # A browser keeps the cookies of the upgrade's answer too (the lab's standing cookie).
        assert self._ws.response is not None  # the handshake succeeded
        self.cookies.update(set_cookies({"set-cookie": self._ws.response.headers.get_all("Set-Cookie")}))
        self._reader = asyncio.create_task(self._read_forever())
        return await self._request(self.model.rerun_message(page_name=url_path), start)

    def cookie_header(self) -> str:
        """The Cookie header this tab sends: every cookie in its jar."""
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    async def rerun(self, *, page_hash: str | None = None, fragment_id: str = "") -> RunResult:
        """Send the current widget states (and pressed buttons); returns when the run is over.

        After a change or a press inside a fragment only that fragment reruns, as in the browser."""
        message = self.model.rerun_message(page_hash=page_hash, fragment_id=fragment_id)
        return await self._request(message, time.perf_counter())

    async def rerun_with(self, *states: WidgetState) -> RunResult:
        """A rerun that also sends these widget states, values the page model does not make (a file
        uploader's list of uploaded files), as the browser sends every widget's value with every rerun."""
        message = self.model.rerun_message()
        message.rerun_script.widget_states.widgets.extend(states)
        return await self._request(message, time.perf_counter())

    async def download_url(self, file_id: str) -> str:
        """Ask for a download whose file is written on the click, as a browser's click does: the server
        runs the button's callable and answers with the URL to fetch the file from."""
        if self._ws is None:
            raise SessionError("closed", "not connected")
        request_id = f"download-{file_id}"
        answer = asyncio.get_running_loop().create_future()
        self._operations[request_id] = answer
        msg = BackMsg()
        msg.backend_operation_request.request_id = request_id
        msg.backend_operation_request.session_id = self.model.session_id
        msg.backend_operation_request.deferred_file.file_id = file_id
        try:
            await self._ws.send(msg.SerializeToString())
            reply = await asyncio.wait_for(answer, self.timeout_s)
        except TimeoutError as error:
            raise SessionError("timeout", f"no answer to a download within {self.timeout_s:g} s") from error
        finally:
            self._operations.pop(request_id, None)
        if reply.error_msg:
            raise SessionError("download", reply.error_msg)
        return reply.deferred_file.url

    async def close(self) -> None:
        """Close the websocket and stop reading."""
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    async def _request(self, msg: BackMsg, start: float) -> RunResult:
        if self._ws is None:
            raise SessionError("closed", "not connected")
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        self._script_runs = 0
        try:
            await self._ws.send(msg.SerializeToString())
            status = await asyncio.wait_for(self._waiter, self.timeout_s)
        except TimeoutError as error:
            raise SessionError("timeout", f"no script_finished within {self.timeout_s:g} s") from error
        except ConnectionClosed as error:
            raise SessionError("closed", str(error)) from error
        finally:
            self._waiter = None
        latency_ms = (time.perf_counter() - start) * 1000
        if self.model.page_not_found:
            raise SessionError("page_not_found", self.model.page_not_found)
        if status == FINISHED_COMPILE_ERROR:
            raise SessionError("compile_error", "; ".join(self.model.run_exceptions))
        return RunResult(
            latency_ms=latency_ms,
            status=status,
            script_runs=self._script_runs,
            page_hash=self.model.page_hash,
            exceptions=tuple(self.model.run_exceptions),
            fragment_id=msg.rerun_script.fragment_id,
        )

    async def _read_forever(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                if isinstance(raw, str):
                    raise ProtocolError("text frame from server")
                self._receive(raw)
        except ConnectionClosed as error:
            self._fail(SessionError("closed", str(error)))
            return
        except (ProtocolError, DecodeError) as error:
            self._fail(SessionError("protocol", str(error)))
            return
        self._fail(SessionError("closed", "server closed the stream"))

    def _receive(self, raw: bytes) -> None:
        self.traffic.messages += 1
        self.traffic.bytes_in += len(raw)
        if b"bench-s" in raw:
            foreign = foreign_markers(raw, self.marker)
            for other in foreign:
                self.text_markers.record(False, f"{self.marker} received {other}")
            if self.marker.encode() in raw:
                self.text_markers.record(True, "")
        msg = self.model.apply(raw)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self._script_runs += 1
        elif kind == "script_finished" and msg.script_finished != FINISHED_EARLY:
            if self._waiter is not None and not self._waiter.done():
                self._waiter.set_result(msg.script_finished)
        elif kind == "backend_operation_response":
            answer = self._operations.get(msg.backend_operation_response.request_id)
            if answer is not None and not answer.done():
                answer.set_result(msg.backend_operation_response)

    def _fail(self, error: SessionError) -> None:
        for pending in (self._waiter, *self._operations.values()):
            if pending is not None and not pending.done():
                pending.set_exception(error)


async def open_root_once(port: int, *, timeout_s: float = 120.0) -> None:
    """Open the app's root in a throwaway tab: a process's very first run cannot open a deep link
    (docs/hosting.md), so a server is warmed this way before its first deep link."""
    session = Session(port=port, marker="warm-up", timeout_s=timeout_s)
    try:
        await session.connect()
    finally:
        await session.close()


def menu_paths(port: int, marker: str) -> list[str]:
    """The URL path of every page in the app's menu, as one fresh session reads it ("" is the home page)."""

    async def read() -> list[str]:
        session = Session(port=port, marker=marker, timeout_s=60)
        try:
            await session.connect("")
            return [page.url_path for page in session.model.pages]
        finally:
            await session.close()

    return asyncio.run(read())
