"""The roofline model: how fast an operation can possibly run on a GPU, given FLOPs and bytes.

A card does at most `peak` FLOP/s and moves at most `bandwidth` bytes/s. An operation doing
`I` FLOPs per byte moved can therefore reach min(peak, I × bandwidth). The ridge point,
peak ÷ bandwidth, is where the two limits meet: below it the operation waits on memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.datafiles import require
from core.gpus import Gpu, check_dtype, gpu, peak_tflops, uses_tensor_cores
from core.units import duration_label
from core.workloads import (
    BYTES_PER_MB,
    FLOPS_PER_GFLOP,
    AttentionScores,
    Fusion,
    LinearLayerCost,
    Workload,
    attention_scores,
    fused_elementwise,
    gelu,
    layer_norm,
    linear_layer,
    square_matmul,
)

MEMORY_BOUND = "memory-bound"
COMPUTE_BOUND = "compute-bound"

# TFLOP/s and TB/s share the 1e12 prefix, so FLOP/byte × TB/s is TFLOP/s directly.
_PER_TERA = 1e12


def _positive(value: float, what: str) -> float:
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    require(
        is_number and math.isfinite(value) and value > 0, f"{what} must be a positive number, got {value!r}."
    )
    return float(value)


@dataclass(frozen=True)
class Roof:
    """One GPU at one number format: its compute ceiling, its bandwidth slope and where they meet."""

    gpu_name: str
    dtype: str
    peak_tflops: float
    bandwidth_tb_per_s: float
    tensor_cores: bool

    @property
    def ridge_flop_per_byte(self) -> float:
        """Arithmetic intensity at which the bandwidth slope reaches the compute ceiling."""
        return ridge_flop_per_byte(peak_tflops=self.peak_tflops, bandwidth_tb_per_s=self.bandwidth_tb_per_s)


def roof(card: Gpu, dtype: str) -> Roof:
    """The roof of `card` for matrix work in `dtype` (see `core.gpus.peak_tflops`)."""
    return Roof(
        gpu_name=card.name,
        dtype=check_dtype(dtype),
        peak_tflops=peak_tflops(card, dtype),
        bandwidth_tb_per_s=card.bandwidth_tb_per_s,
        tensor_cores=uses_tensor_cores(card, dtype),
    )


def ridge_flop_per_byte(*, peak_tflops: float, bandwidth_tb_per_s: float) -> float:
    """Peak FLOP/s divided by bandwidth: the FLOPs per byte an operation needs to keep up."""
    return _positive(peak_tflops, "Peak TFLOP/s") / _positive(bandwidth_tb_per_s, "Bandwidth (TB/s)")


def attainable_tflops(*, flop_per_byte: float, peak_tflops: float, bandwidth_tb_per_s: float) -> float:
    """The best rate an operation of this intensity can reach: min(peak, intensity × bandwidth)."""
    intensity = _positive(flop_per_byte, "Arithmetic intensity (FLOP/byte)")
    return min(
        _positive(peak_tflops, "Peak TFLOP/s"), intensity * _positive(bandwidth_tb_per_s, "Bandwidth (TB/s)")
    )


def regime(*, flop_per_byte: float, ridge_flop_per_byte: float) -> str:
    """'memory-bound' left of the ridge, 'compute-bound' at or right of it."""
    below = _positive(flop_per_byte, "Arithmetic intensity (FLOP/byte)") < _positive(
        ridge_flop_per_byte, "Ridge point (FLOP/byte)"
    )
    return MEMORY_BOUND if below else COMPUTE_BOUND


@dataclass(frozen=True)
class TimeBound:
    """The two floors on an operation's time; the larger is the bound."""

    compute_s: float
    memory_s: float

    @property
    def seconds(self) -> float:
        """No run can beat this: the slower of doing the FLOPs and moving the bytes."""
        return max(self.compute_s, self.memory_s)

    @property
    def compute_label(self) -> str:
        """The arithmetic floor, in a readable unit."""
        return duration_label(self.compute_s)

    @property
    def memory_label(self) -> str:
        """The memory-traffic floor, in a readable unit."""
        return duration_label(self.memory_s)


def time_bound(
    *, flops: float, moved_bytes: float, peak_tflops: float, bandwidth_tb_per_s: float
) -> TimeBound:
    """Seconds to do `flops` at peak, and to move `moved_bytes` at full bandwidth."""
    return TimeBound(
        compute_s=_positive(flops, "FLOPs") / (_positive(peak_tflops, "Peak TFLOP/s") * _PER_TERA),
        memory_s=_positive(moved_bytes, "Bytes moved")
        / (_positive(bandwidth_tb_per_s, "Bandwidth (TB/s)") * _PER_TERA),
    )


