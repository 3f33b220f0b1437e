"""Bounds on the files a session keeps in the server, and prompt release of the files nobody needs.

Streamlit keeps every uploaded file in memory, keyed by session, until the session shuts down: its
upload route stores any file id a client names (30 uploads of 10 MB held 300 MB in one session), and
a session whose connection dropped is forgotten after `server.disconnectedSessionTTL` without being
shut down, so its files were never released (20 closed sessions with 4 orphans each held about a
gigabyte). Here the upload manager's methods are wrapped once per process:

- storing a file is refused (HTTP 413, or 503 when the whole process is full) once the session would
  hold more than FILES_PER_SESSION files or BYTES_PER_SESSION bytes, or the process more than
  BYTES_PER_PROCESS;
- every rerun names the files its file uploaders hold (the browser sends every widget's value with
  every rerun): a file no rerun names is an orphan, released ORPHAN_GRACE_S after its upload;
- a sweeper thread releases orphans, and every file of a session that has had no connection for
  longer than Streamlit keeps it for a reconnect.

The bookkeeping is core/upload_ledger.py. This is a security guard (server/changes.py): the private
names it needs are NEEDS, looked up in server/streamlit_private.py, and where one is missing the server
refuses to start. Public ones: the option `server.disconnectedSessionTTL` and
`starlette.exceptions.HTTPException` (the upload route's own way of refusing).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from streamlit import config

from core.upload_ledger import UploadLedger, UploadLimits
from server import streamlit_private as private

NEEDS = (
    "MemoryUploadedFileManager.add_file(session_id, file)",
    "MemoryUploadedFileManager.remove_file(session_id, file_id)",
    "MemoryUploadedFileManager.remove_session_files(session_id)",
    "Runtime.handle_backmsg(session_id, msg, client)",
    "Runtime.exists",
    "Runtime.instance",
    "Runtime.uploaded_file_mgr",
    "Runtime.is_active_session(session_id)",
)

_MB = 1_000_000
# The app's four file uploaders (a progress file to restore, one to check, a training log, a model's
# config.json) hold one file each; a log of up to 10 MB may be replaced by another before the first
# is deleted, so two logs, a config and a progress file fit.
FILES_PER_SESSION = 4
BYTES_PER_SESSION = 24 * _MB
# Every session together, so that many sessions at their cap cannot take a replica's memory.
BYTES_PER_PROCESS = 400 * _MB
# The browser names a file in the rerun it sends once the upload is done; this covers a slow server.
# LAB_UPLOAD_ORPHAN_S and LAB_UPLOAD_SWEEP_S shorten them for the tests.
ORPHAN_GRACE_S = float(os.environ.get("LAB_UPLOAD_ORPHAN_S", "30"))
SWEEP_S = float(os.environ.get("LAB_UPLOAD_SWEEP_S", "5"))

_LOGGER = logging.getLogger(__name__)
_install_lock = threading.Lock()
# One ledger per upload manager (one per process; tests may make more), with the lock for both.
_ledgers: weakref.WeakKeyDictionary[Any, tuple[UploadLedger, threading.Lock]] = weakref.WeakKeyDictionary()
_sweeper: threading.Thread | None = None


def _limits() -> UploadLimits:
    return UploadLimits(
        files_per_session=FILES_PER_SESSION,
        bytes_per_session=BYTES_PER_SESSION,
        bytes_per_process=BYTES_PER_PROCESS,
        orphan_grace_s=ORPHAN_GRACE_S,
        closed_session_s=float(config.get_option("server.disconnectedSessionTTL")),
    )


def ledger_of(manager: Any) -> tuple[UploadLedger, threading.Lock]:
    """The ledger (and its lock) of this upload manager, made on first use."""
    with _install_lock:
        found = _ledgers.get(manager)
        if found is None:
            found = _ledgers[manager] = (UploadLedger(_limits()), threading.Lock())
        return found


def _release(manager: Any, session_id: str, file_ids: list[str]) -> None:
    for file_id in file_ids:
        manager.remove_file(session_id, file_id)  # wrapped: the ledger forgets it too


def _wrap_add_file(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def add_file(self: Any, session_id: str, file: Any) -> None:
        ledger, lock = ledger_of(self)
        now_s = time.monotonic()
        with lock:
            orphans = ledger.orphans(session_id, now_s)
        _release(self, session_id, orphans)
        with lock:
            refusal = ledger.admit(session_id, file.file_id, len(file.data), now_s)
        if refusal is not None:
            raise HTTPException(status_code=503 if refusal.server_full else 413, detail=refusal.sentence)
        try:
            original(self, session_id, file)
        except BaseException:
            with lock:
                ledger.forget(session_id, file.file_id)
            raise
        _start_sweeper()

    return add_file


def _wrap_remove_file(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def remove_file(self: Any, session_id: str, file_id: str) -> None:
        original(self, session_id, file_id)
        ledger, lock = ledger_of(self)
        with lock:
            ledger.forget(session_id, file_id)

    return remove_file


def _wrap_remove_session_files(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def remove_session_files(self: Any, session_id: str) -> None:
        original(self, session_id)
        ledger, lock = ledger_of(self)
        with lock:
            ledger.forget_session(session_id)

    return remove_session_files


def named_files(msg: Any) -> set[str] | None:
    """The file ids a rerun_script BackMsg's file uploaders hold, or None for any other message."""
    if msg.WhichOneof("type") != "rerun_script":
        return None
    return {
        info.file_id
        for state in msg.rerun_script.widget_states.widgets
        if state.WhichOneof("value") == "file_uploader_state_value"
        for info in state.file_uploader_state_value.uploaded_file_info
    }


