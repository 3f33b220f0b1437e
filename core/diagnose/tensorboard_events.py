"""Scalars from a TensorBoard event file, read with TensorBoard's own protobuf schema.

An event file is a TFRecord stream: an 8-byte length, its checksum, an `Event` message and the
message's checksum, repeated. We check both checksums, so a truncated or altered file is refused.
"""

from __future__ import annotations

import struct
from typing import Any

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2  # type: ignore[import-untyped]  # no type hints shipped
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import (  # type: ignore[import-untyped]  # no hints
    masked_crc32c,
)
from tensorboard.util import tensor_util  # type: ignore[import-untyped]  # no type hints shipped

_NOT_EVENTS = "This file is not a TensorBoard event file, or it was cut short while being written."


def _records(data: bytes) -> list[bytes]:
    records = []
    offset = 0
    while offset < len(data):
        header = data[offset : offset + 12]
        if len(header) < 12:
            raise ValueError(_NOT_EVENTS)
        (length,) = struct.unpack("<Q", header[:8])
        (length_crc,) = struct.unpack("<I", header[8:12])
        body = data[offset + 12 : offset + 12 + length]
        footer = data[offset + 12 + length : offset + 16 + length]
        if masked_crc32c(header[:8]) != length_crc or len(body) != length or len(footer) != 4:
            raise ValueError(_NOT_EVENTS)
        if masked_crc32c(body) != struct.unpack("<I", footer)[0]:
            raise ValueError(_NOT_EVENTS)
        records.append(body)
        offset += 16 + length
    return records


def _scalar(value: Any) -> float | None:
    """The number a summary value holds, if a scalar (writers use `simple_value` or a 1-element tensor)."""
    if value.HasField("simple_value"):
        return float(value.simple_value)
    if value.HasField("tensor"):
        array = tensor_util.make_ndarray(value.tensor)
        if array.size == 1 and array.dtype.kind in "fiu":
            return float(array.reshape(-1)[0])
    return None


def scalar_records(data: bytes) -> list[dict[str, float]]:
    """One record per step with every scalar tag logged at that step, plus the step itself."""
    by_step: dict[int, dict[str, float]] = {}
    for body in _records(data):
        event = event_pb2.Event()
        try:
            event.ParseFromString(body)
        except DecodeError:
            raise ValueError(_NOT_EVENTS) from None
        for value in event.summary.value:
            number = _scalar(value)
            if number is not None:
                by_step.setdefault(event.step, {"step": float(event.step)})[value.tag] = number
    if not by_step:
        raise ValueError(
            "This TensorBoard event file holds no scalar values (loss, learning rate and so on)."
        )
    return [by_step[step] for step in sorted(by_step)]
