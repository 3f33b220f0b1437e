"""The progress file: lossless round trip, strict refusal of anything else, merging, signatures."""

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import client_values, lessons, progress_file
from core.client_values import MAX_DEPTH, MAX_ITEMS, MAX_TEXT_CHARS, known_records
from core.progress_file import (
    MAX_FILE_BYTES,
    RefusedFile,
    export_progress,
    inspect_file,
    restore,
)
from core.questions import load_bank
from core.report.contents import build_report
from core.run_a import FIRST_EXPERIMENTS
from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS
from core.settings_schema import load_schema, parse_section
from core.signing import Verdict

BANK = load_bank()
# A schema written here, so these tests do not move when a page edits its own settings file.
SCHEMA = {
    "linear": parse_section(
        "linear",
        [
            {"name": "batch", "kind": "int", "default": 32, "min": 1, "max": 256, "step": 1},
            {"name": "scale", "kind": "float", "default": 0.5, "min": 0.0, "max": 2.0, "step": 0.1},
            {"name": "dtype", "kind": "choice", "default": "fp32", "choices": ["fp32", "bf16", "fp16"]},
            {"name": "fused", "kind": "bool", "default": False},
        ],
    )
}
AT = "2026-11-30T14:05:09+00:00"
KEY = "workshop-key"
OTHER_KEY = "another-installation-key"
EMPTY: dict[str, Any] = {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}
FULL: dict[str, Any] = {
    "answers": {"r1": "mem", "r2": "mem", "q1": "b"},
    "settings": {"linear": {"batch": 64, "scale": 1.2, "dtype": "bf16", "fused": True}},
    "records": {
        "run_a.decision": {"choice": "batch", "why": "Activations scale with batch.\nOther terms do not."},
        "run_a.reflection": {"text": "Data-loader time per step — 🙂"},
    },
    "handed_in_at": None,
}


def _restore(data, current=EMPTY, key=KEY):
    return restore(current, data, bank=BANK, schema=SCHEMA, key=key)


def _document(snapshot=FULL, key=KEY):
    return json.loads(export_progress(snapshot, exported_at=AT, key=key))


def _bytes(document):
    return json.dumps(document).encode()


def test_export_then_import_gives_back_the_same_state():
    restored = _restore(export_progress(FULL, exported_at=AT, key=KEY))
    assert restored.state == FULL
    assert restored.answers_added == ("r1", "r2", "q1") and restored.answers_kept == ()


def test_a_handed_in_file_restores_as_handed_in():
    snapshot = {**FULL, "handed_in_at": AT}
    restored = _restore(export_progress(snapshot, exported_at=AT, key=KEY))
    assert restored.state == snapshot
    # Three answers (r1, r2, q1) added, none kept, handed in at AT.
    assert restored.summary() == " ".join(
        (
            lessons.sentence("quiz_report", "restored_many", added=3),
            lessons.sentence("quiz_report", "file_handed_in", when="30 November 2026 at 14:05 UTC"),
        )
    )


def test_the_file_says_what_it_is_and_whether_it_is_signed():
    assert _document()["format"] == progress_file.FORMAT and _document()["version"] == 1
    assert _document(key=None)["signature"] == "unsigned"
    assert _document(key=KEY)["signature"].startswith("hmac-sha256:")


def test_locked_answers_win_and_the_rest_is_merged_in():
    current = {
        "answers": {"r1": "speed"},
        "settings": {"linear": {"batch": 8, "dtype": "fp16"}},
        "records": {"run_a.reflection": {"text": "older"}},
        "handed_in_at": None,
    }
    before = copy.deepcopy(current)
    incoming = {
        **FULL,
        "settings": {"linear": {"batch": 64}},
        "records": {"run_a.decision": FULL["records"]["run_a.decision"]},
    }
    restored = _restore(export_progress(incoming, exported_at=AT, key=KEY), current)
    assert restored.state["answers"] == {"r1": "speed", "r2": "mem", "q1": "b"}
    assert restored.answers_kept == ("r1",) and restored.answers_added == ("r2", "q1")
    assert restored.state["settings"] == {"linear": {"batch": 64, "dtype": "fp16"}}
    assert set(restored.state["records"]) == {"run_a.decision", "run_a.reflection"}
    assert restored.kept_labels == (BANK.question("r1").label,)
    assert BANK.question("r1").label in restored.summary()
    assert current == before


