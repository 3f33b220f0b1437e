"""PyTorch's CUDA out-of-memory message, read into bytes.

    python -m core.oom --message FILE [--json]

PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, `DeviceCachingAllocator::malloc`)
builds the message from its own counters, each printed by `format_size`: up to 1,024 as "N bytes",
up to 1 MiB in KiB, up to 1 GiB in MiB, above that in GiB, always with two decimals, so every figure
read back is good to half a unit of its last digit. Two wordings are in use:

- today's (PyTorch 2.1 on): "Tried to allocate X. GPU 0 has a total capacity of T of which F is free.
  [Process N has P memory in use.] Including non-PyTorch memory, this process has U memory in use.
  [A allowed; ]Of the allocated memory M is allocated by PyTorch, [with Q allocated in private pools
  (e.g., CUDA Graphs), ]and R is reserved by PyTorch but unallocated." The process lines come from
  NVML and are missing where NVML is; PyTorch 2.1 spelled "capacty".
- the older one: "Tried to allocate X (GPU 0; T total capacity; M already allocated; F free;
  [A allowed; ]V reserved in total by PyTorch)", where unallocated is V − M and no in-use figure exists
  (PyTorch 1.0 to 1.3 ended "C cached)", the unallocated part itself).

"Tried to allocate" is the segment the allocator asked CUDA for (`get_allocation_size`), not the
tensor: see `core.memory.allocator`. "Allowed" is the cap of `set_per_process_memory_fraction`, which
limits what the allocator reserves. A message cut short keeps what it has; what it lost is listed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn

# A traceback with the message in it is a few KB; a whole log pasted by mistake is refused unread.
MAX_MESSAGE_CHARS = 200_000
EXIT_BAD_INPUT = 2
UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
FIELDS = (
    "tried_bytes",
    "capacity_bytes",
    "free_bytes",
    "in_use_bytes",
    "allowed_bytes",
    "allocated_bytes",
    "reserved_unallocated_bytes",
)
# The message's words for each field, for a sentence naming what could not be read.
FIELD_WORDS = {
    "tried_bytes": "the size it tried to allocate",
    "capacity_bytes": "the GPU's total capacity",
    "free_bytes": "the GPU's free memory",
    "in_use_bytes": "this process's memory in use",
    "allowed_bytes": "the memory allowed to the process",
    "allocated_bytes": "the memory allocated by PyTorch",
    "reserved_unallocated_bytes": "the memory reserved by PyTorch but unallocated",
}

_SIZE = r"(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB)"
_START = re.compile(r"(CUDA|HIP) out of memory\.?", re.IGNORECASE)
_TRIED = re.compile(r"Tried to allocate " + _SIZE)
_GPU = re.compile(r"GPU (\d+)")
# Today's wording, clause by clause; each clause is looked for after the start of the message.
_CAPACITY = re.compile(r"has a total capac(?:i)?ty of " + _SIZE)
_FREE = re.compile(r"of which " + _SIZE + r" is free")
_PROCESS = re.compile(r"Process (\d+) has " + _SIZE + r" memory in use")
_IN_USE = re.compile(r"this process has " + _SIZE + r" memory in use")
_ALLOWED = re.compile(_SIZE + r" allowed;")
_ALLOCATED = re.compile(r"Of the allocated memory " + _SIZE + r" is allocated by PyTorch")
_PRIVATE = re.compile(r"with " + _SIZE + r" allocated in private pools")
_UNALLOCATED = re.compile(_SIZE + r" is reserved by PyTorch but unallocated")
# The older wording's parenthesis.
_OLD = re.compile(r"\(GPU (\d+); " + _SIZE + r" total capacity; ")
_OLD_ALLOCATED = re.compile(_SIZE + r" already allocated")
_OLD_FREE = re.compile(_SIZE + r" free;")
_OLD_RESERVED = re.compile(_SIZE + r" reserved in total by PyTorch")
_OLDEST_CACHED = re.compile(_SIZE + r" cached\)")  # PyTorch 1.0 to 1.3: the cached part not allocated


@dataclass(frozen=True)
class OtherProcess:
    """Another process on the same GPU, as NVML reported it in the message."""

    pid: int
    in_use_bytes: int


@dataclass(frozen=True)
class OomMessage:
    """What one out-of-memory message says, in bytes; None where it does not say (or was cut short).

    `allowed_bytes` is None without a cap. `unread` names the fields the message should have held and
    did not; `wording` is "current" or "older".
    """

    wording: str
    device: int | None
    tried_bytes: int | None
    capacity_bytes: int | None
    free_bytes: int | None
    in_use_bytes: int | None
    allowed_bytes: int | None
    allocated_bytes: int | None
    reserved_unallocated_bytes: int | None
    other_processes: tuple[OtherProcess, ...] = ()
    unread: tuple[str, ...] = field(default=())

    @property
    def reserved_bytes(self) -> int | None:
        """Everything the caching allocator held: allocated plus reserved-but-unallocated."""
        if self.allocated_bytes is None or self.reserved_unallocated_bytes is None:
            return None
        return self.allocated_bytes + self.reserved_unallocated_bytes

    @property
    def outside_pytorch_bytes(self) -> int | None:
        """What this process holds outside the allocator (the CUDA context, cuBLAS's workspace…)."""
        if self.in_use_bytes is None or self.reserved_bytes is None:
            return None
        return max(0, self.in_use_bytes - self.reserved_bytes)

    @property
    def fragmentation_may_decide(self) -> bool | None:
        """Whether the reserved-but-unallocated memory alone could hold the block it tried: then the free
        space was there but in pieces, and `expandable_segments:True` might have let it fit. None if the
        message does not say."""
        if self.reserved_unallocated_bytes is None or self.tried_bytes is None:
            return None
        return self.reserved_unallocated_bytes >= self.tried_bytes

    @property
    def limit_bytes(self) -> int | None:
        """The line the allocator ran into: the cap where there is one, else the card's capacity."""
        return self.allowed_bytes if self.allowed_bytes is not None else self.capacity_bytes


def size_bytes(number: str, unit: str) -> int:
    """A `format_size` figure ("960.00", "MiB") in bytes, rounded to the nearest byte."""
    return int(round(float(number) * UNITS[unit]))


def half_digit_bytes(size: int) -> float:
    """How far a figure read back may be from the true size: half a unit of `format_size`'s last digit."""
    unit = (
        1
        if size <= 1024
        else UNITS["KiB"]
        if size <= UNITS["MiB"]
        else UNITS["MiB"]
        if size <= UNITS["GiB"]
        else UNITS["GiB"]
    )
    return 0 if unit == 1 else 0.005 * unit


def _size(pattern: re.Pattern[str], text: str) -> int | None:
    found = pattern.search(text)
    return size_bytes(found.group(1), found.group(2)) if found else None


def _message_text(text: str) -> str:
    """The message from its start to the end of what was pasted, on one line."""
    if len(text) > MAX_MESSAGE_CHARS:
        raise ValueError(
            f"That is {len(text):,} characters; paste the out-of-memory message or its traceback "
            f"(at most {MAX_MESSAGE_CHARS:,})."
        )
    start = _START.search(text)
    if start is None or not _TRIED.search(text, start.end()):
        raise ValueError(
            'That is not a PyTorch out-of-memory message: it needs "CUDA out of memory. Tried to allocate …".'
        )
    # The first message (a traceback may repeat it in a chained exception), whitespace made single spaces.
    following = _START.search(text, start.end())
    end = following.start() if following else len(text)
    return " ".join(text[start.start() : end].split())


def _older(message: str, tried: int | None) -> OomMessage:
    old = _OLD.search(message)
    assert old is not None
    allocated, reserved = _size(_OLD_ALLOCATED, message), _size(_OLD_RESERVED, message)
    cached = _size(_OLDEST_CACHED, message)
    if reserved is None and cached is not None and allocated is not None:
        reserved = allocated + cached
    values: dict[str, int | None] = {
        "tried_bytes": tried,
        "capacity_bytes": size_bytes(old.group(2), old.group(3)),
        "free_bytes": _size(_OLD_FREE, message),
        "in_use_bytes": None,  # the older wording has no such figure: not "unread"
        "allowed_bytes": _size(_ALLOWED, message),
        "allocated_bytes": allocated,
        "reserved_unallocated_bytes": reserved - allocated
        if reserved is not None and allocated is not None
        else None,
    }
    closed = ")" in message[old.end() :]
    unread = tuple(
        name
        for name in FIELDS
        if values[name] is None and name != "in_use_bytes" and (name != "allowed_bytes" or not closed)
    )
    return _message("older", int(old.group(1)), values, (), unread)


def parse_oom_message(text: str) -> OomMessage:
    """Read PyTorch's out-of-memory message out of `text` (the message alone, or a traceback around it).

    Raises ValueError with one sentence when `text` holds no such message or is too long.
    """
    message = _message_text(text)
    tried = _size(_TRIED, message)
    if _OLD.search(message):
        return _older(message, tried)
    gpu = _GPU.search(message)
    values: dict[str, int | None] = {
        "tried_bytes": tried,
        "capacity_bytes": _size(_CAPACITY, message),
        "free_bytes": _size(_FREE, message),
        "in_use_bytes": _size(_IN_USE, message),
        "allowed_bytes": _size(_ALLOWED, message),
        "allocated_bytes": _size(_ALLOCATED, message),
        "reserved_unallocated_bytes": _size(_UNALLOCATED, message),
    }
    # Everything after "allowed" is printed after it: once a later clause is there, a missing cap is no cap.
    cap_passed = values["allocated_bytes"] is not None or "Of the allocated" in message
    unread = tuple(
        name
        for name in FIELDS
        if values[name] is None
        and not (name == "allowed_bytes" and cap_passed)
        and not (name == "in_use_bytes" and cap_passed and "this process" not in message)
    )
    others = tuple(
        OtherProcess(int(m.group(1)), size_bytes(m.group(2), m.group(3))) for m in _PROCESS.finditer(message)
    )
    return _message("current", int(gpu.group(1)) if gpu else None, values, others, unread)


def _message(
    wording: str,
    device: int | None,
    values: dict[str, int | None],
    others: tuple[OtherProcess, ...],
    unread: tuple[str, ...],
) -> OomMessage:
    return OomMessage(
        wording=wording,
        device=device,
        tried_bytes=values["tried_bytes"],
        capacity_bytes=values["capacity_bytes"],
        free_bytes=values["free_bytes"],
        in_use_bytes=values["in_use_bytes"],
        allowed_bytes=values["allowed_bytes"],
        allocated_bytes=values["allocated_bytes"],
        reserved_unallocated_bytes=values["reserved_unallocated_bytes"],
        other_processes=others,
        unread=unread,
    )


def message_json(message: OomMessage) -> dict[str, Any]:
    """The JSON contract of `python -m core.oom --json`: every field in bytes (null where not said)."""
    out = {name: getattr(message, name) for name in FIELDS}
    out["unread"] = list(message.unread)
    out["wording"] = message.wording
    out["device"] = message.device
    out["other_processes"] = [asdict(p) for p in message.other_processes]
    return out


def message_table(message: OomMessage) -> str:
    """The message's figures as readable lines, in GiB."""
    lines = []
    for name in FIELDS:
        value = getattr(message, name)
        shown = "not said" if value is None else f"{value:,} bytes ({value / 2**30:.2f} GiB)"
        lines.append(f"{FIELD_WORDS[name].capitalize():<48} {shown}")
    if message.unread:
        lines.append("Could not read: " + ", ".join(FIELD_WORDS[n] for n in message.unread) + ".")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """Errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print `message` as one line and exit with status 2."""
        _fail(message)


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"core.oom: {' '.join(message.split())}\n")
    raise SystemExit(EXIT_BAD_INPUT)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _Parser(prog="python -m core.oom", description="Read PyTorch's out-of-memory message.")
    parser.add_argument("--message", required=True, help="a file holding the message or its traceback")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    path = Path(args.message)
    try:
        with path.open("rb") as file:
            raw = file.read(4 * MAX_MESSAGE_CHARS + 1)  # UTF-8 is at most 4 bytes a character
    except OSError as err:
        _fail(f"cannot read {args.message}: {err.strerror or err}.")
    try:
        message = parse_oom_message(raw.decode("utf-8", errors="replace"))
    except ValueError as err:
        _fail(str(err))
    print(json.dumps(message_json(message), indent=2) if args.json else message_table(message))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
