"""Signatures: canonical bytes, HMAC-SHA256, and that any single edit breaks them."""

import hashlib
import hmac
import json
import secrets

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.signing import (
    UNSIGNED,
    Verdict,
    canonical_bytes,
    check_key,
    compressed_share,
    is_signature_text,
    sign,
    verify,
)

KEY = "workshop-key"

DOCUMENT = {
    "format": "reading-a-training-run/progress",
    "version": 1,
    "state": {
        "answers": {"r1": "mem", "q2": "c"},
        "settings": {"linear": {"batch": 32, "scale": 0.5}},
        "flag": True,
        "none": None,
    },
}


def test_canonical_bytes_sort_keys_drop_whitespace_and_the_signature():
    document = {"b": 1, "a": "é", "signature": "hmac-sha256:" + "0" * 64}
    # Sorted keys, no spaces, UTF-8 for the é (0xC3 0xA9), signature left out.
    assert canonical_bytes(document) == b'{"a":"\xc3\xa9","b":1}'


def test_signature_is_hmac_sha256_of_the_canonical_bytes():
    # RFC 4231 test case 2 signs "what do ya want for nothing?" with key "Jefe"; here the
    # signed message is the canonical form of the document instead.
    expected = hmac.new(b"Jefe", b'{"a":1}', hashlib.sha256).hexdigest()
    assert sign({"a": 1}, "Jefe") == "hmac-sha256:" + expected


def test_the_hmac_module_matches_rfc_4231_case_2():
    digest = hmac.new(b"Jefe", b"what do ya want for nothing?", hashlib.sha256).hexdigest()
    assert digest == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"


def _signed(document):
    return {**document, "signature": sign(document, KEY)}


def test_an_untouched_document_verifies_after_a_trip_through_pretty_json():
    signed = _signed(DOCUMENT)
    reparsed = json.loads(json.dumps(signed, indent=4))
    assert verify(reparsed, KEY) is Verdict.INTACT


def test_another_key_reads_as_edited_and_a_missing_signature_as_unsigned():
    assert verify(_signed(DOCUMENT), "another-key") is Verdict.EDITED
    assert verify({**DOCUMENT, "signature": UNSIGNED}, KEY) is Verdict.UNSIGNED
    assert verify(DOCUMENT, KEY) is Verdict.UNSIGNED


def test_an_empty_key_is_refused():
    with pytest.raises(ValueError, match="non-empty"):
        sign(DOCUMENT, "")


def _leaf_paths(value, path=()):
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaf_paths(item, (*path, key))
    else:
        yield path


def _edited(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    return "something"


@given(st.sampled_from(list(_leaf_paths(DOCUMENT))))
def test_any_single_field_edit_breaks_the_signature(path):
    document = json.loads(json.dumps(_signed(DOCUMENT)))
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = _edited(holder[path[-1]])
    assert verify(document, KEY) is Verdict.EDITED


def test_signature_text_accepts_a_real_signature_and_the_unsigned_marker():
    assert is_signature_text(sign(DOCUMENT, KEY))
    assert is_signature_text(UNSIGNED)


HEX = st.text(alphabet="0123456789abcdef", min_size=1, max_size=80)


@given(HEX)
def test_signature_text_needs_exactly_64_lowercase_hex_digits(digits):
    assert is_signature_text("hmac-sha256:" + digits) == (len(digits) == 64)
    assert not is_signature_text("hmac-sha256:" + digits.upper() + "G")


@given(st.text(max_size=80).filter(lambda t: not t.startswith("hmac-sha256:") and t != UNSIGNED))
def test_other_text_is_not_a_signature(text):
    assert not is_signature_text(text)


# --- key strength ----------------------------------------------------------------------------------


def test_keys_that_secrets_makes_are_accepted_as_hex_and_as_base64():
    for _ in range(200):
        for key in (secrets.token_hex(32), secrets.token_urlsafe(32), secrets.token_urlsafe(32) + "="):
            assert check_key(key) == key
    padded = secrets.token_hex(32)
    assert check_key(f"  {padded}\n") == padded  # as an environment variable with a newline


@pytest.mark.parametrize(
    "key",
    [
        "teach",
        "workshop2026",
        "workshop2026" * 4,  # 48 characters, a repeated word
        "0123456789" * 7,  # 70 characters, a repeated run of digits
        "0123456789abcdef" * 4,  # 64 hex characters, the pattern four times
        "deadbeef" * 8,
        "a" * 64,
        "e2e-instructor-key-0123456789abcdef",  # the old browser tests' key: 35 characters
        "workshop-key-for-tests-0123456789",
    ],
)
def test_short_or_repeated_keys_are_refused_with_how_to_make_one(key):
    with pytest.raises(ValueError, match="64 hex or 43 base64 characters") as refused:
        check_key(key)
    assert "secrets.token_hex(32)" in str(refused.value)
    assert key not in str(refused.value)  # a refusal never repeats the key into a log or a page


def test_a_random_half_written_twice_compresses_by_more_than_a_quarter_and_is_refused():
    half = secrets.token_hex(16)
    # 16 random bytes, then the same 16 again: deflate keeps one copy and a back-reference,
    # 21 bytes of 32 (0.66), under the 0.75 a key must keep.
    assert compressed_share(bytes.fromhex(half * 2)) < 0.75
    with pytest.raises(ValueError):
        check_key(half * 2)


def test_random_keys_never_compress():
    # Deflate at best level on 32 random bytes: at least 1.06 of their size in 200,000 tries.
    assert min(compressed_share(secrets.token_bytes(32)) for _ in range(2000)) > 1.0


@given(st.text(max_size=80))
def test_check_key_accepts_only_text_that_spells_32_bytes(text):
    try:
        checked = check_key(text)
    except ValueError:
        return
    assert len(checked) in (64, 43, 44)
