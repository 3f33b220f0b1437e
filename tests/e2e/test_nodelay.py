"""The real server's sockets have TCP_NODELAY once the app has run, so replies do not wait ~40 ms.

The test looks inside the running `streamlit run` process: it finds the process listening on the
app's port, takes a copy of each of its socket descriptors with `pidfd_getfd` (Linux 5.6+, as
root) and reads the option on the server's side of every connection.
"""

from __future__ import annotations

import ctypes
import os
import socket
from urllib.parse import urlparse

import psutil

from tests.e2e.conftest import Learner

PIDFD_GETFD = 438  # the same number on x86-64 and arm64


def _server_pid(port: int) -> int:
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr[1] == port and conn.pid:
            return conn.pid
    raise AssertionError(f"no process listens on port {port}")


def _server_sockets(pid: int, port: int) -> list[tuple[bool, int]]:
    """(listening, TCP_NODELAY) for each TCP socket of `pid` bound to `port`."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    found = []
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            fd = libc.syscall(PIDFD_GETFD, pidfd, int(name), 0)
            assert fd >= 0 or ctypes.get_errno() in (9, 22), os.strerror(ctypes.get_errno())
            if fd < 0:
                continue  # closed meanwhile
            try:
                sock = socket.socket(fileno=fd)
            except OSError:
                os.close(fd)  # not a socket
                continue
            with sock:
                if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
                    continue
                if sock.getsockname()[1] != port:
                    continue
                listening = bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
                found.append((listening, sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
    finally:
        os.close(pidfd)
    return found


def test_the_servers_listener_and_open_connections_have_nodelay(learner: Learner, app_url: str) -> None:
    learner.open()
    learner.nav("Four runs")  # a rerun over this learner's websocket
    port = urlparse(app_url).port
    assert port is not None
    sockets = _server_sockets(_server_pid(port), port)
    assert any(listening for listening, _ in sockets), sockets
    assert any(not listening for listening, _ in sockets), "the browser's connection is missing"
    assert all(nodelay == 1 for _, nodelay in sockets), sockets
