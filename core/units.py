"""How the lab writes a duration, a figure to three significant figures, or a device's memory, the same way on
every page."""

from __future__ import annotations

import math

MS_PER_S = 1_000
S_PER_H = 3_600

# Each unit and its length in seconds, largest first.
_TIME_UNITS = (
    ("days", 86_400.0),
    ("h", 3_600.0),
    ("min", 60.0),
    ("s", 1.0),
    ("ms", 1e-3),
    ("µs", 1e-6),
    ("ns", 1e-9),
)


def duration_label(seconds: float, *, unit_of: float | None = None) -> str:
    """A duration in the largest unit that keeps it at 1 or more, to three significant figures:
    '65.8 µs', '7.05 ms', '1.20 s', '30.0 min', '4.17 days'. With `unit_of`, in the unit that
    duration would get, so two figures in one sentence share a unit ('0.270 ms of 2.29 ms')."""
    _check(seconds)
    if seconds == 0 and unit_of is None:
        return "0 s"
    unit, scale = duration_unit(seconds if unit_of is None else unit_of)
    value = float(f"{seconds / scale:.3g}")
    decimals = max(0, 2 - math.floor(math.log10(value))) if value else 0
    return f"{value:,.{decimals}f} {unit}"


def duration_unit(seconds: float) -> tuple[str, float]:
    """The unit `duration_label` writes `seconds` in and its length in seconds: the largest unit it
    reaches, moving up one when rounding carries it over (999.6 µs). A chart axis divides by the length."""
    _check(seconds)
    if seconds == 0:
        return "s", 1.0
    index = next((i for i, (_, scale) in enumerate(_TIME_UNITS) if seconds >= scale), len(_TIME_UNITS) - 1)
    value = float(f"{seconds / _TIME_UNITS[index][1]:.3g}")
    if index > 0 and value * _TIME_UNITS[index][1] >= _TIME_UNITS[index - 1][1]:
        index -= 1
    return _TIME_UNITS[index]


def _check(seconds: float) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise ValueError(f"A duration must be a number of seconds, got {seconds!r}.")
    if seconds < 0:
        raise ValueError(f"A duration cannot be negative, got {seconds:g} s.")


def significant(value: float) -> str:
    """Three significant figures without scientific notation (1.07, 13.4, 537)."""
    digits = max(0, 2 - int(f"{value:e}".split("e")[1])) if value else 0
    return f"{value:,.{digits}f}"


def count_label(value: float) -> str:
    """A count as a learner reads one: a whole number with thousands separators and no decimals, even when
    it arrives as a float ('2,400', '32'); a part of one, such as a batch split over more GPUs than it has
    samples, to three significant figures ('0.500')."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"A count must be a finite number of at least zero, got {value!r}.")
    return f"{int(value):,}" if float(value).is_integer() else significant(value)


def fixed_label(value: float, places: int) -> str:
    """A figure to `places` decimals with thousands separators, for a column whose figures line up on the
    point: '2,577.0', '0.467'."""
    return f"{value:,.{places}f}"


BYTES_PER_GIB = 2**30
BYTES_PER_GB = 1e9


def capacity_label(total_bytes: int) -> str:
    """A device's memory as the device reports it, once and the same way on every page: the binary size
    its name and PyTorch's messages use, then the decimal GB every figure beside it is in:
    '24 GiB (25.77 GB)', '139.8 GiB (150.11 GB)'."""
    if isinstance(total_bytes, bool) or not isinstance(total_bytes, int) or total_bytes <= 0:
        raise ValueError(f"A device's memory must be a positive whole number of bytes, got {total_bytes!r}.")
    gib = total_bytes / BYTES_PER_GIB
    shown_gib = f"{gib:,.0f}" if gib == round(gib) else f"{gib:,.1f}"
    return f"{shown_gib} GiB ({total_bytes / BYTES_PER_GB:,.2f} GB)"


FLOP_UNITS = ((1e12, "TFLOPs"), (1e9, "GFLOPs"), (1e6, "MFLOPs"), (1e3, "kFLOPs"))


def flops_label(flops: float) -> str:
    """A FLOP count to three significant figures in the largest unit it fills, so a small layer never reads
    '0.00 GFLOPs': '4.19 MFLOPs', '1.07 GFLOPs'."""
    if not (flops >= 0 and flops != float("inf")):
        raise ValueError(f"A FLOP count must be a finite number of at least zero, got {flops!r}.")
    for size, unit in FLOP_UNITS:
        if flops >= size:
            return f"{significant(flops / size)} {unit}"
    return f"{significant(flops)} FLOPs"


def indefinite_article(number: int) -> str:
    """'a' or 'an' before `number` as it is read aloud: an 8,192 (eight thousand), an 11, an 18,000, but
    a 1,024 and a 256."""
    leading = f"{number:,}".split(",")[0]
    return "an" if leading.startswith("8") or leading in ("11", "18") else "a"
