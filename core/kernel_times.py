"""Kernel times measured on one H200, set beside its roofline.

`data/reference/h200-2026-11-30/kernels.csv` holds the median CUDA-event time of linear layers over a
batch sweep, square matmuls, GELU and LayerNorm in FP32, TF32 and BF16; `fusion.json` times the
fusion and attention examples (the folder's README says how). We place each row at the intensity our
own workload model gives it and read its achieved rate as the row's FLOPs over its time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import positive_number, read_csv_rows, read_json, require
from core.gpus import gpu
from core.roofline import Roof, attainable_tflops, roof
from core.workloads import Workload, gelu, layer_norm, linear_layer, square_matmul

REFERENCE_DIR = "reference/h200-2026-11-30"
REFERENCE_GPU = "H200"
WORKLOADS = ("linear_forward", "square_matmul", "gelu", "layernorm")
PRECISIONS = ("fp32", "tf32", "bf16")
# TF32 keeps FP32's 4-byte values in memory; only the multiply inside the tensor cores is narrower.
STORAGE_DTYPE = {"fp32": "fp32", "tf32": "fp32", "bf16": "bf16"}
SECONDS_PER_US = 1e-6


@dataclass(frozen=True)
class KernelTime:
    """One measured kernel: what ran, in which precision, the FLOPs its time covers and the time."""

    workload: Workload
    kind: str
    precision: str
    size: int  # the batch of a linear layer, the side of a matmul or LayerNorm, GELU's element count
    label: str
    flops: float
    seconds: float

    @property
    def achieved_tflops(self) -> float:
        """The rate the kernel really reached."""
        return self.flops / self.seconds / 1e12

    @property
    def microseconds(self) -> float:
        """The measured time in µs."""
        return self.seconds / SECONDS_PER_US


def _int(value: str, what: str) -> int:
    number = positive_number(value, what)
    require(number == int(number), f"{what} must be a whole number, got {value!r}.")
    return int(number)


def _workload(row: dict[str, str]) -> tuple[Workload, int, str]:
    """The row's workload in our model, the size it was measured at, and a short label."""
    kind, dtype = row["workload"], STORAGE_DTYPE[row["precision"]]
    if kind == "linear_forward":
        n_in, m_out, batch = (_int(row[name], name) for name in ("n_in", "m_out", "batch"))
        layer = linear_layer(n_in=n_in, m_out=m_out, batch=batch, dtype=dtype)
        return layer.forward, batch, f"Linear {n_in:,}→{m_out:,}, batch {batch:,}"
    if kind == "gelu":
        elements = _int(row["elements"], "elements")
        return gelu(elements=elements, dtype=dtype), elements, f"GELU, {elements / 1e6:,.3g}M values"
    side = _int(row["n_in"], "n_in")
    if kind == "square_matmul":
        return square_matmul(size=side, dtype=dtype), side, f"{side:,}² matmul"
    return layer_norm(rows=side, width=side, dtype=dtype), side, f"LayerNorm {side:,}²"


def parse_kernel_rows(rows: list[dict[str, str]]) -> tuple[KernelTime, ...]:
    """Validated kernel times from the CSV's rows; an unknown workload or precision raises ValueError."""
    require(bool(rows), "The kernel measurements are empty.")
    times = []
    for number, row in enumerate(rows, start=2):
        where = f"kernels.csv line {number}"
        require(row.get("workload") in WORKLOADS, f"{where}: unknown workload {row.get('workload')!r}.")
        require(row.get("precision") in PRECISIONS, f"{where}: unknown precision {row.get('precision')!r}.")
        workload, size, label = _workload(row)
        times.append(
            KernelTime(
                workload=workload,
                kind=row["workload"],
                precision=row["precision"],
                size=size,
                label=label,
                flops=positive_number(row["flops"], f"{where}: flops"),
                seconds=positive_number(row["seconds"], f"{where}: seconds"),
            )
        )
    return tuple(times)


@lru_cache(maxsize=1)
def load_kernel_times() -> tuple[KernelTime, ...]:
    """Every measured kernel, read and validated once per process."""
    return parse_kernel_rows(read_csv_rows(f"{REFERENCE_DIR}/kernels.csv"))


def h200_roof(precision: str) -> Roof:
    """The H200's roof for a measured precision (TF32 measured against the FP32 roof, as PyTorch defaults)."""
    return roof(gpu(REFERENCE_GPU), STORAGE_DTYPE[precision])


@dataclass(frozen=True)
class MeasuredPoint:
    """A measured kernel under the H200 roof: where it sits and how much of the roof it reached."""

    kernel: KernelTime
    roof: Roof

    @property
    def percent_of_peak(self) -> float:
        """Achieved rate as a share of the card's peak for this number format."""
        return 100 * self.kernel.achieved_tflops / self.roof.peak_tflops

    @property
    def percent_of_roof(self) -> float:
        """Achieved rate as a share of what the roof allows at this intensity."""
        allowed = attainable_tflops(
            flop_per_byte=self.kernel.workload.flop_per_byte,
            peak_tflops=self.roof.peak_tflops,
            bandwidth_tb_per_s=self.roof.bandwidth_tb_per_s,
        )
        return 100 * self.kernel.achieved_tflops / allowed


