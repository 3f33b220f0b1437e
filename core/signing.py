"""Signatures on progress files, so an instructor can tell an untouched export from an edited one.

The signature is an HMAC-SHA256 over a canonical JSON form of the whole document except its
``signature`` field. Canonical means sorted keys, no whitespace, UTF-8: two files that parse to
the same data sign the same, however they were indented.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any

SIGNATURE_FIELD = "signature"
UNSIGNED = "unsigned"
_PREFIX = "hmac-sha256:"
_HEX_DIGITS = 64
MIN_KEY_BYTES = 32
MIN_KEY_SYMBOLS = 10  # a token of 32 random bytes uses far more; "aaaa…" uses one
MAKE_A_KEY = 'python -c "import secrets; print(secrets.token_hex(32))"'


class Verdict(Enum):
    """What a signature says about a document."""

    INTACT = "signed and intact"
    EDITED = "signed, but edited since (or signed with another key)"
    UNSIGNED = "unsigned"


def canonical_bytes(document: Mapping[str, Any]) -> bytes:
    """The bytes that are signed: the document without its signature, in canonical JSON."""
    unsigned = {k: v for k, v in document.items() if k != SIGNATURE_FIELD}
    return json.dumps(
        unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _digest(document: Mapping[str, Any], key: str) -> str:
    if not isinstance(key, str) or not key:
        raise ValueError("A signing key must be non-empty text.")
    return hmac.new(key.encode("utf-8"), canonical_bytes(document), hashlib.sha256).hexdigest()


def sign(document: Mapping[str, Any], key: str) -> str:
    """The value of the signature field for `document` signed with `key`."""
    return _PREFIX + _digest(document, key)


def is_signature_text(value: Any) -> bool:
    """Whether `value` has the form of a signature field (signed or the unsigned marker)."""
    if value == UNSIGNED:
        return True
    if not isinstance(value, str) or not value.startswith(_PREFIX):
        return False
    digits = value[len(_PREFIX) :]
    return len(digits) == _HEX_DIGITS and all(c in "0123456789abcdef" for c in digits)


def verify(document: Mapping[str, Any], key: str) -> Verdict:
    """Whether `document` carries a signature made with `key` over exactly its current content."""
    claimed = document.get(SIGNATURE_FIELD)
    if not isinstance(claimed, str) or not claimed.startswith(_PREFIX):
        return Verdict.UNSIGNED
    expected = sign(document, key)
    return Verdict.INTACT if hmac.compare_digest(claimed.encode(), expected.encode()) else Verdict.EDITED


def _key_bytes(key: str) -> bytes | None:
    """The random bytes a key spells as hex or URL-safe base64 (what `secrets` makes), else None."""
    try:
        return bytes.fromhex(key)
    except ValueError:
        pass
    try:
        return base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    except (binascii.Error, ValueError):
        return None


def check_key(key: str) -> str:
    """`key` if it spells at least 32 random bytes as hex or base64; else ValueError saying how to make one.

    A short or guessable key lets anyone who holds one signed file recover it offline and sign
    edited files; a workshop passphrase fell to a few thousand guesses.
    """
    decoded = _key_bytes(key.strip()) if isinstance(key, str) else None
    strong = decoded is not None and len(decoded) >= MIN_KEY_BYTES and len(set(key)) >= MIN_KEY_SYMBOLS
    if not strong:
        raise ValueError(
            f"The report signing key must be at least {MIN_KEY_BYTES} random bytes, written as hex or "
            f"base64. Make one with `{MAKE_A_KEY}` and put it in .streamlit/secrets.toml as "
            "report_signing_key."
        )
    return key
