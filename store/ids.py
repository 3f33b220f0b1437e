"""Learner ids and resume codes: random, unguessable, and checked before they are used.

A learner id is 32 hex digits (128 random bits) kept in the learner's browser. A resume code is
a second random secret, 16 characters from Crockford's base-32 alphabet (80 bits), which a
person can read off one screen and type on another.
"""

from __future__ import annotations

import re
import secrets

LEARNER_ID_HEX = 32
_LEARNER_ID = re.compile(rf"[0-9a-f]{{{LEARNER_ID_HEX}}}")
# Crockford's alphabet leaves out I, L, O and U, so a typed code has no look-alike letters.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_CHARS = 16
CODE_GROUP = 4
_TYPO_FIXES = str.maketrans({"I": "1", "L": "1", "O": "0"})


def new_learner_id() -> str:
    """A fresh learner id: 128 bits from the operating system's secure random source."""
    return secrets.token_hex(LEARNER_ID_HEX // 2)


def is_learner_id(value: object) -> bool:
    """Whether `value` has the exact shape of a learner id (anything a browser sends is checked)."""
    return isinstance(value, str) and _LEARNER_ID.fullmatch(value) is not None


def new_resume_code() -> str:
    """A fresh resume code, stored without separators (see `show_code` for display)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_CHARS))


def show_code(code: str) -> str:
    """A resume code in groups of four, the way the learner reads it: ``7KQ2-...``."""
    return "-".join(code[i : i + CODE_GROUP] for i in range(0, len(code), CODE_GROUP))


def parse_code(typed: object) -> str | None:
    """A typed resume code in stored form, or None if it cannot be one.

    Case, spaces and dashes do not matter, and I, L and O are read as 1, 1 and 0.
    """
    if not isinstance(typed, str) or len(typed) > 4 * CODE_CHARS:
        return None
    code = re.sub(r"[\s-]", "", typed.upper()).translate(_TYPO_FIXES)
    if len(code) != CODE_CHARS or any(c not in CODE_ALPHABET for c in code):
        return None
    return code