@dataclass(frozen=True)
class RooflinePoint:
    """Where one operation sits under one roof, and how fast it can possibly go."""

    name: str
    flops: int
    moved_bytes: int
    flop_per_byte: float
    attainable_tflops: float
    regime: str
    time: TimeBound

    @property
    def time_bound_s(self) -> float:
        """Lower bound on the operation's time, in seconds."""
        return self.time.seconds

    @property
    def time_bound_label(self) -> str:
        """The lower bound on time, in a readable unit."""
        return duration_label(self.time.seconds)


def roofline_point(workload: Workload, under: Roof) -> RooflinePoint:
    """Place `workload` under the roof `under`: intensity, attainable rate, regime, time bound."""
    rates = {"peak_tflops": under.peak_tflops, "bandwidth_tb_per_s": under.bandwidth_tb_per_s}
    return RooflinePoint(
        name=workload.name,
        flops=workload.flops,
        moved_bytes=workload.moved_bytes,
        flop_per_byte=workload.flop_per_byte,
        attainable_tflops=attainable_tflops(flop_per_byte=workload.flop_per_byte, **rates),
        regime=regime(flop_per_byte=workload.flop_per_byte, ridge_flop_per_byte=under.ridge_flop_per_byte),
        time=time_bound(flops=workload.flops, moved_bytes=workload.moved_bytes, **rates),
    )


def roof_outline(
    under: Roof, *, min_flop_per_byte: float, max_flop_per_byte: float
) -> tuple[tuple[float, float], ...]:
    """(FLOP/byte, TFLOP/s) corners of the roof across an intensity range: slope, ridge, ceiling."""
    low, high = (
        _positive(min_flop_per_byte, "Lowest intensity"),
        _positive(max_flop_per_byte, "Highest intensity"),
    )
    require(low < high, "The lowest intensity must be below the highest.")
    ridge = min(max(under.ridge_flop_per_byte, low), high)
    corners = (low, ridge, high)
    return tuple(
        (
            x,
            attainable_tflops(
                flop_per_byte=x, peak_tflops=under.peak_tflops, bandwidth_tb_per_s=under.bandwidth_tb_per_s
            ),
        )
        for x in corners
    )


def roofline_rows(points: tuple[RooflinePoint, ...]) -> list[dict[str, object]]:
    """One row per point, with units in the column names (the table and the chart share these)."""
    return [
        {
            "Operation": point.name,
            "GFLOP": point.flops / FLOPS_PER_GFLOP,
            "MB moved": point.moved_bytes / BYTES_PER_MB,
            "FLOP/byte": point.flop_per_byte,
            "Attainable TFLOP/s": point.attainable_tflops,
            "Regime": point.regime,
            "Time bound": point.time_bound_label,
        }
        for point in points
    ]


# The lesson's contrast: a 4096 x 4096 matrix multiply, and cheap ops over one such matrix.
LESSON_MATRIX_SIZE = 4096
# Elementwise ops chained in the fusion example, and the sequence length of the attention example.
FUSED_OPS = 3
ATTENTION_SEQ_LEN = 8192


@dataclass(frozen=True)
class LinearLayerRoofline:
    """Everything the linear layer page shows for one choice of sizes, dtype and GPU."""

    layer: LinearLayerCost
    roof: Roof
    matmul: Workload
    gelu: Workload
    points: tuple[RooflinePoint, ...]
    fusion: Fusion
    fusion_points: tuple[RooflinePoint, RooflinePoint]
    attention: AttentionScores

    @property
    def layer_point(self) -> RooflinePoint:
        """The learner's layer under the roof (the first point)."""
        return self.points[0]

    @property
    def has_bf16_fallback(self) -> bool:
        """True when bf16 was asked of a card without BF16 units, so the FP32 rate applies."""
        return self.roof.dtype == "bf16" and not self.roof.tensor_cores


def linear_layer_roofline(
    *, n_in: int, m_out: int, batch: int, dtype: str, gpu_name: str
) -> LinearLayerRoofline:
    """The learner's layer beside a square matmul, a GELU and a LayerNorm under one GPU's roof."""
    under = roof(gpu(gpu_name), dtype)
    layer = linear_layer(n_in=n_in, m_out=m_out, batch=batch, dtype=dtype)
    size = LESSON_MATRIX_SIZE
    matmul = square_matmul(size=size, dtype=dtype)
    activation = gelu(elements=size * size, dtype=dtype)
    norm = layer_norm(rows=size, width=size, dtype=dtype)
    fusion = fused_elementwise(ops=FUSED_OPS, elements=size * size, dtype=dtype)
    return LinearLayerRoofline(
        layer=layer,
        roof=under,
        matmul=matmul,
        gelu=activation,
        points=tuple(roofline_point(w, under) for w in (layer.forward, matmul, activation, norm)),
        fusion=fusion,
        fusion_points=(roofline_point(fusion.separate, under), roofline_point(fusion.fused, under)),
        attention=attention_scores(seq_len=ATTENTION_SEQ_LEN, dtype=dtype),
    )
