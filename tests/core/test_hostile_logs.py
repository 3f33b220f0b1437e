"""Training logs built to hurt the reader: each is read or refused with one sentence of ours, within
its row, column and value caps, and a child process reading it stays within a memory bound."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto import types_pb2  # type: ignore[import-untyped]

from bench.hostile_logs import (
    HOSTILE,
    SMALL_LOG,
    VALID,
    event_file,
    huge_shape_tensorboard,
    measure,
    scalar_event,
    tensor_event,
)
from core.diagnose import formats, tensorboard_events
from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import diagnose_bytes
from core.diagnose.formats import MAX_COLUMNS, MAX_ROWS, MAX_VALUES, Table, Unreadable, read_log

PEAK_ABOVE_SMALL_MB = 256  # the bound for any one file, above a small log's read
# Words of Python, numpy or protobuf that must never reach a learner.
FOREIGN_WORDS = ("Traceback", "Expecting", "Errno", "numpy", "ndarray", "reshape", "int()", "decode", "char ")


def _refusal(data: bytes, name: str) -> str:
    with pytest.raises(Unreadable) as raised:
        read_log(data, name)
    said = str(raised.value)
    assert "\n" not in said and said.endswith("."), said
    assert not any(word in said for word in FOREIGN_WORDS), said
    return said


@pytest.mark.parametrize("label", HOSTILE)
def test_each_hostile_file_is_read_or_refused_with_one_sentence(label):
    name, build = HOSTILE[label]
    try:
        table = read_log(build(), name)
    except Unreadable as refusal:
        said = str(refusal)
        assert "\n" not in said and not any(word in said for word in FOREIGN_WORDS), said
    else:
        assert len(table.rows) <= MAX_ROWS and len(table.columns) <= MAX_COLUMNS
        assert len(table.rows) * len(table.columns) <= MAX_VALUES


@pytest.fixture(scope="module")
def small_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs") / "small.csv"
    path.write_bytes(SMALL_LOG)
    return path


@pytest.mark.parametrize("label", [*HOSTILE, "CSV, 100,000 rows x 11 columns"])
def test_a_child_reading_each_file_stays_within_the_memory_bound(label, small_log, tmp_path):
    name, build = HOSTILE.get(label) or VALID[label]
    path = tmp_path / name
    path.write_bytes(build())
    figures = measure(path, small_log)
    assert figures["status"] in (0, 2)
    assert figures["above_small_mb"] < PEAK_ABOVE_SMALL_MB, figures
    if figures["status"] == 2:
        assert figures["said"].count("\n") == 0 and figures["said"].startswith(str(path))


# --- TensorBoard ------------------------------------------------------------------------------------


def test_the_reviews_143_byte_file_declaring_2_to_the_28_values_is_refused_without_building_them():
    data = huge_shape_tensorboard()
    assert len(data) < 200
    assert "holds no scalar values" in _refusal(data, "run.tfevents")


def test_a_huge_declared_shape_beside_real_scalars_is_skipped_and_the_scalars_read():
    data = event_file(
        [
            tensor_event(1, "hist", dims=(2**28,), float_val=[1.0]),
            tensor_event(1, "wide", dims=(2**62, 2**62, 4), float_val=[1.0]),
            tensor_event(1, "neg", dims=(-1,), float_val=[1.0]),
            tensor_event(1, "empty", dims=(0,), float_val=[1.0]),
            tensor_event(1, "loss", dims=(1, 1), float_val=[2.5]),
        ]
    )
    table = read_log(data, "run.tfevents")
    assert table.columns == ("step", "loss") and table.rows == ((1.0, 2.5),)


def test_an_unknown_tensor_type_gets_our_sentence():
    data = event_file([tensor_event(1, "loss", dtype=999, float_val=[1.0])])
    assert "number type TensorBoard does not define" in _refusal(data, "run.tfevents")


def test_text_and_wrongly_sized_tensors_are_not_scalars():
    data = event_file(
        [
            tensor_event(1, "note", dtype=types_pb2.DT_STRING, string_val=[b"warm-up"]),
            tensor_event(1, "short", tensor_content=b"\0\0"),  # two bytes for a 4-byte float
            tensor_event(1, "two", float_val=[1.0, 2.0]),
            tensor_event(1, "loss", float_val=[3.0]),
        ]
    )
    assert read_log(data, "run.tfevents").columns == ("step", "loss")


@pytest.mark.parametrize(
    ("dtype", "fields", "expected"),
    [
        (types_pb2.DT_FLOAT, {"tensor_content": struct.pack("<f", 0.5)}, 0.5),
        (types_pb2.DT_DOUBLE, {"double_val": [1.25]}, 1.25),
        (types_pb2.DT_INT64, {"int64_val": [2**40]}, float(2**40)),
        (types_pb2.DT_INT32, {"tensor_content": struct.pack("<i", -7)}, -7.0),
        (types_pb2.DT_HALF, {"half_val": [0x3C00]}, 1.0),  # 1.0 in IEEE half precision
        (types_pb2.DT_BFLOAT16, {"half_val": [0x4040]}, 3.0),  # 3.0 in bfloat16: 0x40400000 >> 16
        (types_pb2.DT_UINT8, {"int_val": [200]}, 200.0),
    ],
)
def test_one_element_tensors_of_each_number_type_are_read(dtype, fields, expected):
    table = read_log(event_file([tensor_event(3, "loss", dtype=dtype, **fields)]), "run.tfevents")
    assert table.rows == ((3.0, expected),)


def test_steps_times_tags_past_the_value_cap_are_refused_before_the_table_is_filled():
    steps = MAX_VALUES // 50 + 1  # 50 columns (step and 49 tags) of this many rows pass the cap
    data = event_file(scalar_event(i, {f"t{i % 49}": 1.0}) for i in range(steps))
    assert f"{MAX_VALUES:,} values" in _refusal(data, "run.tfevents")


def test_more_events_than_the_cap_are_refused(monkeypatch):
    monkeypatch.setattr(tensorboard_events, "MAX_EVENTS", 10)
    data = event_file(scalar_event(i, {"loss": 1.0}) for i in range(11))
    assert "more than 10 events" in _refusal(data, "run.tfevents")


def test_a_large_record_is_walked_and_its_small_values_still_read():
    # An image beside the scalar makes the record larger than protobuf is handed whole.
    event = scalar_event(-5, {"loss": 1.5})
    image = b"p" * (tensorboard_events.SMALL_RECORD_BYTES + 1)
    big_image = tensor_event(-5, "image", dtype=types_pb2.DT_STRING, string_val=[image])
    event.summary.value.append(big_image.summary.value[0])
    table = read_log(event_file([event]), "run.tfevents")
    assert table.columns == ("step", "loss") and table.rows == ((-5.0, 1.5),)


def test_summary_values_past_the_cap_are_refused_scalar_or_not(monkeypatch):
    monkeypatch.setattr(tensorboard_events, "MAX_SUMMARY_VALUES", 10)
    data = event_file(
        [tensor_event(i, "text", dtype=types_pb2.DT_STRING, string_val=[b"a"]) for i in range(11)]
    )
    assert "more than 10 summary values" in _refusal(data, "run.tfevents")


def test_a_record_claiming_more_bytes_than_the_file_holds_is_refused():
    data = bytearray(event_file([scalar_event(1, {"loss": 1.0})]))
    data[0:8] = struct.pack("<Q", 2**62)
    assert "not a TensorBoard event file" in _refusal(bytes(data), "run.tfevents")


# --- text logs ----------------------------------------------------------------------------------------


def test_rows_are_counted_while_reading_and_reading_stops_at_the_cap_plus_one():
    pulled = 0

    def records():
        nonlocal pulled
        for i in range(2 * MAX_ROWS):
            pulled += 1
            yield {"step": i}

    with pytest.raises(Unreadable, match="more than 100,000 rows"):
        formats._table("JSON Lines", records())
    assert pulled == MAX_ROWS + 1


def test_a_csv_past_the_row_cap_is_refused_at_the_row_after_the_cap():
    # A ragged row after the cap is never reached: the refusal is the cap's, not the ragged row's.
    rows = b"".join(f"{i},2\n".encode() for i in range(MAX_ROWS + 1))
    said = _refusal(b"step,loss\n" + rows + b"1,2,3\n", "long.csv")
    assert "more than 100,000 rows" in said


def test_a_csv_at_the_row_cap_is_read():
    rows = b"".join(f"{i},2\n".encode() for i in range(MAX_ROWS))
    assert len(read_log(b"step,loss\n" + rows, "long.csv").rows) == MAX_ROWS


def test_more_columns_than_the_cap_are_refused_from_the_header_and_from_json():
    header = ",".join(f"c{i}" for i in range(MAX_COLUMNS + 1)).encode()
    assert "501 columns" in _refusal(header + b"\n" + b"1," * MAX_COLUMNS + b"1\n", "wide.csv")
    wide = json.dumps({f"c{i}": 1 for i in range(MAX_COLUMNS + 1)}).encode()
    assert f"more than {MAX_COLUMNS} columns" in _refusal(wide, "wide.jsonl")


def test_a_sparse_json_lines_file_is_refused_at_the_value_cap():
    said = _refusal(HOSTILE["sparse JSON Lines, 499 names"][1](), "sparse.jsonl")
    assert f"{MAX_VALUES:,} values" in said


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nests objects too deeply"),
        (b'{"step": 1}\n' + b'{"a":' * 5_000 + b"1" + b"}" * 5_000 + b"\n", "nests objects too deeply"),
        (b'{"log_history": [' + b'{"a": ' * 6 + b"1" + b"}" * 6 + b"]}", "nests objects too deeply"),
        (b"[" + b"{}," * 600_000 + b"{}]", "objects and lists"),
        (b'{"log_history": [{"x": [' + b"1," * (MAX_VALUES + 1) + b"1]}]}", "values"),
        (b'{"step": 1, "loss": \n', "Line 1 of this JSON Lines file is not valid JSON."),
        (b'step,loss\n1,"2' + b"x" * 200_000 + b"\n", "Line 2 of this CSV file cannot be read"),
        (b"step,loss\n1," + b"9" * 200_000 + b"\n", "cannot be read"),  # past the csv module's cell limit
        (b"\n" * 900_000 + b"step\n1\n", "lines"),
    ],
)
def test_hostile_text_is_refused_with_our_sentence(data, expected):
    assert expected in _refusal(data, "hostile.jsonl" if data[:1] in b"{[" else "hostile.csv")


@pytest.mark.parametrize(
    "data",
    [
        b'{"log_history": [{"step": 1, "loss": 1' + b"0" * 4300 + b'}, {"step": 2, "loss": 2.0}]}',
        b'{"step": 1, "loss": 1' + b"0" * 4300 + b'}\n{"step": 2, "loss": 2.0}\n',
        b"step,loss\n1,1" + b"0" * 4300 + b"\n2,2.0\n",
    ],
)
def test_an_integer_with_thousands_of_digits_reads_as_infinite_in_every_format(data):
    table = read_log(data, "digits.json" if data[:1] == b"{" else "digits.csv")
    loss = table.column("loss")
    assert loss[0] == math.inf and loss[1] == 2.0


def test_a_column_is_dropped_as_soon_as_it_holds_text():
    table = read_log(b"step,note,loss\n1,warm,2\n2,3,1.5\n", "notes.csv")
    assert table.columns == ("step", "loss") and table.ignored == ("note",)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.binary(max_size=300), JSON_VALUES.map(lambda v: json.dumps(v).encode())),
    st.sampled_from(["x.csv", "x.jsonl", "x.tfevents"]),
)
def test_any_bytes_are_read_or_refused_with_our_sentence_never_another_exception(data, name):
    try:
        table = read_log(data, name)
    except Unreadable as refusal:
        assert "\n" not in str(refusal)
    else:
        assert isinstance(table, Table) and table.columns


# --- the command line ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("tensor declaring 2^28 values", "holds no scalar values"),
        ("unknown tensor type", "does not define"),
        ("lists 100,000 deep", "too deeply"),
        ("5M one-column rows", "lines"),
    ],
)
def test_the_command_line_refuses_each_with_one_line_and_status_2(label, expected, tmp_path):
    name, build = HOSTILE[label]
    path = tmp_path / name
    path.write_bytes(build())
    done = subprocess.run(
        [sys.executable, "-m", "core.diagnose", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"{path}: ") and expected in line


DETECTED_COLUMNS = (
    "step",
    "loss",
    "grad_norm",
    "memory_gb",
    "step_time",
    "data_time",
    "tokens_per_s",
    "gpu_util",
)
EXTREME = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 4.9e-324, 1e154, 0.0]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(EXTREME, min_size=len(DETECTED_COLUMNS), max_size=len(DETECTED_COLUMNS)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([RunContext(), RunContext(classes=10, device_gb=80, params=1e9, peak_tflops=989)]),
)
def test_any_numbers_in_any_column_are_diagnosed_or_refused_in_a_sentence(rows, context):
    text = ",".join(DETECTED_COLUMNS) + "\n" + "".join(",".join(map(repr, row)) + "\n" for row in rows)
    try:
        diagnose_bytes(text.encode(), "extreme.csv", context)
    except ValueError as refusal:
        assert "\n" not in str(refusal) and not any(word in str(refusal) for word in FOREIGN_WORDS)


def test_numbers_that_overflow_the_detectors_arithmetic_get_our_sentence():
    rows = "".join(f"{i},0,0,0,0,0,0,0\n" for i in range(8)) + "8,0,0,4.7e161,0,0,0,0\n9,0,0,0,0,0,0,0\n"
    with pytest.raises(ValueError, match="too large, or too close to zero"):
        diagnose_bytes((",".join(DETECTED_COLUMNS) + "\n" + rows).encode(), "extreme.csv", RunContext())


@pytest.mark.parametrize(
    "raised", [struct.error("unpack requires a buffer"), KeyError("x"), RuntimeError("y")]
)
def test_whatever_else_a_parser_raises_becomes_our_sentence(monkeypatch, raised):
    def broken(text):
        raise raised

    monkeypatch.setattr(formats, "read_csv", broken)
    assert "could not be read as a training log" in _refusal(b"step,loss\n1,2\n", "run.csv")
