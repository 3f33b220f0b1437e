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
import zlib
from collections.abc import Mapping
from enum import Enum
from typing import Any

SIGNATURE_FIELD = "signature"
UNSIGNED = "unsigned"
_PREFIX = "hmac-sha256:"
_HEX_DIGITS = 64
KEY_BYTES = 32
HEX_KEY_CHARS = 64  # secrets.token_hex(32)
BASE64_KEY_CHARS = 43  # secrets.token_urlsafe(32)
MIN_KEY_SYMBOLS = 10  # a token of 32 random bytes uses far more; "aaaa…" uses one
MIN_COMPRESSED_SHARE = 0.75  # a key that deflates by more than a quarter repeats itself
MAKE_A_KEY = 'python -c "import secrets; print(secrets.token_hex(32))"'
SETTING = "report_signing_key in .streamlit/secrets.toml"


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


_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/")


def _key_bytes(key: str) -> bytes | None:
    """The 32 bytes a key spells as 64 hex or 43 base64 characters (what `secrets` makes), else None."""
    if len(key) == HEX_KEY_CHARS:
        try:
            return bytes.fromhex(key)
        except ValueError:
            return None
    if len(key.rstrip("=")) == BASE64_KEY_CHARS and set(key.rstrip("=")) <= _BASE64_ALPHABET:
        spelled = key.rstrip("=").replace("+", "-").replace("/", "_")
        try:
            return base64.urlsafe_b64decode(spelled + "=")
        except (binascii.Error, ValueError):
            return None
    return None


def compressed_share(data: bytes) -> float:
    """How large `data` is once deflated (raw, at the best level), as a share of its own size.

    32 random bytes never shrink (200,000 tries: 1.06 to 1.16); a key made of a repeated pattern
    does: 16 random bytes written twice deflate to 0.66 of their size, "deadbeef" eight times to 0.2.
    """
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    return len(deflate.compress(data) + deflate.flush()) / len(data)


def check_key(key: object, *, purpose: str = "report signing key", setting: str = SETTING) -> str:
    """`key`, stripped, if it spells 32 random bytes as 64 hex or 43 base64 characters; else ValueError
    saying how to make one.

    A short or guessable key lets anyone who holds one signed file recover it offline and sign edited
    files (a workshop passphrase fell to a few thousand guesses), and lets anyone guess the instructor
    key. A key that repeats itself (compresses by more than a quarter) or uses fewer than ten symbols
    was typed, not drawn at random.
    """
    text = key.strip() if isinstance(key, str) else ""
    decoded = _key_bytes(text)
    strong = (
        decoded is not None
        and len(decoded) == KEY_BYTES
        and len(set(text)) >= MIN_KEY_SYMBOLS
        and compressed_share(decoded) >= MIN_COMPRESSED_SHARE
    )
    if not strong:
        raise ValueError(
            f"The {purpose} must be {KEY_BYTES} random bytes written as {HEX_KEY_CHARS} hex or "
            f"{BASE64_KEY_CHARS} base64 characters, with no repeated pattern. Make one with "
            f"`{MAKE_A_KEY}` and set it as {setting}."
        )
    return text
