"""Scalars from a TensorBoard event file, read with TensorBoard's own protobuf schema.

An event file is a TFRecord stream: an 8-byte length, its checksum, an `Event` message and the
message's checksum, repeated. We check both checksums, so a truncated or altered file is refused.

A tensor's shape is only a claim the file makes: a 143-byte record can declare 2^28 values. So a
value is read only when its declared shape holds exactly one element (checked before anything is
allocated) and its bytes are exactly one number of its declared type; we never ask TensorBoard or
numpy to build an array from the file. Records, values, steps and tags are counted as they are
read and refused at the first one past its cap.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2, summary_pb2, types_pb2  # type: ignore[import-untyped]  # no type hints

from core.diagnose.crc32c import masked_crc32c
from core.diagnose.formats import Unreadable

# A step logged with a dozen tags is a dozen events; a 10 MB file of the shortest real events
# (about 40 bytes each) holds some 250,000, so this cap refuses no file a logger wrote.
MAX_EVENTS = 400_000
# Summary values in all, scalar or not: a scalar is one value an event, so as many as the events.
MAX_SUMMARY_VALUES = MAX_EVENTS
# A scalar event is well under 200 bytes; at this size protobuf builds at most a few thousand
# objects for it.
SMALL_RECORD_BYTES = 4096
_EVENT_STEP, _EVENT_SUMMARY, _SUMMARY_VALUE = 2, 5, 1  # field numbers in event.proto and summary.proto

_NOT_EVENTS = "This file is not a TensorBoard event file, or it was cut short while being written."
_UNKNOWN_TYPE = (
    "This TensorBoard event file stores a value in a number type TensorBoard does not define, "
    "so it cannot be read."
)


def _bits_to_half(bits: int) -> float:
    return float(struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0])


def _bits_to_bfloat16(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0])


def _from_bytes(fmt: str, convert: Any = float) -> Any:
    return lambda content: float(convert(struct.unpack(fmt, content)[0]))


# The numeric types a scalar summary is written in: the field a writer fills with the value, and
# how to read the value from `tensor_content` (little-endian, as TensorFlow writes it).
_NUMBER_TYPES: dict[int, tuple[str, int, Any, Any]] = {
    types_pb2.DT_FLOAT: ("float_val", 4, _from_bytes("<f"), float),
    types_pb2.DT_DOUBLE: ("double_val", 8, _from_bytes("<d"), float),
    types_pb2.DT_HALF: ("half_val", 2, _from_bytes("<H", _bits_to_half), _bits_to_half),
    types_pb2.DT_BFLOAT16: ("half_val", 2, _from_bytes("<H", _bits_to_bfloat16), _bits_to_bfloat16),
    types_pb2.DT_INT8: ("int_val", 1, _from_bytes("<b"), float),
    types_pb2.DT_UINT8: ("int_val", 1, _from_bytes("<B"), float),
    types_pb2.DT_INT16: ("int_val", 2, _from_bytes("<h"), float),
    types_pb2.DT_UINT16: ("int_val", 2, _from_bytes("<H"), float),
    types_pb2.DT_INT32: ("int_val", 4, _from_bytes("<i"), float),
    types_pb2.DT_UINT32: ("uint32_val", 4, _from_bytes("<I"), float),
    types_pb2.DT_INT64: ("int64_val", 8, _from_bytes("<q"), float),
    types_pb2.DT_UINT64: ("uint64_val", 8, _from_bytes("<Q"), float),
}
_DEFINED_TYPES = frozenset(types_pb2.DataType.values())


def records(data: bytes) -> Iterator[bytes]:
    """Each record's message, its checksums checked; Unreadable past MAX_EVENTS or on a bad record."""
    offset = 0
    count = 0
    while offset < len(data):
        count += 1
        if count > MAX_EVENTS:
            raise Unreadable(
                f"This TensorBoard event file holds more than {MAX_EVENTS:,} events; the lab reads at most "
                f"{MAX_EVENTS:,}."
            )
        header = data[offset : offset + 12]
        if len(header) < 12:
            raise Unreadable(_NOT_EVENTS)
        (length,) = struct.unpack("<Q", header[:8])
        (length_crc,) = struct.unpack("<I", header[8:12])
        # The length is checked against the file before it is used: the slice below never copies
        # more than the file holds.
        if masked_crc32c(header[:8]) != length_crc or length > len(data) - offset - 16:
            raise Unreadable(_NOT_EVENTS)
        body = data[offset + 12 : offset + 12 + length]
        footer = data[offset + 12 + length : offset + 16 + length]
        if masked_crc32c(body) != struct.unpack("<I", footer)[0]:
            raise Unreadable(_NOT_EVENTS)
        yield body
        offset += 16 + length