def _wrap_handle_backmsg(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def handle_backmsg(self: Any, session_id: str, msg: Any, *, client: Any = None) -> None:
        named = named_files(msg)
        if named is not None and self.is_active_session(session_id):
            manager = self.uploaded_file_mgr
            ledger, lock = ledger_of(manager)
            with lock:
                orphans = ledger.claim(session_id, named, time.monotonic())
            _release(manager, session_id, orphans)
        original(self, session_id, msg, client=client)

    handle_backmsg.claims_uploads = True  # type: ignore[attr-defined]  # marks the wrapper
    return handle_backmsg


def sweep_once() -> None:
    """Release orphans, and the files of sessions gone longer than their reconnect window."""
    if not private.Runtime.exists():
        return
    runtime = private.Runtime.instance()
    manager = runtime.uploaded_file_mgr
    ledger, lock = ledger_of(manager)
    with lock:
        release = ledger.sweep(time.monotonic(), runtime.is_active_session)
    for session_id, file_ids in release.items():
        _release(manager, session_id, file_ids)


def _sweep_forever() -> None:
    while True:
        time.sleep(SWEEP_S)
        try:
            sweep_once()
        except Exception as error:  # noqa: BLE001 - the sweeper must outlive one failed sweep
            # The caps still hold without it; only the early release waits for the next sweep.
            _LOGGER.warning("Releasing unclaimed uploads failed (%s: %s).", type(error).__name__, error)


def _start_sweeper() -> None:
    global _sweeper
    with _install_lock:
        if _sweeper is None:
            _sweeper = threading.Thread(target=_sweep_forever, name="lab-upload-sweeper", daemon=True)
            _sweeper.start()


def install() -> None:
    """Wrap the upload manager and the message handler once per process (later calls do nothing).
    server/changes.py checks NEEDS first."""
    manager_class = private.MemoryUploadedFileManager
    runtime_class = private.Runtime
    with _install_lock:
        if not getattr(manager_class, "uploads_bounded", False):
            manager_class.add_file = _wrap_add_file(manager_class.add_file)
            manager_class.remove_file = _wrap_remove_file(manager_class.remove_file)
            manager_class.remove_session_files = _wrap_remove_session_files(
                manager_class.remove_session_files
            )
            manager_class.uploads_bounded = True  # marks the class
        if not getattr(runtime_class.handle_backmsg, "claims_uploads", False):
            runtime_class.handle_backmsg = _wrap_handle_backmsg(runtime_class.handle_backmsg)


def check_runtime() -> None:
    """Raise RuntimeError where the running server keeps uploads in a manager of another kind than the one
    `install` wrapped, so that it does not serve unguarded. serve.py's startup hook calls it, once the
    server's runtime exists (under AppTest the runtime is a stand-in with no upload route)."""
    manager = private.Runtime.instance().uploaded_file_mgr
    if not isinstance(manager, private.MemoryUploadedFileManager):
        raise RuntimeError(
            f"The lab will not start: this server stores uploads in a {type(manager).__name__}, which "
            "server/uploads.py cannot bound."
        )
