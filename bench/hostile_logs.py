"""Training logs built to hurt the reader, and valid logs at every documented limit: what each costs.

Each file is read by `python -m core.diagnose`'s `main` in a child process of its own, after a
small log has been read there first, so the figures are the file's alone: CPU seconds of the read
and the diagnosis, and the peak resident memory above the small log's. It reports, never asserts;
tests/core/test_hostile_logs.py builds the same files and asserts that each is read or refused.

    python -m bench.hostile_logs            # a table
    python -m bench.hostile_logs --json     # one JSON object per file
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2  # type: ignore[import-untyped]
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c  # type: ignore[import-untyped]

from core.diagnose.formats import MAX_BYTES, MAX_COLUMNS, MAX_ROWS, MAX_VALUES

# --- TensorBoard records ---------------------------------------------------------------------------


def event_file(events: Iterable[Any]) -> bytes:
    """Events framed as TFRecords with their checksums, as a TensorBoard writer frames them."""
    out = bytearray()
    for event in events:
        body = event.SerializeToString()
        header = struct.pack("<Q", len(body))
        out += header + struct.pack("<I", masked_crc32c(header))
        out += body + struct.pack("<I", masked_crc32c(body))
    return bytes(out)


def tensor_event(
    step: int, tag: str, *, dims: tuple[int, ...] = (), dtype: int = types_pb2.DT_FLOAT, **fields: Any
) -> Any:
    """One event holding one tensor summary with the declared shape `dims` and value fields `fields`."""
    tensor = tensor_pb2.TensorProto(dtype=dtype, **fields)
    for size in dims:
        tensor.tensor_shape.dim.add(size=size)
    value = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
    return event_pb2.Event(step=step, summary=summary_pb2.Summary(value=[value]))


def scalar_event(step: int, values: dict[str, float]) -> Any:
    """One event with `simple_value` scalars, as PyTorch's SummaryWriter writes them."""
    summary = summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag=t, simple_value=v) for t, v in values.items()]
    )
    return event_pb2.Event(step=step, summary=summary)


# --- the files -------------------------------------------------------------------------------------


def _loss(step: int, rows: int) -> float:
    return 0.5 + 2.5 * math.exp(-5 * step / rows) + 0.01 * math.sin(step)


def valid_csv(rows: int = MAX_ROWS) -> bytes:
    """A healthy run logged every step: 11 columns, as a trainer with system metrics writes them."""
    header = (
        "step,loss,grad_norm,lr,memory_gb,step_time,data_time,tokens_per_s,accuracy,gpu_util,samples_per_s\n"
    )
    lines = (
        f"{i},{_loss(i, rows):.5f},{1 + 0.1 * math.sin(i):.4f},0.0003,{40 + 0.001 * math.sin(i):.4f},"
        f"0.25,0.01,12000,{min(0.99, i / rows):.4f},88,64\n"
        for i in range(rows)
    )
    return (header + "".join(lines)).encode()


def widest_csv() -> bytes:
    """MAX_COLUMNS columns, and as many rows as MAX_VALUES allows."""
    rows = MAX_VALUES // MAX_COLUMNS
    header = "step,loss," + ",".join(f"m{i}" for i in range(MAX_COLUMNS - 2)) + "\n"
    filler = ",1" * (MAX_COLUMNS - 2)
    return (header + "".join(f"{i},{_loss(i, rows):.4f}{filler}\n" for i in range(rows))).encode()


def valid_jsonl(rows: int = MAX_ROWS) -> bytes:
    """One JSON object a line with a nested group, as most loggers append them."""
    lines = (
        json.dumps({"step": i, "train": {"loss": round(_loss(i, rows), 5)}, "lr": 3e-4, "grad_norm": 1.0})
        + "\n"
        for i in range(rows)
    )
    return "".join(lines).encode()


def valid_trainer_state(rows: int = MAX_ROWS) -> bytes:
    """A Hugging Face trainer_state.json with one `log_history` entry a step."""
    history = [{"step": i, "loss": round(_loss(i, rows), 5), "learning_rate": 3e-4} for i in range(rows)]
    return json.dumps({"global_step": rows, "log_history": history}).encode()


def valid_tensorboard(rows: int = MAX_ROWS) -> bytes:
    """Two scalars a step, one event each, as SummaryWriter.add_scalar writes them."""
    return event_file(
        scalar_event(i, {tag: value})
        for i in range(rows)
        for tag, value in (("train/loss", _loss(i, rows)), ("memory/gb", 40.0))
    )


def huge_shape_tensorboard() -> bytes:
    """The review's file: one value that declares a shape of 2^28 elements (2 GiB as floats)."""
    return event_file([tensor_event(1, "loss", dims=(2**28,), float_val=[1.0])])


