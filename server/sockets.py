"""Turn Nagle's algorithm off on the server's TCP sockets, which Streamlit 1.67 leaves on.

Streamlit binds its listening socket itself, with protocol number 0. asyncio sets TCP_NODELAY on
a connection only when the socket's protocol is IPPROTO_TCP, so every accepted websocket keeps
Nagle on, and each small reply waits for the browser's delayed ACK: about 40 ms an interaction.

On Linux an accepted socket inherits TCP_NODELAY from its listening socket. So once per process
we find the server's sockets through `/proc/self/fd` (no Streamlit internals are touched), set
the option on the listener and on the connections already open, and every later connection is
born with it. Where that cannot be done (no `/proc`, or no listener on the server's port
while other listeners exist) nothing changes and a warning says why.

`LAB_TCP_NODELAY=0` in the environment leaves Nagle on, so the benchmark can measure the stall
(bench/README.md); nobody should set it on a served workshop.
"""

from __future__ import annotations

import logging
import os
import socket
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

_LOGGER = logging.getLogger(__name__)
_PROC_FDS = Path("/proc/self/fd")
_SWITCH_ENV = "LAB_TCP_NODELAY"
_TCP_FAMILIES = (socket.AF_INET, socket.AF_INET6)


@dataclass
class Nodelay:
    """What `set_nodelay_on_port` found: sockets on the port it changed, and listeners elsewhere."""

    listeners: int = 0
    connections: int = 0
    other_listeners: int = 0


_lock = threading.Lock()
_done = False  # process-wide: the sockets belong to the process, not to a learner


def set_nodelay_on_port(port: int, fd_dir: Path = _PROC_FDS) -> Nodelay:
    """Set TCP_NODELAY on this process's TCP sockets bound to `port`; count what was seen and changed."""
    result = Nodelay()
    for name in os.listdir(fd_dir):
        try:
            fd = int(name)
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            # A duplicate descriptor shares the socket: an option set through it is set for the
            # server too, and closing the duplicate leaves the server's descriptor open.
            with socket.socket(fileno=os.dup(fd)) as sock:
                if sock.family not in _TCP_FAMILIES or sock.type != socket.SOCK_STREAM:
                    continue
                listening = bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
                if sock.getsockname()[1] != port:
                    result.other_listeners += listening
                    continue
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if listening:
                    result.listeners += 1
                else:
                    result.connections += 1
        except (OSError, ValueError):
            continue  # closed meanwhile, or a descriptor we cannot inspect
    return result


def disable_nagle_once() -> None:
    """On the first script run of a served app, set TCP_NODELAY on the server's sockets."""
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        _done = True
        if os.environ.get(_SWITCH_ENV) == "0":
            _LOGGER.warning("%s=0: Nagle stays on; replies may wait ~40 ms for delayed ACKs.", _SWITCH_ENV)
            return
        if not _PROC_FDS.is_dir():
            _LOGGER.warning("Cannot reach /proc/self/fd; replies may wait ~40 ms for delayed ACKs.")
            return
        port = int(st.get_option("server.port"))
        found = set_nodelay_on_port(port)
        # A process with no listener at all is a test harness (AppTest), not a server.
        if found.listeners == 0 and found.other_listeners > 0:
            _LOGGER.warning(
                "Found no listening socket on port %s; TCP_NODELAY is not set and replies may "
                "wait ~40 ms for delayed ACKs.",
                port,
            )