def test_locked_predictions_and_their_tracks_win_and_new_parts_are_added():
    current = {**EMPTY, "records": {PREDICTIONS: {"A": "middle"}, PREDICTION_TRACKS: {"A": "tinyml"}}}
    incoming = {
        **EMPTY,
        "records": {
            PREDICTIONS: {"A": "below-half", "B": "optimizer"},
            PREDICTION_TRACKS: {"A": "cloud", "B": "edge"},
        },
    }
    restored = _restore(export_progress(incoming, exported_at=AT, key=KEY), current)
    assert restored.state["records"][PREDICTIONS] == {"A": "middle", "B": "optimizer"}
    assert restored.state["records"][PREDICTION_TRACKS] == {"A": "tinyml", "B": "edge"}


def test_nothing_is_restored_into_a_handed_in_session():
    with pytest.raises(RefusedFile, match="already handed in"):
        _restore(export_progress(FULL, exported_at=AT, key=KEY), {**EMPTY, "handed_in_at": AT})


def test_the_real_settings_schemas_accept_their_own_defaults():
    schema = load_schema()
    snapshot = {**EMPTY, "settings": {name: section.defaults() for name, section in schema.items()}}
    restored = restore(
        EMPTY, export_progress(snapshot, exported_at=AT, key=KEY), bank=BANK, schema=schema, key=KEY
    )
    assert restored.state == snapshot


def test_known_records_come_from_the_parts_and_the_explicit_list(monkeypatch):
    assert set(known_records(BANK)) == {
        "run_a.decision",
        "run_a.reflection",
        "scaling.predictions",
        "scaling.prediction_tracks",
        "scaling.snapshots",
        "scaling.synthesis",
        "memory.config_json",
        "predict.linear.layer",
        "predict.linear.matmul",
        "predict.linear.gelu",
        "predict.memory.dominant",
        "predict.memory.breaks",
        "predict.run_a.pair",
    }
    monkeypatch.setattr(client_values, "EXTRA_RECORDS", ("scaling.notes",))
    assert "scaling.notes" in known_records(BANK)


def test_a_locked_prediction_survives_a_round_trip_and_a_forged_one_is_refused():
    good = {
        **EMPTY,
        "records": {"predict.linear.gelu": {"choice": "compute-bound", "actual": "memory-bound"}},
    }
    restored = restore(
        EMPTY, export_progress(good, exported_at=AT, key=KEY), bank=BANK, schema=SCHEMA, key=KEY
    )
    assert restored.state["records"] == good["records"]
    bad = {**EMPTY, "records": {"predict.linear.gelu": {"choice": "fast", "actual": "memory-bound"}}}
    with pytest.raises(RefusedFile, match="choice is not one of the options"):
        restore(EMPTY, export_progress(bad, exported_at=AT, key=KEY), bank=BANK, schema=SCHEMA, key=KEY)


def _edit(path, value):
    document = _document()
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return _bytes(document)


