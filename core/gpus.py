"""GPU presets from `data/gpus.csv` and the number formats they run: peak rates and value sizes.

Tensor rates are the vendors' dense figures. A card without BF16 units (T4, V100) stores its
FP16 tensor rate in `bf16_tflops` and has `has_bf16=False`; asking it for bf16 gives the plain
FP32 rate, because without BF16 units the work cannot use the tensor cores.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.datafiles import positive_number, read_csv_rows, require

DTYPES = ("fp32", "bf16", "fp16")
_BYTES_PER_VALUE = {"fp32": 4, "bf16": 2, "fp16": 2}


@dataclass(frozen=True)
class Gpu:
    """One GPU preset: memory, bandwidth and peak rates, with where the figures come from."""

    name: str
    memory_bytes: int  # as the device reports it (torch.cuda.get_device_properties(0).total_memory)
    bandwidth_tb_per_s: float
    bf16_tflops: float
    fp32_tflops: float
    has_bf16: bool
    source: str

    @property
    def memory_gb(self) -> float:
        """Device memory in decimal GB (1e9 bytes)."""
        return self.memory_bytes / 1e9

    @property
    def memory_gib(self) -> float:
        """Device memory in GiB (2^30 bytes), the unit PyTorch's messages use."""
        return self.memory_bytes / 2**30


def _flag(text: str, what: str) -> bool:
    require(text.strip().lower() in ("true", "false"), f"{what} must be true or false, got {text!r}.")
    return text.strip().lower() == "true"


def _parse_row(row: dict[str, str]) -> Gpu:
    name = (row.get("name") or "").strip()
    require(bool(name), "Every row of gpus.csv needs a name.")
    source = (row.get("source") or "").strip()
    require(bool(source), f"GPU {name} needs a source for its figures.")
    return Gpu(
        name=name,
        memory_bytes=int(positive_number(row.get("memory_bytes"), f"{name} memory_bytes")),
        bandwidth_tb_per_s=positive_number(row.get("bandwidth_tb_per_s"), f"{name} bandwidth_tb_per_s"),
        bf16_tflops=positive_number(row.get("bf16_tflops"), f"{name} bf16_tflops"),
        fp32_tflops=positive_number(row.get("fp32_tflops"), f"{name} fp32_tflops"),
        has_bf16=_flag(row.get("has_bf16") or "", f"{name} has_bf16"),
        source=source,
    )


def parse_gpus(rows: list[dict[str, str]]) -> tuple[Gpu, ...]:
    """Validated GPUs from CSV rows: positive numbers, a source each, unique names."""
    gpus = tuple(_parse_row(row) for row in rows)
    require(bool(gpus), "gpus.csv lists no GPUs.")
    names = [g.name for g in gpus]
    repeated = sorted({n for n in names if names.count(n) > 1})
    require(not repeated, f"gpus.csv lists these GPUs more than once: {', '.join(repeated)}.")
    return gpus


@lru_cache(maxsize=1)
def load_gpus() -> tuple[Gpu, ...]:
    """Every GPU preset in file order, read and validated once per process."""
    return parse_gpus(read_csv_rows("gpus.csv"))


def gpu_names() -> tuple[str, ...]:
    """The preset names in file order (the choices of a GPU picker)."""
    return tuple(g.name for g in load_gpus())


def gpu(name: str) -> Gpu:
    """The preset called `name`; ValueError naming the known ones if there is none."""
    for preset in load_gpus():
        if preset.name == name:
            return preset
    raise ValueError(f"There is no GPU called {name!r}. Known GPUs: {', '.join(gpu_names())}.")


def check_dtype(dtype: str) -> str:
    """`dtype` if it is one we model (fp32, bf16, fp16); else a ValueError listing them."""
    require(dtype in DTYPES, f"Unknown number format {dtype!r}: pick one of {', '.join(DTYPES)}.")
    return dtype


def bytes_per_value(dtype: str) -> int:
    """Bytes one number takes in this format: 4 for fp32, 2 for bf16 and fp16."""
    return _BYTES_PER_VALUE[check_dtype(dtype)]


def uses_tensor_cores(card: Gpu, dtype: str) -> bool:
    """Whether matrix work in `dtype` runs on this card's tensor cores at the dense tensor rate."""
    check_dtype(dtype)
    return dtype == "fp16" or (dtype == "bf16" and card.has_bf16)


def peak_tflops(card: Gpu, dtype: str) -> float:
    """Peak dense TFLOP/s for matrix work in `dtype`: the tensor rate where it applies, else FP32."""
    return card.bf16_tflops if uses_tensor_cores(card, dtype) else card.fp32_tflops