def measured_points(precision: str) -> tuple[MeasuredPoint, ...]:
    """Every kernel measured in `precision`, under the H200 roof of that number format."""
    require(
        precision in PRECISIONS, f"No kernels were measured in {precision!r}; pick one of fp32, tf32, bf16."
    )
    under = h200_roof(precision)
    return tuple(MeasuredPoint(k, under) for k in load_kernel_times() if k.precision == precision)


def measured_rows(points: tuple[MeasuredPoint, ...]) -> list[dict[str, Any]]:
    """Chart and table rows: operation, intensity, achieved rate, share of peak and of the roof, time."""
    return [
        {
            "Measured": p.kernel.label,
            "FLOP/byte": p.kernel.workload.flop_per_byte,
            "Achieved TFLOP/s": p.kernel.achieved_tflops,
            "% of peak": p.percent_of_peak,
            "% of roof": p.percent_of_roof,
            "Time (µs)": p.kernel.microseconds,
        }
        for p in points
    ]


def find(kind: str, precision: str, *, size: int) -> KernelTime:
    """The measured kernel of one kind and precision at one size (batch, matrix side or element count)."""
    for kernel in load_kernel_times():
        if (kernel.kind, kernel.precision, kernel.size) == (kind, precision, size):
            return kernel
    raise ValueError(f"No {kind} was measured in {precision} at size {size:,}.")


# The lesson's contrast: a big square matmul against the largest GELU measured (67,108,864 values).
LESSON_MATMUL_SIDE = 4096
LESSON_GELU_VALUES = 4096 * 4096 * 4


def measured_precision(dtype: str) -> str:
    """The measured precision closest to a number format (fp16 was not measured; bf16 is its twin)."""
    return "fp32" if dtype == "fp32" else "bf16"


@dataclass(frozen=True)
class RateContrast:
    """The lesson in one line: the BF16 matmul and GELU rates on the H200, against its peak."""

    matmul: KernelTime
    gelu: KernelTime
    peak_tflops: float

    @property
    def matmul_percent_of_peak(self) -> float:
        """The matmul's rate as a share of the BF16 peak (%)."""
        return 100 * self.matmul.achieved_tflops / self.peak_tflops

    @property
    def gelu_million_values(self) -> float:
        """GELU's input, in millions of values."""
        return self.gelu.size / 1e6

    @property
    def times_apart(self) -> float:
        """How many times the matmul's rate is GELU's."""
        return self.matmul.achieved_tflops / self.gelu.achieved_tflops


def rate_contrast() -> RateContrast:
    """The measured 4096² BF16 matmul and GELU on 67M values, with the H200's BF16 peak."""
    return RateContrast(
        matmul=find("square_matmul", "bf16", size=LESSON_MATMUL_SIDE),
        gelu=find("gelu", "bf16", size=LESSON_GELU_VALUES),
        peak_tflops=h200_roof("bf16").peak_tflops,
    )


def small_kernel_floor_us() -> float:
    """The shortest time any measured kernel took: the fixed cost of launching and finishing one."""
    return min(k.microseconds for k in load_kernel_times())


@dataclass(frozen=True)
class FusionTimes:
    """The page's fusion and attention examples, timed on the H200 (FP32 fusion, BF16 attention)."""

    separate_us: float
    fused_us: float
    separate_kernels: int
    chain_values: int
    attention_tokens: int
    eager_ms: float
    sdpa_ms: float
    eager_extra_gb: float
    sdpa_extra_mb: float

    @property
    def chain_million_values(self) -> float:
        """The fused chain's input, in millions of values."""
        return self.chain_values / 1e6


def _entry(entries: list[dict[str, Any]], *, starts: str, precision: str) -> dict[str, Any]:
    found = [
        e
        for e in entries
        if str(e.get("workload", "")).startswith(starts) and e.get("precision") == precision
    ]
    require(len(found) >= 1, f"fusion.json has no {starts!r} entry in {precision}.")
    return found[-1]  # the largest case is listed last


@lru_cache(maxsize=1)
def fusion_times() -> FusionTimes:
    """The FP32 scale-shift-GELU chain eager vs compiled, and the longest BF16 attention eager vs SDPA."""
    entries = read_json(f"{REFERENCE_DIR}/fusion.json")
    require(isinstance(entries, list), "fusion.json must hold a list of measurements.")
    chain = _entry(entries, starts="scale, shift, GELU", precision="fp32")
    attention = _entry(entries, starts="attention forward", precision="bf16")
    tokens = int(str(attention["workload"]).split(" tokens")[0].split()[-1])
    return FusionTimes(
        separate_us=positive_number(chain["separate_s"], "separate_s") / SECONDS_PER_US,
        fused_us=positive_number(chain["fused_s"], "fused_s") / SECONDS_PER_US,
        separate_kernels=int(positive_number(chain["separate_kernels"], "separate_kernels")),
        chain_values=int(positive_number(chain["elements"], "elements")),
        attention_tokens=tokens,
        eager_ms=positive_number(attention["eager_s"], "eager_s") * 1e3,
        sdpa_ms=positive_number(attention["sdpa_s"], "sdpa_s") * 1e3,
        eager_extra_gb=positive_number(attention["eager_peak_extra_bytes"], "eager bytes") / 1e9,
        sdpa_extra_mb=positive_number(attention["sdpa_peak_extra_bytes"], "sdpa bytes") / 1e6,
    )