BAD_FILES = {
    "empty": b"",
    "not utf-8": b"\xff\xfe{}",
    "truncated": export_progress(FULL, exported_at=AT, key=KEY)[:200],
    "oversized": b" " * (MAX_FILE_BYTES + 1),
    "deeply nested": b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    "very deeply nested": b"[" * 100_000 + b"]" * 99_999,
    "foreign JSON": b'{"name": "not a progress file", "items": [1, 2, 3]}',
    "a bare list": b"[1, 2, 3]",
    "NaN": _bytes(_document()).replace(b'"version": 1', b'"version": NaN'),
    "overflowing number": _bytes(_document()).replace(b'"scale": 1.2', b'"scale": 1e400'),
    "unterminated escapes": b'\\"' * 90_000,
    "repeated key": b'{"format": "reading-a-training-run/progress", "format": "x"}',
    "newer version": _edit(("version",), 2),
    "version as text": _edit(("version",), "1"),
    "version as true": _edit(("version",), True),
    "unknown top-level key": _edit(("extra",), 1),
    "unknown state key": _edit(("state", "extra"), {}),
    "missing state key": _bytes({**_document(), "state": {"answers": {}}}),
    "bad export time": _edit(("exported_at",), "last tuesday"),
    "damaged signature": _edit(("signature",), "hmac-sha256:zz"),
    "unknown question": _edit(("state", "answers", "r9"), "mem"),
    "option not in bank": _edit(("state", "answers", "r1"), "banana"),
    "answer not text": _edit(("state", "answers", "r1"), ["mem"]),
    "unknown settings page": _edit(("state", "settings", "warp"), {"speed": 9}),
    "unknown setting": _edit(("state", "settings", "linear", "warp"), 9),
    "setting out of range": _edit(("state", "settings", "linear", "batch"), 100_000),
    "setting off its step": _edit(("state", "settings", "linear", "scale"), 0.55),
    "setting wrong kind": _edit(("state", "settings", "linear", "fused"), "yes"),
    "unknown record": _edit(("state", "records", "run_z.notes"), "hi"),
    "unknown record field": _edit(("state", "records", "run_a.decision", "score"), 10),
    "unknown experiment": _edit(("state", "records", "run_a.decision", "choice"), "pray"),
    "record not an object": _edit(("state", "records", "run_a.reflection"), "just text"),
    "text too long": _edit(("state", "records", "run_a.reflection", "text"), "x" * (MAX_TEXT_CHARS + 1)),
    "lone surrogate": _bytes(_document()).replace(b"Other terms", b"\\ud800 terms"),
    "bad hand-in time": _edit(("state", "handed_in_at"), "2026-11-30"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_every_kind_of_bad_file_is_refused_and_changes_nothing(name):
    current = copy.deepcopy(FULL)
    with pytest.raises(RefusedFile) as refused:
        _restore(BAD_FILES[name], current)
    assert current == FULL
    assert 0 < len(str(refused.value)) < 300


def test_bounded_lists_apply_to_records_without_a_known_shape(monkeypatch):
    monkeypatch.setattr(client_values, "EXTRA_RECORDS", ("scaling.notes",))
    assert _restore(_edit(("state", "records", "scaling.notes"), list(range(MAX_ITEMS)))).state["records"][
        "scaling.notes"
    ]
    with pytest.raises(RefusedFile, match="holds a list longer than 50 items"):
        _restore(_edit(("state", "records", "scaling.notes"), list(range(MAX_ITEMS + 1))))
    with pytest.raises(RefusedFile, match="number too large"):
        _restore(_bytes(_document()).replace(b'"records": {', b'"records": {"scaling.notes": [1e400],'))


HOSTILE = "[click](https://evil.example) <b>x</b>"


@pytest.mark.parametrize(
    "path",
    [
        (HOSTILE,),
        ("state", HOSTILE),
        ("state", "answers", HOSTILE),
        ("state", "settings", HOSTILE),
        ("state", "settings", "linear", HOSTILE),
        ("state", "records", HOSTILE),
        ("state", "records", "run_a.decision", HOSTILE),
    ],
)
def test_refusals_never_repeat_names_from_the_file(path):
    # Messages are shown as Markdown, so nothing the file chose may appear in them.
    with pytest.raises(RefusedFile) as refused:
        _restore(_edit(path, 1))
    assert "evil" not in str(refused.value) and "<b>" not in str(refused.value)


def test_only_a_file_signed_here_and_unedited_brings_its_marks():
    signed = _document(key=KEY)
    restored = _restore(_bytes(signed), key=KEY)
    assert restored.state == FULL and restored.verdict is Verdict.INTACT


def _marked_snapshot() -> dict[str, Any]:
    # Answers, a Scaling prediction with its track, a lesson prediction and a hand-in: every mark.
    return {
        **FULL,
        "records": {
            **FULL["records"],
            PREDICTIONS: {"A": "below-half", "B": "optimizer"},
            PREDICTION_TRACKS: {"A": "cloud", "B": "edge"},
            "predict.linear.gelu": {"choice": "memory-bound", "actual": "memory-bound"},
        },
        "handed_in_at": AT,
    }


@pytest.mark.parametrize("how", ["unsigned", "edited", "signed elsewhere"])
def test_a_file_not_signed_here_brings_settings_and_written_work_never_marks(how):
    snapshot = _marked_snapshot()
    if how == "unsigned":
        data = export_progress(snapshot, exported_at=AT, key=None)
        verdict = Verdict.UNSIGNED
    elif how == "edited":
        document = json.loads(export_progress(snapshot, exported_at=AT, key=KEY))
        document["state"]["answers"]["r2"] = "speed"  # the learner corrects a wrong answer by hand
        data, verdict = _bytes(document), Verdict.EDITED
    else:
        data, verdict = export_progress(snapshot, exported_at=AT, key=OTHER_KEY), Verdict.EDITED
    restored = _restore(data, key=KEY)
    assert restored.verdict is verdict
    assert restored.state == {
        "answers": {},
        "settings": FULL["settings"],
        "records": FULL["records"],
        "handed_in_at": None,
    }
    assert restored.answers_added == ()
    assert restored.summary() == lessons.sentence(
        "quiz_report", "restored_unsigned" if verdict is Verdict.UNSIGNED else "restored_edited"
    )


def test_an_unsigned_file_keeps_the_learner_s_own_locked_marks():
    current = {**EMPTY, "answers": {"r1": "speed"}, "records": {PREDICTIONS: {"B": "memory"}}}
    restored = _restore(export_progress(_marked_snapshot(), exported_at=AT, key=None), current, key=KEY)
    assert restored.state["answers"] == {"r1": "speed"}
    assert restored.state["records"][PREDICTIONS] == {"B": "memory"}


def test_inspection_tells_intact_edited_unsigned_and_unreadable_apart():
    def inspect(data):
        return inspect_file(data, bank=BANK, schema=SCHEMA, key=KEY)

    signed = _document({**FULL, "handed_in_at": AT}, key=KEY)
    intact = inspect(_bytes(signed))
    # r1 right, r2 wrong, q1 right: checks 1/9, quiz 1/3, overall 2/12.
    assert intact.verdict is Verdict.INTACT
    handed_in = lessons.sentence("quiz_report", "handed_in", when="30 November 2026 at 14:05 UTC")
    scores = {"checks": "1/9", "quiz": "1/3", "overall": "2/12"}
    assert intact.summary == lessons.sentence("quiz_report", "file_scores", **scores, handed_in=handed_in)
    signed["state"]["handed_in_at"] = "2026-11-29T14:05:09+00:00"
    assert inspect(_bytes(signed)).verdict is Verdict.EDITED
    assert inspect(export_progress(FULL, exported_at=AT, key=None)).verdict is Verdict.UNSIGNED
    unreadable = inspect(b"{")
    assert unreadable.verdict is None and "not valid JSON" in unreadable.problem


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30,
)


@given(JSON)
def test_arbitrary_json_is_refused_and_changes_nothing(value):
    current = copy.deepcopy(FULL)
    with pytest.raises(RefusedFile):
        _restore(json.dumps(value).encode(), current)
    assert current == FULL


@given(st.binary(max_size=500))
def test_arbitrary_bytes_are_refused_and_change_nothing(data):
    current = copy.deepcopy(FULL)
    with pytest.raises(RefusedFile):
        _restore(data, current)
    assert current == FULL


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(_paths(_document()))[1:]), JSON)
def test_replacing_any_part_of_a_good_file_is_refused_or_still_valid(path, value):
    current = copy.deepcopy(FULL)
    try:
        restored = _restore(_edit(path, value), current)
    except RefusedFile:
        assert current == FULL
    else:
        assert set(restored.state) == {"answers", "settings", "records", "handed_in_at"}
        assert _restore(export_progress(restored.state, exported_at=AT, key=KEY)).state == restored.state


TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=300)
SNAPSHOTS = st.fixed_dictionaries(
    {
        "answers": st.dictionaries(
            st.sampled_from([q.id for q in BANK.questions]),
            st.sampled_from(["mem", "a", "b", "c"]),
            max_size=11,
        ).map(lambda a: {q: o for q, o in a.items() if o in {x.id for x in BANK.question(q).options}}),
        "settings": st.fixed_dictionaries(
            {},
            optional={
                "linear": st.fixed_dictionaries(
                    {},
                    optional={
                        "batch": st.integers(1, 256),
                        "scale": st.integers(0, 20).map(lambda n: n / 10),
                        "dtype": st.sampled_from(["fp32", "bf16", "fp16"]),
                        "fused": st.booleans(),
                    },
                )
            },
        ),
        "records": st.fixed_dictionaries(
            {},
            optional={
                "run_a.decision": st.fixed_dictionaries(
                    {"choice": st.sampled_from(list(FIRST_EXPERIMENTS)), "why": TEXT}
                ),
                "run_a.reflection": st.fixed_dictionaries({"text": TEXT}),
            },
        ),
        "handed_in_at": st.none() | st.just(AT),
    }
)


@given(SNAPSHOTS)
def test_round_trip_is_lossless_for_any_valid_state(snapshot):
    assert _restore(export_progress(snapshot, exported_at=AT, key=KEY), key=KEY).state == snapshot


@given(SNAPSHOTS, st.sampled_from([None, OTHER_KEY]))
def test_a_file_not_signed_here_never_raises_a_score(snapshot, key):
    restored = _restore(export_progress(snapshot, exported_at=AT, key=key), key=KEY)
    before = build_report(BANK, EMPTY, layer=None, budget=None)
    after = build_report(BANK, restored.state, layer=None, budget=None)
    for score in ("checks_score", "quiz_score", "overall_score", "predictions_score"):
        assert getattr(after, score).right == getattr(before, score).right == 0
    assert restored.state["handed_in_at"] is None
