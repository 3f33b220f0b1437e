"""The bookkeeping behind the server's upload bounds (server/uploads.py), with time passed in."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.upload_ledger import UploadLedger, UploadLimits

MB = 1_000_000
LIMITS = UploadLimits(
    files_per_session=4,
    bytes_per_session=24 * MB,
    bytes_per_process=50 * MB,
    orphan_grace_s=30,
    closed_session_s=120,
)


def test_a_session_holds_four_files_and_a_fifth_is_refused_with_a_sentence():
    ledger = UploadLedger(LIMITS)
    assert [ledger.admit("s", f"f{i}", 1_000, 0.0) for i in range(4)] == [None] * 4
    refusal = ledger.admit("s", "f4", 1_000, 0.0)
    assert refusal is not None and not refusal.server_full
    assert refusal.sentence == "You already have 4 files uploaded here; remove one before uploading another."
    assert ledger.held("s") == (4, 4_000)


def test_bytes_per_session_two_10_mb_logs_fit_a_third_does_not():
    ledger = UploadLedger(LIMITS)
    assert ledger.admit("s", "log1", 10 * MB, 0.0) is None
    assert ledger.admit("s", "log2", 10 * MB, 0.0) is None
    refusal = ledger.admit("s", "log3", 10 * MB, 0.0)
    assert refusal is not None and "more than 24 MB" in refusal.sentence
    # 20 MB held: 4 MB more still fits (a config or a progress file), 4 MB and one byte does not.
    assert ledger.admit("s", "config", 4 * MB, 0.0) is None
    assert ledger.admit("s", "progress", 1, 0.0) is not None


def test_the_same_file_id_stored_again_replaces_it_and_counts_once():
    ledger = UploadLedger(LIMITS)
    for size in (10 * MB, 2 * MB, 10 * MB, 10 * MB):
        assert ledger.admit("s", "log", size, 0.0) is None
    assert ledger.held("s") == (1, 10 * MB)
    assert ledger.total_bytes == 10 * MB


def test_the_process_cap_refuses_any_session_once_full_and_says_so():
    ledger = UploadLedger(LIMITS)
    for session in ("a", "b"):
        assert ledger.admit(session, "x", 24 * MB, 0.0) is None
    refusal = ledger.admit("c", "x", 3 * MB, 0.0)  # 48 + 3 > 50
    assert refusal is not None and refusal.server_full
    assert ledger.admit("c", "x", 2 * MB, 0.0) is None  # exactly 50


def test_a_file_no_rerun_names_is_an_orphan_once_its_grace_is_over():
    ledger = UploadLedger(LIMITS)
    ledger.admit("s", "kept", 100, 0.0)
    ledger.admit("s", "orphan", 100, 0.0)
    assert ledger.claim("s", {"kept"}, 10.0) == []  # within the grace
    assert ledger.orphans("s", 29.9) == []
    assert ledger.orphans("s", 30.0) == ["orphan"]
    # A rerun that no longer names a claimed file makes it an orphan at once (its grace is long over).
    assert sorted(ledger.claim("s", set(), 31.0)) == ["kept", "orphan"]


def test_forgetting_files_and_sessions_keeps_the_totals():
    ledger = UploadLedger(LIMITS)
    ledger.admit("a", "1", 5, 0.0)
    ledger.admit("a", "2", 7, 0.0)
    ledger.admit("b", "1", 11, 0.0)
    ledger.forget("a", "1")
    ledger.forget("a", "unknown")
    assert ledger.total_bytes == 18 and ledger.held("a") == (1, 7)
    ledger.forget_session("b")
    ledger.forget_session("never")
    assert ledger.total_bytes == 7 and sorted(ledger.sessions()) == ["a"]
    ledger.forget("a", "2")
    assert ledger.sessions() == [] and ledger.total_bytes == 0


def test_a_sweep_releases_a_disconnected_sessions_files_after_the_reconnect_window():
    ledger = UploadLedger(LIMITS)
    ledger.admit("gone", "log", 10 * MB, 0.0)
    ledger.admit("here", "log", 10 * MB, 0.0)
    ledger.claim("gone", {"log"}, 1.0)
    ledger.claim("here", {"log"}, 1.0)

    def connected(session: str) -> bool:
        return session == "here"

    assert ledger.sweep(5.0, connected) == {}  # "gone" disconnected at 5 s: it may still reconnect
    assert ledger.sweep(124.9, connected) == {}
    assert ledger.sweep(125.0, connected) == {"gone": ["log"]}
    ledger.forget("gone", "log")  # as the server does with what a sweep returns

    # A session that reconnects within the window starts it again when it next drops.
    def nobody(session: str) -> bool:
        return False

    assert ledger.sweep(200.0, nobody) == {}
    assert ledger.sweep(210.0, connected) == {}
    assert ledger.sweep(300.0, nobody) == {}
    assert ledger.sweep(419.9, nobody) == {}
    assert ledger.sweep(420.0, nobody) == {"here": ["log"]}


def test_limits_are_checked():
    with pytest.raises(ValueError):
        UploadLimits(files_per_session=0, bytes_per_session=1, bytes_per_process=1, orphan_grace_s=0,
                     closed_session_s=0)  # fmt: skip
    with pytest.raises(ValueError):
        UploadLimits(files_per_session=1, bytes_per_session=2, bytes_per_process=1, orphan_grace_s=0,
                     closed_session_s=0)  # fmt: skip


_events = st.lists(
    st.tuples(
        st.sampled_from(["admit", "forget", "forget_session"]),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["1", "2", "3", "4", "5"]),
        st.integers(min_value=0, max_value=30 * MB),
    ),
    max_size=60,
)


@given(_events)
def test_no_sequence_of_uploads_and_deletions_exceeds_a_cap_or_loses_count(events):
    ledger = UploadLedger(LIMITS)
    shadow: dict[tuple[str, str], int] = {}
    for action, session, file_id, size in events:
        if action == "admit":
            if ledger.admit(session, file_id, size, 0.0) is None:
                shadow[(session, file_id)] = size
        elif action == "forget":
            ledger.forget(session, file_id)
            shadow.pop((session, file_id), None)
        else:
            ledger.forget_session(session)
            shadow = {key: size for key, size in shadow.items() if key[0] != session}
        assert ledger.total_bytes == sum(shadow.values()) <= LIMITS.bytes_per_process
        for name in "abc":
            files, held = ledger.held(name)
            assert files == sum(1 for key in shadow if key[0] == name) <= LIMITS.files_per_session
            assert held <= LIMITS.bytes_per_session
