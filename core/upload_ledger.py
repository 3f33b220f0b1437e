"""What each session has uploaded, and which files to let go: the bookkeeping behind server/uploads.py.

Streamlit keeps every file a session uploads until the session shuts down, and a session whose
connection dropped is forgotten after its reconnect window without being shut down, so its files
stayed for good. This ledger bounds what one session may hold (files and bytes) and what the whole
process may hold, and says which files nobody needs any more:

- an *orphan*: a file that no rerun has named in a file uploader's value since it was uploaded, once
  a grace period has passed (the browser names a file in the rerun right after the upload, so the
  grace only covers a slow server), or that the latest rerun no longer names;
- every file of a session that has had no connection for longer than Streamlit keeps a
  disconnected session for a reconnect.

Pure: the caller passes the time in, asks before storing a file, and does the releasing.
Not thread-safe: the caller holds one lock around every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.datafiles import require

_MB = 1_000_000


@dataclass(frozen=True)
class UploadLimits:
    """How much may be held, and for how long a file or a session may go unclaimed."""

    files_per_session: int
    bytes_per_session: int
    bytes_per_process: int
    orphan_grace_s: float
    closed_session_s: float

    def __post_init__(self) -> None:
        require(self.files_per_session >= 1, "A session must be allowed at least one uploaded file.")
        require(
            0 < self.bytes_per_session <= self.bytes_per_process,
            "A session's upload bytes must be positive and no more than the process's.",
        )
        require(
            self.orphan_grace_s >= 0 and self.closed_session_s >= 0,
            "Upload grace periods cannot be negative.",
        )


@dataclass(frozen=True)
class Refusal:
    """Why a file may not be stored: one sentence, and whether the whole process is full (so the
    refusal is the server's state, not the session's)."""

    sentence: str
    server_full: bool = False


@dataclass
class _File:
    size_bytes: int
    uploaded_s: float
    claimed: bool = False


@dataclass
class _Session:
    files: dict[str, _File] = field(default_factory=dict)
    inactive_since_s: float | None = None

    @property
    def size_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files.values())


class UploadLedger:
    """Sizes and claims of the files each session holds."""

    def __init__(self, limits: UploadLimits) -> None:
        self.limits = limits
        self._sessions: dict[str, _Session] = {}
        self._total_bytes = 0

    @property
    def total_bytes(self) -> int:
        """Bytes held by all sessions together."""
        return self._total_bytes

    def held(self, session_id: str) -> tuple[int, int]:
        """(files, bytes) this session holds."""
        session = self._sessions.get(session_id)
        return (0, 0) if session is None else (len(session.files), session.size_bytes)

    def sessions(self) -> list[str]:
        """Every session that holds at least one file."""
        return list(self._sessions)

    def admit(self, session_id: str, file_id: str, size_bytes: int, now_s: float) -> Refusal | None:
        """Record the file and return None, or return why it may not be stored and record nothing.
        A file id stored again replaces the file it names."""
        session = self._sessions.get(session_id) or _Session()
        before = session.files.get(file_id)
        before_bytes = 0 if before is None else before.size_bytes
        files = len(session.files) + (before is None)
        if files > self.limits.files_per_session:
            return Refusal(
                f"You already have {self.limits.files_per_session} files uploaded here; "
                "remove one before uploading another."
            )
        if session.size_bytes - before_bytes + size_bytes > self.limits.bytes_per_session:
            return Refusal(
                f"Your uploads here would come to more than {self.limits.bytes_per_session / _MB:g} MB; "
                "remove a file before uploading another."
            )
        if self._total_bytes - before_bytes + size_bytes > self.limits.bytes_per_process:
            return Refusal(
                "The server holds as many uploads as it can right now; please try again in a minute.",
                server_full=True,
            )
        session.files[file_id] = _File(size_bytes=size_bytes, uploaded_s=now_s)
        self._sessions[session_id] = session
        self._total_bytes += size_bytes - before_bytes
        return None

    def forget(self, session_id: str, file_id: str) -> None:
        """The file is gone (deleted by the browser, or released)."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        gone = session.files.pop(file_id, None)
        if gone is not None:
            self._total_bytes -= gone.size_bytes
        if not session.files:
            del self._sessions[session_id]

    def forget_session(self, session_id: str) -> None:
        """Every file of the session is gone (it shut down, or was released)."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._total_bytes -= session.size_bytes

    def claim(self, session_id: str, named: set[str], now_s: float) -> list[str]:
        """A rerun named these file ids in its file uploaders' values (the browser sends every widget's
        value with every rerun): they are claimed, the others are not. Returns the orphans to release."""
        session = self._sessions.get(session_id)
        if session is None:
            return []
        for file_id, held in session.files.items():
            held.claimed = file_id in named
        return self.orphans(session_id, now_s)

    def orphans(self, session_id: str, now_s: float) -> list[str]:
        """The session's files that no rerun claims and whose grace has passed."""
        session = self._sessions.get(session_id)
        if session is None:
            return []
        grace_s = self.limits.orphan_grace_s
        return [
            file_id
            for file_id, held in session.files.items()
            if not held.claimed and now_s - held.uploaded_s >= grace_s
        ]

    def sweep(self, now_s: float, connected: Callable[[str], bool]) -> dict[str, list[str]]:
        """Session -> the files to release now: a session without a connection for longer than
        `closed_session_s` lets go of all of them, every other session of its orphans."""
        release: dict[str, list[str]] = {}
        for session_id, session in self._sessions.items():
            if connected(session_id):
                session.inactive_since_s = None
            elif session.inactive_since_s is None:
                session.inactive_since_s = now_s
            closed = (
                session.inactive_since_s is not None
                and now_s - session.inactive_since_s >= self.limits.closed_session_s
            )
            files = list(session.files) if closed else self.orphans(session_id, now_s)
            if files:
                release[session_id] = files
        return release
