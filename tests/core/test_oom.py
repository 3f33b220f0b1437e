"""Reading PyTorch's out-of-memory message: every message of the H200's run_a.csv, both wordings, the
NVML process lines, a message cut short, a traceback around it, and what is refused."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.reference import run_a_measurements
from core.oom import MAX_MESSAGE_CHARS, main, parse_oom_message

GIB, MIB = 2**30, 2**20


def format_size(size: int) -> str:
    """c10's format_size, as CUDACachingAllocator.cpp prints every figure (two decimals, binary units)."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1048576:
        return f"{size / 1024:.2f} KiB"
    if size <= 1073741824:
        return f"{size / 1048576:.2f} MiB"
    return f"{size / 1073741824:.2f} GiB"


def current(
    tried: int, total: int, free: int, in_use: int, allowed: int | None, allocated: int, unalloc: int
) -> str:
    cap = f"{format_size(allowed)} allowed; " if allowed is not None else ""
    return (
        f"CUDA out of memory. Tried to allocate {format_size(tried)}. GPU 0 has a total capacity of "
        f"{format_size(total)} of which {format_size(free)} is free. Including non-PyTorch memory, this "
        f"process has {format_size(in_use)} memory in use. {cap}Of the allocated memory "
        f"{format_size(allocated)} is allocated by PyTorch, and {format_size(unalloc)} is reserved by "
        "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
    )


RUN_A = (
    "CUDA out of memory. Tried to allocate 296.00 MiB. GPU 0 has a total capacity of 139.80 GiB of "
    "which 115.35 GiB is free. Including non-PyTorch memory, this process has 24.44 GiB memory in use. "
    "24.00 GiB allowed; Of the allocated memory 23.64 GiB is allocated by PyTorch, and 77.23 MiB is "
    "reserved by PyTorch but unallocated."
)


def test_run_a_message_reads_every_figure_in_bytes():
    m = parse_oom_message(RUN_A)
    assert m.tried_bytes == 296 * MIB
    assert m.capacity_bytes == round(139.80 * GIB)
    assert m.free_bytes == round(115.35 * GIB)
    assert m.in_use_bytes == round(24.44 * GIB)
    assert m.allowed_bytes == 24 * GIB
    assert m.allocated_bytes == round(23.64 * GIB)
    assert m.reserved_unallocated_bytes == round(77.23 * MIB)
    assert m.unread == () and m.wording == "current" and m.device == 0
    # 24.44 GiB in use, 23.72 GiB of it reserved by PyTorch: ≈ 0.72 GiB is the CUDA context and cuBLAS
    assert m.outside_pytorch_bytes == pytest.approx(0.72 * GIB, abs=0.01 * GIB)


@pytest.mark.parametrize(
    "row",
    [r for r in run_a_measurements() if r.message],
    ids=lambda r: f"{r.batch}x{r.seq}-{r.attn}-{r.optim}-{r.cap_gib:g}-{r.layers}",
)
def test_every_run_a_message_parses_exactly(row):
    m = parse_oom_message(row.message)
    assert m.unread == ()
    for name in (
        "tried_bytes",
        "capacity_bytes",
        "free_bytes",
        "in_use_bytes",
        "allowed_bytes",
        "allocated_bytes",
        "reserved_unallocated_bytes",
    ):
        value = getattr(m, name)
        assert value is not None, name
        assert format_size(value) in row.message, name  # the figure read back prints as PyTorch printed it
    assert m.allowed_bytes == row.cap_gib * GIB
    assert m.capacity_bytes == round(139.80 * GIB)
    # the allocator's own counters hold together: what it reserved is within the process's memory in use
    reserved, in_use = m.reserved_bytes, m.in_use_bytes
    assert reserved is not None and in_use is not None
    assert reserved <= in_use <= reserved + 1.2 * GIB


def test_every_message_of_run_a_csv_is_read():
    messages = [r.message for r in run_a_measurements() if r.outcome != "ok"]
    assert len(messages) == sum(1 for r in run_a_measurements() if r.message) > 50


def test_fragmentation_decides_only_where_the_unallocated_could_hold_the_block():
    assert parse_oom_message(RUN_A).fragmentation_may_decide is False  # 77.23 MiB free in pieces, 296 asked
    ten_by_2048 = next(
        r for r in run_a_measurements() if (r.batch, r.seq, r.attn, r.optim) == (10, 2048, "eager", "adam")
    )
    assert parse_oom_message(ten_by_2048.message).fragmentation_may_decide is True  # 1.37 GiB, 960 MiB asked
    assert parse_oom_message(RUN_A[: RUN_A.index("Of the")]).fragmentation_may_decide is None


def test_the_older_wording():
    m = parse_oom_message(
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capacity; "
        "21.20 GiB already allocated; 10.50 MiB free; 22.10 GiB reserved in total by PyTorch) If reserved "
        "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation."
    )
    assert m.wording == "older"
    assert m.tried_bytes == 20 * MIB
    assert m.capacity_bytes == round(23.69 * GIB)
    assert m.allocated_bytes == round(21.20 * GIB)
    assert m.free_bytes == round(10.50 * MIB)
    assert m.reserved_unallocated_bytes == round(22.10 * GIB) - round(21.20 * GIB)
    assert m.in_use_bytes is None and m.allowed_bytes is None and m.unread == ()


