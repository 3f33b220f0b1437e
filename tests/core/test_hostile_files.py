"""Progress files built to crash the app: each one found by an adversarial test, each now a refusal."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.progress_file import RefusedFile, export_progress, inspect_file, restore
from core.questions import load_bank
from core.settings_schema import load_schema
from core.signing import SIGNATURE_FIELD, Verdict, sign

BANK, SCHEMA = load_bank(), load_schema()
KEY = "0123456789abcdef" * 4
AT = "2026-11-30T14:05:09+00:00"
CURRENT = {"answers": {"r1": "mem"}, "settings": {}, "records": {}, "handed_in_at": None}


def _file(state=None, *, key=None, exported_at=AT, fake_signature=False):
    snapshot = {**CURRENT, "answers": {}, **(state or {})}
    document = json.loads(export_progress(snapshot, exported_at=AT, key=None))
    document["exported_at"] = exported_at
    if key:
        document[SIGNATURE_FIELD] = sign(document, key)
    if fake_signature:
        document[SIGNATURE_FIELD] = "hmac-sha256:" + "0" * 64
    return json.dumps(document).encode()


def _assert_refused(data):
    current = copy.deepcopy(CURRENT)
    with pytest.raises(RefusedFile):
        restore(current, data, bank=BANK, schema=SCHEMA, key=KEY)
    assert current == CURRENT
    inspected = inspect_file(data, bank=BANK, schema=SCHEMA, key=KEY)
    assert inspected.problem or inspected.verdict is not None


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"])
@pytest.mark.parametrize("key", [None, KEY])
def test_a_timestamp_outside_the_calendar_in_utc_is_refused(moment, key):
    _assert_refused(_file(exported_at=moment, key=key))
    _assert_refused(_file({"handed_in_at": moment}, key=key))


@pytest.mark.parametrize("digits", [309, 1000, 4300])
def test_a_whole_number_with_hundreds_of_digits_is_refused(digits):
    text = _file({"settings": {"linear": {"batch": 32}}}).replace(
        b'"batch": 32', b'"batch": ' + b"9" * digits
    )
    _assert_refused(text)


@pytest.mark.parametrize(
    "records",
    [
        {"scaling.predictions": {"A": ["linear"]}},
        {"scaling.predictions": {"A": {"x": 1}}},
        {"scaling.synthesis": {"plan": ["a"]}},
        {"scaling.synthesis": {"trigger": {"a": 1}}},
    ],
)
def test_a_list_or_object_where_an_option_belongs_is_refused(records):
    _assert_refused(_file({"records": records}))


def test_a_lone_surrogate_key_with_a_well_formed_signature_is_refused():
    data = _file({"records": {"scaling.snapshots": {}}}, fake_signature=True)
    data = data.replace(b'"scaling.snapshots": {}', b'"scaling.snapshots": {"\\ud800": 1}')
    _assert_refused(data)
    _assert_refused(data)


@pytest.mark.parametrize(
    "records",
    [
        {"run_a.decision": {}},
        {"run_a.decision": {"choice": "batch"}},
        {"run_a.reflection": {}},
        {"scaling.snapshots": {"A": []}},
        {"scaling.snapshots": []},
        {"scaling.predictions": []},
        {"scaling.synthesis": []},
    ],
)
def test_poison_records_of_the_wrong_shape_are_refused(records):
    _assert_refused(_file({"records": records}))


def test_a_forged_signature_brings_no_marks_and_its_state_is_still_checked_strictly():
    # A file not signed here is still read (for its settings and written work), so every check runs.
    forged = _file({"answers": {"r2": "mem", "q1": "b"}}, fake_signature=True)
    restored = restore(CURRENT, forged, bank=BANK, schema=SCHEMA, key=KEY)
    assert restored.verdict is Verdict.EDITED and restored.state["answers"] == {"r1": "mem"}
    poisoned = _file({"records": {"run_a.decision": {}}}, fake_signature=True)
    with pytest.raises(RefusedFile, match="missing a field"):
        restore(CURRENT, poisoned, bank=BANK, schema=SCHEMA, key=KEY)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
PLACES = st.sampled_from(
    [
        ("state", "answers"),
        ("state", "settings"),
        ("state", "records"),
        ("state", "records", "scaling.snapshots"),
        ("state", "records", "scaling.synthesis"),
        ("state", "records", "run_a.decision"),
        ("state", "handed_in_at"),
        ("exported_at",),
    ]
)


@settings(max_examples=150, deadline=None)
@given(PLACES, JSON, st.booleans())
def test_any_json_anywhere_is_refused_or_accepted_never_an_exception(place, value, signed):
    document = json.loads(_file())
    holder = document
    for name in place[:-1]:
        holder = holder[name]
    holder[place[-1]] = value
    if signed:
        document[SIGNATURE_FIELD] = sign(document, KEY)
    data = json.dumps(document).encode("utf-8", "surrogatepass")
    current = copy.deepcopy(CURRENT)
    try:
        restored = restore(current, data, bank=BANK, schema=SCHEMA, key=KEY)
    except RefusedFile:
        assert current == CURRENT
        return
    assert restored.state["answers"]["r1"] == "mem"  # a locked answer survives any file
    inspect_file(data, bank=BANK, schema=SCHEMA, key=KEY)
