"""The instructor key: where it is configured, how strong it must be, how a typed one is checked, and
the sign-in form with its limit on wrong guesses.

The key comes from `st.secrets["instructor_key"]` or $LAB_INSTRUCTOR_KEY, must be as strong as a
signing key (32 random bytes as 64 hex or 43 base64 characters), and is compared in constant time.
A session that typed it keeps only a flag saying so, never the key.

Wrong keys are counted three ways, each with the same backoff (`SIGN_IN_BACKOFF`): in the session,
in this process, and in the learner store, which every replica shares, so that neither a new
session nor another replica starts a guesser afresh. While any of the three says wait, a typed key
is not even compared. Each wrong key writes one log line of counts, never what was typed.
"""

from __future__ import annotations

import hmac
import logging
import math
import os
import time

import streamlit as st

from core import lessons
from core.attempts import Backoff, Failures, ProcessTally
from core.signing import check_key
from store.guards import GuardStore
from ui.database import learner_store

SECRET_NAME = "instructor_key"
KEY_ENV = "LAB_INSTRUCTOR_KEY"
SIGNED_IN = "instructor.signed_in"
ROOM = "instructor.room"  # the code of the room this instructor session is looking at
FAILURES = "instructor.failures"  # this session's wrong keys (core.attempts.Failures)
# Five wrong keys are free (a typo or two); after the sixth 2 s, then 4 s, 8 s ... up to 5 minutes, so a
# guesser gets about a dozen tries an hour where 2,400 went through in 24 s. An hour without a wrong
# key forgets them.
SIGN_IN_BACKOFF = Backoff(free=5, first_wait_s=2.0, max_wait_s=300.0, forget_after_s=3600.0)
STORE_SCOPE = "instructor-key"
_PROCESS = ProcessTally(SIGN_IN_BACKOFF)
log = logging.getLogger(__name__)


def instructor_key() -> str | None:
    """The configured instructor key (secrets first, then the environment), or None; ValueError, saying
    how to make one, if it is weak."""
    try:
        secret = st.secrets.get(SECRET_NAME)
    except FileNotFoundError:  # no secrets file at all
        secret = None
    key = secret if isinstance(secret, str) and secret else os.environ.get(KEY_ENV)
    if not key:
        return None
    return check_key(
        key, purpose="instructor key", setting=f"{SECRET_NAME} in .streamlit/secrets.toml or {KEY_ENV}"
    )


def key_matches(typed: str, key: str) -> bool:
    """Whether the typed key is the configured one, in time that does not depend on where they differ."""
    return hmac.compare_digest(typed.encode("utf-8"), key.encode("utf-8"))


def _guards() -> GuardStore:
    return GuardStore(learner_store())


def wait_s(now_s: float) -> float:
    """Seconds before this session may try a key again: the longest of the session's, the process's and
    the store's waits (StoreUnavailable if the store cannot say)."""
    session = st.session_state.get(FAILURES, Failures())
    return max(
        SIGN_IN_BACKOFF.wait_s(session, now_s),
        _PROCESS.wait_s(now_s),
        SIGN_IN_BACKOFF.wait_s(_guards().failures(STORE_SCOPE, SIGN_IN_BACKOFF, now_s), now_s),
    )


def _count_wrong_key(now_s: float) -> float:
    """Count a wrong key in the session, the process and the store; log it; the wait it earned."""
    session = SIGN_IN_BACKOFF.after_failure(st.session_state.get(FAILURES, Failures()), now_s)
    st.session_state[FAILURES] = session
    process = _PROCESS.fail(now_s)
    shared = _guards().fail(STORE_SCOPE, SIGN_IN_BACKOFF, now_s)
    wait = wait_s(now_s)
    log.warning(
        "Instructor sign-in refused: wrong key (%d in this session, %d in this process, %d on every "
        "replica in the last hour); the next try waits %.0f s.",
        session.count,
        process.count,
        shared.count,
        wait,
    )
    return wait


def _try_key(typed: str, key: str) -> str | None:
    """Check a typed key within the limits: None when it matched, else the sentence to show."""
    now_s = time.time()
    waiting = wait_s(now_s)
    if waiting > 0:  # not compared at all: a guess made while waiting tells the guesser nothing
        return lessons.sentence("instructor", "wait", seconds=math.ceil(waiting))
    if key_matches(typed, key):
        st.session_state.pop(FAILURES, None)
        return None
    wait = _count_wrong_key(now_s)
    wrong = lessons.sentence("instructor", "wrong_key")
    return (
        wrong if wait <= 0 else f"{wrong} {lessons.sentence('instructor', 'wait', seconds=math.ceil(wait))}"
    )


def sign_in(key: str) -> None:
    """A form for the key; on a match the session is marked as the instructor's."""
    with st.form("instructor.sign_in"):
        typed = st.text_input("Instructor key", type="password", key="instructor.key_typed")
        if st.form_submit_button("Sign in"):
            refused = _try_key(typed, key)
            st.session_state.pop("instructor.key_typed", None)
            if refused is None:
                st.session_state[SIGNED_IN] = True
                st.rerun()
            st.error(refused)