def test_the_oldest_wording_says_cached():
    m = parse_oom_message(
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; "
        "10.58 GiB already allocated; 9.81 MiB free; 40.12 MiB cached)"
    )
    assert m.reserved_unallocated_bytes == round(40.12 * MIB) and m.unread == ()


def test_the_older_wording_with_a_cap():
    m = parse_oom_message(
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.35 GiB total capacity; 38.10 GiB already "
        "allocated; 39.00 GiB free; 40.00 GiB allowed; 39.50 GiB reserved in total by PyTorch)"
    )
    assert m.device == 1 and m.allowed_bytes == 40 * GIB and m.unread == ()


def test_process_lines_and_the_2_1_spelling():
    m = parse_oom_message(
        "CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacty of 23.69 GiB of which "
        "7.11 GiB is free. Process 2006998 has 256.00 MiB memory in use. Including non-PyTorch memory, this "
        "process has 16.31 GiB memory in use. Of the allocated memory 16.01 GiB is allocated by PyTorch, and "
        "7.47 MiB is reserved by PyTorch but unallocated."
    )
    assert m.capacity_bytes == round(23.69 * GIB)
    assert [(p.pid, p.in_use_bytes) for p in m.other_processes] == [(2006998, 256 * MIB)]
    assert m.allowed_bytes is None and m.unread == ()


def test_zero_bytes_free_and_no_nvml():
    m = parse_oom_message(
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which "
        "0 bytes is free. Of the allocated memory 14.51 GiB is allocated by PyTorch, and 15.90 MiB is "
        "reserved by PyTorch but unallocated."
    )
    assert m.free_bytes == 0 and m.in_use_bytes is None and m.unread == ()


def test_a_message_cut_short_says_what_it_lost():
    m = parse_oom_message(RUN_A[: RUN_A.index("Of the allocated")])
    assert m.tried_bytes == 296 * MIB and m.allowed_bytes == 24 * GIB
    assert m.unread == ("allocated_bytes", "reserved_unallocated_bytes")
    m = parse_oom_message(RUN_A[: RUN_A.index("24.44")])
    assert set(m.unread) == {"in_use_bytes", "allowed_bytes", "allocated_bytes", "reserved_unallocated_bytes"}


def test_a_traceback_around_it_wrapped_over_lines():
    traceback = (
        'Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n    loss.backward()\n'
        '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 626, in backward\n'
        "torch.OutOfMemoryError: " + RUN_A.replace(". ", ".\n", 3) + "\n\nDuring handling of the above "
        "exception, another exception occurred:\ntorch.OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 2.00 MiB."
    )
    m = parse_oom_message(traceback)
    assert m == parse_oom_message(RUN_A)


@pytest.mark.parametrize(
    "text",
    ["", "RuntimeError: expected scalar type Float", "CUDA out of memory.", "x" * (MAX_MESSAGE_CHARS + 1)],
)
def test_anything_else_is_one_sentence(text):
    with pytest.raises(ValueError) as err:
        parse_oom_message(text)
    sentence = str(err.value)
    assert "\n" not in sentence and sentence.endswith(".") and len(sentence) < 200


@given(
    tried=st.integers(0, 2**40),
    total=st.integers(2**30, 2**38),
    free=st.integers(0, 2**38),
    in_use=st.integers(0, 2**38),
    allowed=st.one_of(st.none(), st.integers(2**20, 2**38)),
    allocated=st.integers(0, 2**38),
    unalloc=st.integers(0, 2**36),
)
def test_every_figure_reads_back_within_half_its_last_digit(
    tried, total, free, in_use, allowed, allocated, unalloc
):
    m = parse_oom_message(current(tried, total, free, in_use, allowed, allocated, unalloc))
    for name, value in [
        ("tried_bytes", tried),
        ("capacity_bytes", total),
        ("free_bytes", free),
        ("in_use_bytes", in_use),
        ("allowed_bytes", allowed),
        ("allocated_bytes", allocated),
        ("reserved_unallocated_bytes", unalloc),
    ]:
        read = getattr(m, name)
        if value is None:
            assert read is None
            continue
        unit = 1 if value <= 1024 else 1024 if value <= 2**20 else 2**20 if value <= 2**30 else 2**30
        assert abs(read - value) <= 0.005 * unit + 1, name
    assert m.unread == ()


def _run(capsys, *args):
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = int(stop.code or 0)
    return (code, *capsys.readouterr())


def test_cli_json_contract(tmp_path, capsys):
    path = tmp_path / "oom.txt"
    path.write_text(RUN_A, encoding="utf-8")
    code, out, err = _run(capsys, "--message", str(path), "--json")
    result = json.loads(out)
    assert code == 0 and err == ""
    assert result["tried_bytes"] == 296 * MIB and result["allowed_bytes"] == 24 * GIB
    assert result["unread"] == [] and result["other_processes"] == []
    assert set(result) >= {
        "capacity_bytes",
        "free_bytes",
        "in_use_bytes",
        "allocated_bytes",
        "reserved_unallocated_bytes",
    }


def test_cli_table(tmp_path, capsys):
    path = tmp_path / "oom.txt"
    path.write_text(RUN_A, encoding="utf-8")
    code, out, _ = _run(capsys, "--message", str(path))
    assert code == 0 and "GiB" in out


@pytest.mark.parametrize("content", ["hello", None])
def test_cli_refuses_in_one_line_with_status_2(tmp_path, capsys, content):
    path = tmp_path / "oom.txt"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    code, out, err = _run(capsys, "--message", str(path), "--json")
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("core.oom: ")
