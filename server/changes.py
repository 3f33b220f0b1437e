"""Every change the lab makes to Streamlit's private code, with what it needs and when it can go.

`install` puts them in once per process. `serve.py` calls it before uvicorn takes its first connection,
so no session's first messages go out unguarded; Home.py calls it too (every call after the first only
answers), for `streamlit run Home.py`.

Each change says what kind it is, and that decides what happens when the running Streamlit lacks a
private name it needs (`server/streamlit_private.py` looks them all up):

- a guard keeps a client from hurting the server or another learner, and a fix keeps a page whole:
  neither may silently go missing, so the server refuses to serve, in one sentence that names the
  change and the Streamlit version (`Refused`);
- a speed change only makes the server faster: it steps aside with one warning, and the lab runs as
  Streamlit alone would.

The changes that use public API only are not listed: no Streamlit release can take their hooks away
unannounced. They are `server/sockets.py` (TCP_NODELAY), `server/run_slots.py` (two script runs at
once), `server/warm.py` (caches warmed at start), and serve.py's ASGI middleware:
`server/backend_url.py` (the page names the app's root), `server/stream_frames.py` (a text frame closes
the socket with one line) and `server/message_rate.py`'s `MessageCap` (the message cap before decoding).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

from server import message_rate, runner_handover, uploads, widget_types
from server import streamlit_private as private
from server.decided_once import DecidedOnce

_LOGGER = logging.getLogger(__name__)


class Kind(enum.Enum):
    """What a change is for, which decides whether the server may run without it."""

    GUARD = "guard"
    FIX = "fix"
    SPEED = "speed"


@dataclass(frozen=True)
class Change:
    """One change to Streamlit's private code."""

    name: str
    kind: Kind
    what: str
    needs: tuple[str, ...]
    until: str  # when it can go: the upstream issue or release that makes it unneeded
    put_in: Callable[[], None]


class Refused(RuntimeError):
    """A guard or a fix cannot go in: the lab must not be served on this Streamlit."""


# In the order they go in. Each guard wraps Streamlit's message handler around the last, so the one put
# in last runs first: the message cap before the widget-type check, and a flood pays for neither.
CHANGES: tuple[Change, ...] = (
    Change(
        name="widget_types",
        kind=Kind.GUARD,
        what="drops widget values of a kind the widget does not take, before Streamlit's deserialisers",
        needs=widget_types.NEEDS,
        until="Streamlit validates a widget value's kind before deserialising it (no upstream issue yet)",
        put_in=widget_types.install,
    ),
    Change(
        name="uploads",
        kind=Kind.GUARD,
        what="bounds the files and bytes each session keeps and releases files no widget holds",
        needs=uploads.NEEDS,
        until="Streamlit bounds a session's uploads and frees those of sessions it forgets (no upstream "
        "issue yet)",
        put_in=uploads.install,
    ),
    Change(
        name="message_rate",
        kind=Kind.GUARD,
        what="caps the messages each connection and each client address may send; closes a flooding one",
        needs=message_rate.NEEDS,
        until="Streamlit caps websocket messages itself, or HAProxy can see them (no upstream issue yet)",
        put_in=message_rate.install,
    ),
    Change(
        name="runner_handover",
        kind=Kind.FIX,
        what="a rerun arriving as a run ends no longer loses the end of that run's page",
        needs=runner_handover.NEEDS,
        until="Streamlit handles a finished runner's queued events before a new runner's (streamlit#9921 "
        "fixed one case of it); tests/app/test_runner_handover.py's canary then fails",
        put_in=runner_handover.install,
    ),
)


def refusal(change: Change, lacking: list[str]) -> str:
    """The one sentence the server refuses with when `change` cannot go in."""
    return (
        f"The lab will not start: its {change.kind.value} '{change.name}' ({change.what}) cannot go into "
        f"Streamlit {private.VERSION}, which lacks {', '.join(lacking)}; use the pinned Streamlit "
        "(requirements.lock) or update server/."
    )


def _install_all(changes: tuple[Change, ...]) -> str | None:
    """Put each change in, or step it aside; the refusal sentence of the first guard or fix that cannot go
    in (and nothing is replaced then), or None."""
    lacking = {change.name: private.missing(change.needs) for change in changes}
    for change in changes:
        if lacking[change.name] and change.kind is not Kind.SPEED:
            return refusal(change, lacking[change.name])
    for change in changes:
        if lacking[change.name]:
            _LOGGER.warning(
                "Streamlit %s lacks %s: the speed change '%s' is left out (%s).",
                private.VERSION,
                ", ".join(lacking[change.name]),
                change.name,
                change.what,
            )
            continue
        change.put_in()
    return None


_installed = DecidedOnce(lambda: _install_all(CHANGES))


def install() -> None:
    """Put every change in, once per process; raises `Refused` (every call) where a guard or a fix cannot."""
    sentence = _installed()
    if sentence is not None:
        raise Refused(sentence)