def many_big_shapes_tensorboard() -> bytes:
    """A hundred records each declaring 2^27 elements: each was a second of CPU before."""
    return event_file(tensor_event(i, "loss", dims=(2**27,), float_val=[1.0]) for i in range(100))


def overflowing_shape_tensorboard() -> bytes:
    """Dimensions whose product overflows 64 bits, and a negative one, beside one real scalar."""
    return event_file(
        [
            tensor_event(1, "a", dims=(2**62, 2**62, 2**62), float_val=[1.0]),
            tensor_event(1, "b", dims=(-1,), float_val=[1.0]),
            tensor_event(1, "loss", dims=(), float_val=[2.0]),
        ]
    )


def unknown_type_tensorboard() -> bytes:
    """A one-element tensor of a type number TensorBoard does not define."""
    return event_file([tensor_event(1, "loss", dtype=999, tensor_content=b"\0" * 4)])


def sparse_tensorboard() -> bytes:
    """Few values, each at its own step under its own tag: steps times tags far past MAX_VALUES."""
    return event_file(scalar_event(i, {f"tag{i % (MAX_COLUMNS - 2)}": 1.0}) for i in range(20_000))


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def empty_values_tensorboard() -> bytes:
    """One 10 MB event whose summary holds nearly five million empty values (two bytes each):
    protobuf would build an object for each, about 450 MB."""
    summary = b"\x0a\x00" * ((MAX_BYTES - 40) // 2)
    body = b"\x10\x01" + b"\x2a" + _varint(len(summary)) + summary  # step 1, then the summary
    header = struct.pack("<Q", len(body))
    return header + struct.pack("<I", masked_crc32c(header)) + body + struct.pack("<I", masked_crc32c(body))


def long_csv() -> bytes:
    """The review's 10 MB CSV: five million one-column rows."""
    return b"x\n" + b"1\n" * ((MAX_BYTES - 2) // 2)


def blank_lines_csv() -> bytes:
    """A header, then nearly 10 MB of empty lines."""
    return b"step,loss\n" + b"\n" * (MAX_BYTES - 20) + b"1,2\n"


def wide_header_csv() -> bytes:
    """A header of 100,000 columns."""
    return (",".join(f"c{i}" for i in range(100_000)) + "\n1\n").encode()


def wide_row_csv() -> bytes:
    """A short header, then one row of nearly 10 MB of empty cells."""
    return b"step,loss\n" + b"," * (MAX_BYTES - 20) + b"\n"


def open_quote_csv() -> bytes:
    """A quote opened and never closed: the rest of the file is one cell."""
    return b'step,loss\n1,"' + b"2" * 1_000_000 + b"\n"


def text_cells_csv() -> bytes:
    """Ten MB of short text cells: every column is left out as text."""
    return b"a,b\n" + b"ab,cd\n" * ((MAX_BYTES - 4) // 6)


def long_text_cells_csv() -> bytes:
    """Nine MB of text cells in fewer lines than the line cap: read row by row, each column dropped."""
    return b"a,b\n" + b"abcdefghij,klmnopqrstu\n" * (MAX_ROWS * 4)


def over_row_cap_csv() -> bytes:
    """Two numbers a row, twice MAX_ROWS rows: read until the row past the cap."""
    return b"step,loss\n" + b"".join(f"{i},2\n".encode() for i in range(2 * MAX_ROWS))


def deep_json() -> bytes:
    """Lists nested deeper than Python's recursion limit, under the container cap."""
    return b"[" * 100_000 + b"]" * 100_000


def deep_json_lines() -> bytes:
    """A JSON Lines file whose second line nests objects deeper than the recursion limit."""
    return b'{"step": 1, "loss": 2}\n' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"\n"


def many_containers_json() -> bytes:
    """Nearly 10 MB of empty objects in one list: millions of dicts before any row is counted."""
    return b"[" + b"{}," * ((MAX_BYTES - 4) // 3) + b"{}]"


def huge_integer_json() -> bytes:
    """A trainer_state whose loss is a 4,300-digit integer, past Python's digit limit for int()."""
    return b'{"log_history": [{"step": 1, "loss": 1' + b"0" * 4300 + b'}, {"step": 2, "loss": 2.0}]}'


def many_keys_json() -> bytes:
    """One object with 600,000 keys: a dict of them is built before the columns can be counted."""
    return ("{" + ",".join(f'"k{i}":1' for i in range(600_000)) + "}").encode()


def long_json_lines() -> bytes:
    """Twice MAX_ROWS short lines."""
    return b'{"loss": 1}\n' * (2 * MAX_ROWS)


def sparse_json_lines() -> bytes:
    """Each line a different one of 499 names: 1 MB that would be a table of 50 million cells."""
    return "".join(f'{{"m{i % (MAX_COLUMNS - 1)}": 1}}\n' for i in range(MAX_ROWS)).encode()


def number_list_json() -> bytes:
    """Nearly 10 MB of numbers in one list: five million values before anything is counted."""
    return b'{"log_history": [{"step": 1, "x": [' + b"1," * ((MAX_BYTES - 60) // 2) + b"1]}]}"


# name: (file name, how to build it)
VALID: dict[str, tuple[str, Callable[[], bytes]]] = {
    "CSV, 100,000 rows x 11 columns": ("valid.csv", valid_csv),
    "CSV, 4,000 rows x 500 columns": ("widest.csv", widest_csv),
    "JSON Lines, 100,000 rows": ("valid.jsonl", valid_jsonl),
    "trainer_state.json, 100,000 entries": ("trainer_state.json", valid_trainer_state),
    "TensorBoard, 100,000 steps x 2 tags": ("valid.tfevents", valid_tensorboard),
}
HOSTILE: dict[str, tuple[str, Callable[[], bytes]]] = {
    "tensor declaring 2^28 values": ("shape.tfevents", huge_shape_tensorboard),
    "100 tensors declaring 2^27": ("shapes.tfevents", many_big_shapes_tensorboard),
    "shape overflowing 64 bits": ("overflow.tfevents", overflowing_shape_tensorboard),
    "unknown tensor type": ("dtype.tfevents", unknown_type_tensorboard),
    "sparse steps x tags": ("sparse.tfevents", sparse_tensorboard),
    "5M empty summary values": ("empty.tfevents", empty_values_tensorboard),
    "5M one-column rows": ("long.csv", long_csv),
    "10 MB of blank lines": ("blank.csv", blank_lines_csv),
    "100,000-column header": ("wide.csv", wide_header_csv),
    "10 MB row of empty cells": ("row.csv", wide_row_csv),
    "quote never closed": ("quote.csv", open_quote_csv),
    "10 MB of text cells": ("text.csv", text_cells_csv),
    "9 MB of text cells in 400,000 rows": ("words.csv", long_text_cells_csv),
    "200,000 rows of numbers": ("rows.csv", over_row_cap_csv),
    "lists 100,000 deep": ("deep.json", deep_json),
    "JSON Lines 50,000 deep": ("deep.jsonl", deep_json_lines),
    "3M empty objects": ("objects.json", many_containers_json),
    "4,300-digit integer": ("digits.json", huge_integer_json),
    "one object of 600,000 keys": ("keys.json", many_keys_json),
    "200,000 JSON lines": ("long.jsonl", long_json_lines),
    "sparse JSON Lines, 499 names": ("sparse.jsonl", sparse_json_lines),
    "5M numbers in one list": ("numbers.json", number_list_json),
}
SMALL_LOG = b"step,loss\n" + b"".join(f"{i},{2 - i / 100}\n".encode() for i in range(50))

# Run in the child: read the small log, then the file, through the command line's main.
_CHILD = """
import contextlib, io, json, resource, sys, time
from core.diagnose.__main__ import main
with contextlib.redirect_stdout(io.StringIO()):
    main([sys.argv[1]])
base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
err = io.StringIO()
cpu = time.process_time()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
    status = main([sys.argv[2]])
cpu = time.process_time() - cpu
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"status": status, "cpu_s": cpu, "above_small_mb": (peak_kb - base_kb) / 1024,
                  "peak_mb": peak_kb / 1024, "said": err.getvalue().strip()}))
"""


def measure(path: Path, small: Path) -> dict[str, Any]:
    """Read `path` with the command line's main in a fresh child process, after `small`; its figures."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(small), str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def run(files: dict[str, tuple[str, Callable[[], bytes]]], folder: Path) -> dict[str, dict[str, Any]]:
    """Write each file under `folder` and measure it."""
    small = folder / "small.csv"
    small.write_bytes(SMALL_LOG)
    figures = {}
    for label, (name, build) in files.items():
        path = folder / name
        data = build()
        path.write_bytes(data)
        figures[label] = {"bytes": len(data), **measure(path, small)}
    return figures


def main() -> None:
    """Measure every valid and hostile file; print a table, or JSON with --json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = {"valid": run(VALID, Path(folder)), "hostile": run(HOSTILE, Path(folder))}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for kind, figures in results.items():
        print(f"\n{kind}: file, size, exit status, CPU s, peak MB (above a small log's); what it said")
        for label, f in figures.items():
            said = f["said"].split(": ", 1)[-1] if f["said"] else "read"
            print(
                f"  {label:<36} {f['bytes'] / 1e6:6.2f} MB  {f['status']}  {f['cpu_s']:5.2f} s  "
                f"{f['peak_mb']:4.0f} MB ({f['above_small_mb']:+4.0f})  {said}"
            )


if __name__ == "__main__":
    main()