def _one_element(dims: Any) -> bool:
    """Whether a declared shape holds exactly one element, without multiplying the sizes out:
    any size other than 1 (0, negative, or huge) means the tensor is not a single number."""
    return all(dim.size == 1 for dim in dims)


def tensor_scalar(tensor: Any) -> float | None:
    """The number a one-element numeric tensor holds; None for any other tensor (text, an image, a
    histogram). Unreadable for a type TensorBoard does not define."""
    if tensor.dtype not in _DEFINED_TYPES:
        raise Unreadable(_UNKNOWN_TYPE)
    number_type = _NUMBER_TYPES.get(tensor.dtype)
    if number_type is None or not _one_element(tensor.tensor_shape.dim):
        return None
    field, size_bytes, from_bytes, from_field = number_type
    if tensor.tensor_content:
        return from_bytes(tensor.tensor_content) if len(tensor.tensor_content) == size_bytes else None
    values = getattr(tensor, field)
    return float(from_field(values[0])) if len(values) == 1 else None


def _scalar(value: Any) -> float | None:
    """The number a summary value holds, if a scalar (writers use `simple_value` or a 1-element tensor)."""
    if value.HasField("simple_value"):
        return float(value.simple_value)
    if value.HasField("tensor"):
        return tensor_scalar(value.tensor)
    return None


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A protobuf varint at `pos`: its value and the position after it."""
    value = shift = 0
    while pos < end and shift < 64:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7
    raise Unreadable(_NOT_EVENTS)


def _fields(data: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """The fields of the message in data[pos:end], one at a time: (number, wire type, start, end);
    for a varint, start is its value. Nothing is copied."""
    sizes = {1: 8, 5: 4}  # fixed64, fixed32
    while pos < end:
        key, pos = _varint(data, pos, end)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos, end)
            yield number, wire, value, pos
            continue
        if wire == 2:
            size, pos = _varint(data, pos, end)
        elif wire in sizes:
            size = sizes[wire]
        else:
            raise Unreadable(_NOT_EVENTS)
        if size > end - pos:
            raise Unreadable(_NOT_EVENTS)
        yield number, wire, pos, pos + size
        pos += size


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _event_values(body: bytes) -> tuple[int, Iterator[Any]]:
    """An event's step and its summary values, each parsed alone, small ones only."""
    if len(body) <= SMALL_RECORD_BYTES:
        event = event_pb2.Event()
        try:
            event.ParseFromString(body)
        except DecodeError:
            raise Unreadable(_NOT_EVENTS) from None
        return event.step, iter(event.summary.value)
    step, summaries = 0, []
    for number, wire, start, end in _fields(body, 0, len(body)):
        if number == _EVENT_STEP and wire == 0:
            step = _signed(start)
        elif number == _EVENT_SUMMARY and wire == 2:
            summaries.append((start, end))
    return step, (
        value
        for start, end in summaries
        for number, wire, value_start, value_end in _fields(body, start, end)
        if number == _SUMMARY_VALUE and wire == 2
        for value in _small_value(body[value_start:value_end])
    )


def _small_value(data: bytes) -> list[Any]:
    """One summary value, parsed when small enough to be a scalar; an empty list otherwise."""
    if len(data) > SMALL_RECORD_BYTES:
        return []
    try:
        return [summary_pb2.Summary.Value.FromString(data)]
    except DecodeError:
        raise Unreadable(_NOT_EVENTS) from None


def scalar_values(data: bytes) -> dict[float, dict[str, float]]:
    """Each step's scalars by tag; Unreadable past MAX_SUMMARY_VALUES summary values (scalars or
    not), or for a file that is not events."""
    by_step: dict[float, dict[str, float]] = {}
    seen = 0
    for body in records(data):
        step, values = _event_values(body)
        for value in values:
            seen += 1
            if seen > MAX_SUMMARY_VALUES:
                raise Unreadable(
                    f"This TensorBoard event file holds more than {MAX_SUMMARY_VALUES:,} summary values; "
                    f"the lab reads at most {MAX_SUMMARY_VALUES:,}."
                )
            number = _scalar(value)
            if number is not None:
                by_step.setdefault(float(step), {})[value.tag] = number
    if not by_step:
        raise Unreadable(
            "This TensorBoard event file holds no scalar values (loss, learning rate and so on)."
        )
    return by_step
