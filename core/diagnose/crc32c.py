"""The masked CRC-32C checksum TFRecord files carry, eight bytes a step.

TensorBoard's own pure-Python version takes one table lookup per byte; reading eight bytes at a
time with eight tables (the "slicing-by-8" method) does the same work in about half the time,
which is most of what reading a large event file costs. The result is the same number.
"""

from __future__ import annotations

import struct

_POLYNOMIAL = 0x82F63B78  # CRC-32C (Castagnoli), bit-reversed
_MASK_DELTA = 0xA282EAD8  # TFRecord's mask: rotate right by 15 bits, then add this


def _tables() -> tuple[tuple[int, ...], ...]:
    first = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLYNOMIAL if crc & 1 else 0)
        first.append(crc)
    tables = [first]
    for _ in range(7):  # table k: the CRC of a byte followed by k zero bytes
        previous = tables[-1]
        tables.append([(c >> 8) ^ first[c & 0xFF] for c in previous])
    return tuple(tuple(t) for t in tables)


_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _tables()


def crc32c(data: bytes) -> int:
    """The CRC-32C of `data`."""
    crc = 0xFFFFFFFF
    whole = len(data) - len(data) % 8
    for low, high in struct.iter_unpack("<II", data[:whole]):
        low ^= crc
        crc = (
            _T7[low & 0xFF]
            ^ _T6[(low >> 8) & 0xFF]
            ^ _T5[(low >> 16) & 0xFF]
            ^ _T4[low >> 24]
            ^ _T3[high & 0xFF]
            ^ _T2[(high >> 8) & 0xFF]
            ^ _T1[(high >> 16) & 0xFF]
            ^ _T0[high >> 24]
        )
    for byte in data[whole:]:
        crc = _T0[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The checksum as a TFRecord stores it: the CRC-32C rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
