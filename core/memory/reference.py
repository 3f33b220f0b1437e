"""The H200 reference (`data/reference/h200-2026-11-30/`): one training step of real Hugging Face models
measured phase by phase, and Run A run for real on a card capped at 24 GiB. Read-only facts to check
the phase model against; nothing is fitted to them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from core.datafiles import read_csv_rows, read_json, require
from core.memory.setup import StepSetup
from core.model_config import parse_config
from core.models import ModelSpec

FOLDER = "reference/h200-2026-11-30"
# The published config.json of each model the reference measured, kept in data/configs/.
CONFIG_FILES = {
    "GPT-2 small": "configs/gpt2-small.json",
    "Llama-3.2-1B": "configs/llama-3.2-1b.json",
    "Qwen2.5-0.5B": "configs/qwen2.5-0.5b.json",
    "Mistral-7B": "configs/mistral-7b.json",
}
# The columns of memory.csv, as tools/measure_gpu.py writes them: the setup, then what was measured.
SETUP_COLUMNS = ("model", "batch", "seq", "mode", "attn", "recompute", "optimizer_impl")
MEASURED_COLUMNS = (
    "n_params",
    "weights",
    "optimizer",
    "allocated_after_forward",
    "activations_after_forward",
    "grads_after_backward",
    "peak_forward",
    "peak_backward",
    "peak_step",
    "reserved_peak",
)
COLUMNS = (*SETUP_COLUMNS, *MEASURED_COLUMNS, "step_s")
_INT_COLUMNS = ("batch", "seq", *MEASURED_COLUMNS)


@dataclass(frozen=True)
class MeasuredStep:
    """One row of memory.csv: a setup and what the H200 allocated in each phase of its step (bytes)."""

    model: str
    batch: int
    seq: int
    mode: str
    attn: str
    recompute: str
    optimizer_impl: str
    n_params: int
    weights: int
    optimizer: int
    allocated_after_forward: int
    activations_after_forward: int
    grads_after_backward: int
    peak_forward: int
    peak_backward: int
    peak_step: int
    reserved_peak: int

    @property
    def phases(self) -> dict[str, int]:
        """The measured peaks by phase, named as the phase model names them."""
        return {
            "forward": self.peak_forward,
            "backward": self.peak_backward,
            "optimizer_step": self.peak_step,
        }


@lru_cache(maxsize=len(CONFIG_FILES))
def reference_model(name: str) -> ModelSpec:
    """The model the reference measured under `name`, from its published config.json."""
    require(name in CONFIG_FILES, f"The reference has no model called {name!r}.")
    return parse_config(read_json(CONFIG_FILES[name]))


def _row(raw: dict[str, str]) -> MeasuredStep:
    try:
        numbers = {name: int(raw[name]) for name in _INT_COLUMNS}
    except (KeyError, ValueError) as err:
        raise ValueError(f"memory.csv has a row with a missing or non-whole number: {err}.") from None
    return MeasuredStep(
        model=raw.get("model", ""),
        mode=raw.get("mode", ""),
        attn=raw.get("attn", ""),
        recompute=raw.get("recompute", ""),
        optimizer_impl=raw.get("optimizer_impl", ""),
        **numbers,
    )


@lru_cache(maxsize=1)
def measured_steps() -> tuple[MeasuredStep, ...]:
    """Every row of the reference's memory.csv, validated once per process."""
    rows = tuple(_row(raw) for raw in read_csv_rows(f"{FOLDER}/memory.csv"))
    require(bool(rows), "The H200 reference's memory.csv is empty.")
    return rows


def setup_of(row: MeasuredStep, *, stack: str = "hf") -> StepSetup:
    """The phase model's setup for a measured row (AdamW, as the reference ran)."""
    return StepSetup(
        model=reference_model(row.model),
        batch=row.batch,
        seq_len=row.seq,
        precision=row.mode,
        attention=row.attn,
        recompute=row.recompute,
        optimizer="adamw",
        optimizer_impl=row.optimizer_impl,
        stack=stack,
    )


def matching_step(setup: StepSetup) -> MeasuredStep | None:
    """The reference row measured for exactly this setup on the Hugging Face stack, if there is one."""
    if setup.stack != "hf" or setup.optimizer != "adamw" or setup.first_step:
        return None
    for row in measured_steps():
        measured = setup_of(row)
        if same_architecture(measured.model, setup.model) and replace(measured, model=setup.model) == setup:
            return row
    return None


def same_architecture(a: ModelSpec, b: ModelSpec) -> bool:
    """Whether two specs describe the same network, whatever they are called or cite."""
    return replace(a, name="", source="", published_params=None) == replace(
        b, name="", source="", published_params=None
    )


@dataclass(frozen=True)
class RunAMeasurement:
    """One row of run_a.csv: Run A's shape at one batch × sequence, and where the H200 raised OOM."""

    batch: int
    seq: int
    attn: str
    optim: str
    cap_gib: float
    layers: int
    n_params: int
    outcome: str  # "ok", or "step N forward" / "step N backward" / "step N optimizer.step"
    peak_allocated: int
    message: str


@lru_cache(maxsize=1)
def run_a_measurements() -> tuple[RunAMeasurement, ...]:
    """Every row of the reference's run_a.csv."""
    rows = []
    for raw in read_csv_rows(f"{FOLDER}/run_a.csv"):
        try:
            rows.append(
                RunAMeasurement(
                    batch=int(raw["batch"]),
                    seq=int(raw["seq"]),
                    attn=raw["attn"],
                    optim=raw["optim"],
                    cap_gib=float(raw["cap_gib"]),
                    layers=int(raw["layers"]),
                    n_params=int(raw["n_params"]),
                    outcome=raw["outcome"],
                    peak_allocated=int(raw["peak_allocated"]),
                    message=raw["message"],
                )
            )
        except (KeyError, ValueError) as err:
            raise ValueError(f"run_a.csv has a row that cannot be read: {err}.") from None
    return tuple(rows)


@lru_cache(maxsize=1)
def cuda_context_bytes() -> int:
    """What the CUDA context itself takes, outside PyTorch's allocator (nvidia-smi minus reserved)."""
    rows = read_json(f"{FOLDER}/context.json")["rows"]
    after_init = next(r for r in rows if str(r[0]).startswith("after CUDA init"))
    return int(after_init[1]) - int(after_init[4])


def matching_run_a(setup: StepSetup, cap_gib: float) -> RunAMeasurement | None:
    """The H200 run of exactly this Run A setup and cap in run_a.csv (FP32 Adam or SGD), if there is one."""
    if setup.precision != "fp32" or setup.optimizer not in ("adam", "sgd") or setup.stack != "hf":
        return None
    for row in run_a_measurements():
        shape = (row.batch, row.seq, row.attn, row.optim, row.layers, row.cap_gib)
        if shape == (
            setup.batch,
            setup.seq_len,
            setup.attention,
            setup.optimizer,
            setup.model.layers,
            cap_gib,
        ):
            return row
    return None
