"""Measure one training step of Hugging Face models on a CUDA GPU, phase by phase.

This is how data/reference/h200-2026-11-30/memory.csv was measured (its README describes it): each
model is built from its published config.json with random weights, directly on the GPU, in the dtype
of its mode, `use_cache = False`, `model.train()`. Random token ids are both `input_ids` and `labels`,
so the loss is the model's own `ForCausalLMLoss`. One full step runs first so the optimizer state
exists; the second is measured with `torch.cuda.memory_allocated()` / `max_memory_allocated()`, the
peak reset just before it. The loop keeps only `loss`.

`measure_run_a` measures run_a.csv the same way: Run A's shape on a process capped with
`torch.cuda.set_per_process_memory_fraction`, up to two full steps, and the phase in which the first
`torch.OutOfMemoryError` was raised, with the first line of PyTorch's message.

Run from the repository root on a machine with a CUDA GPU (needs requirements-torch.txt):
    python3 -m tools.measure_memory --gpu                     # re-measures the reference's setups
    python3 -m tools.measure_memory --gpu --output my.csv
    python3 -m tools.measure_memory --run-a                   # re-measures run_a.csv's setups
"""

from __future__ import annotations

import contextlib
import csv
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.datafiles import data_path, read_csv_rows
from core.memory.reference import COLUMNS, CONFIG_FILES, FOLDER, SETUP_COLUMNS

GPU_OUTPUT_PATH = Path("test-artifacts/gpu/memory.csv")  # compare it with the reference before committing it


@dataclass(frozen=True)
class GpuSetup:
    """One row to measure: a model from CONFIG_FILES and how its step is run."""

    model: str
    batch: int
    seq: int
    mode: str  # fp32, bf16 (model cast, AdamW state in BF16) or amp (autocast BF16 over FP32 weights)
    attn: str  # eager or sdpa
    recompute: str  # none or full
    optimizer_impl: str  # foreach, fused or loop


def reference_setups() -> tuple[GpuSetup, ...]:
    """The setups of the committed reference, to measure them again."""
    rows = read_csv_rows(f"{FOLDER}/memory.csv")
    return tuple(
        GpuSetup(
            model=r["model"],
            batch=int(r["batch"]),
            seq=int(r["seq"]),
            mode=r["mode"],
            attn=r["attn"],
            recompute=r["recompute"],
            optimizer_impl=r["optimizer_impl"],
        )
        for r in rows
    )


def published_config(model: str) -> dict[str, Any]:
    """The published config.json of a reference model, as committed in data/configs/."""
    return dict(json.loads(data_path(CONFIG_FILES[model]).read_text(encoding="utf-8")))


def build_model(setup: GpuSetup, device: torch.device, raw: Mapping[str, Any]) -> torch.nn.Module:
    """The model of config `raw` with random weights, built on `device` in the dtype of `setup`'s mode."""
    from transformers import AutoConfig, AutoModelForCausalLM  # test-only dependency

    config = AutoConfig.for_model(**dict(raw))
    config.use_cache = False
    dtype = torch.bfloat16 if setup.mode == "bf16" else torch.float32
    with device:
        model = AutoModelForCausalLM.from_config(config, attn_implementation=setup.attn, torch_dtype=dtype)
    if setup.recompute == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    return model


def _optimizer(model: torch.nn.Module, impl: str) -> torch.optim.Optimizer:
    if impl == "fused":
        return torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    return torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=impl == "foreach")


def _autocast(mode: str, device: torch.device) -> contextlib.AbstractContextManager[object]:
    if mode == "amp":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


@dataclass(frozen=True)
class Readers:
    """The allocator readings a measurement takes (CUDA's, or stand-ins for a dry run on the CPU)."""

    allocated: Callable[[], int]
    peak: Callable[[], int]
    reserved_peak: Callable[[], int]
    reset_peak: Callable[[], None]
    synchronize: Callable[[], None]


CUDA_READERS = Readers(
    allocated=torch.cuda.memory_allocated,
    peak=torch.cuda.max_memory_allocated,
    reserved_peak=torch.cuda.max_memory_reserved,
    reset_peak=torch.cuda.reset_peak_memory_stats,
    synchronize=torch.cuda.synchronize,
)


def measure_setup(
    setup: GpuSetup,
    *,
    device: torch.device,
    readers: Readers = CUDA_READERS,
    config: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """One row of memory.csv for `setup` (its published config unless `config` is given), every column
    measured on the second of two steps."""
    read = readers
    read.synchronize()
    start = read.allocated()
    raw = config if config is not None else published_config(setup.model)
    model = build_model(setup, device, raw)
    read.synchronize()
    weights = read.allocated() - start
    optimizer = _optimizer(model, setup.optimizer_impl)
    ids = torch.randint(0, int(raw["vocab_size"]), (setup.batch, setup.seq), device=device)

    def forward() -> torch.Tensor:
        with _autocast(setup.mode, device):
            return model(input_ids=ids, labels=ids).loss  # the output object is dropped at once

    loss = forward()
    loss.backward()
    before_step = read.allocated()
    optimizer.step()
    read.synchronize()
    optimizer_bytes = read.allocated() - before_step
    optimizer.zero_grad(set_to_none=True)
    del loss

    read.synchronize()
    read.reset_peak()
    began = time.perf_counter()
    before_forward = read.allocated()
    loss = forward()
    read.synchronize()
    after_forward, peak_forward = read.allocated(), read.peak()
    loss.backward()
    read.synchronize()
    after_backward, peak_backward = read.allocated(), read.peak()
    optimizer.step()
    read.synchronize()
    peak_step, reserved = read.peak(), read.reserved_peak()
    step_s = time.perf_counter() - began
    optimizer.zero_grad(set_to_none=True)
    row = {name: str(getattr(setup, name)) for name in SETUP_COLUMNS}
    row.update(
        n_params=str(sum(p.numel() for p in model.parameters())),
        weights=str(weights),
        optimizer=str(optimizer_bytes),
        allocated_after_forward=str(after_forward),
        activations_after_forward=str(after_forward - before_forward),
        grads_after_backward=str(after_backward - before_forward),
        peak_forward=str(peak_forward),
        peak_backward=str(peak_backward),
        peak_step=str(peak_step),
        reserved_peak=str(reserved),
        step_s=f"{step_s:.3f}",
    )
    return row


@contextlib.contextmanager
def _fresh_device() -> Iterator[None]:
    """Free everything the previous setup left, before and after the next."""
    torch.cuda.empty_cache()
    yield
    torch.cuda.empty_cache()


def measure_reference(output: Path) -> int:
    """Measure every reference setup on the first CUDA device and write memory.csv's columns to `output`."""
    if not torch.cuda.is_available():
        raise SystemExit("--gpu needs a CUDA GPU; none is visible to PyTorch.")
    device = torch.device("cuda", 0)
    rows = []
    for setup in reference_setups():
        with _fresh_device():
            rows.append(measure_setup(setup, device=device))
        print(f"{setup}: peak {int(rows[-1]['peak_step']):,} bytes")
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


# run_a.csv: where Run A's shape first dies on a capped card (data/reference/…/README.md, "run_a.csv").
RUN_A_COLUMNS = (
    "batch",
    "seq",
    "attn",
    "optim",
    "cap_gib",
    "layers",
    "n_params",
    "outcome",
    "peak_allocated",
    "message",
)
RUN_A_OUTPUT_PATH = Path("test-artifacts/gpu/run_a.csv")  # compare it with the reference before committing it
STEPS = 2  # a run that gets through two steps runs on: step 2 repeats every later one
GIB = 2**30


@dataclass(frozen=True)
class RunASetup:
    """One run of Run A's shape: micro-batch × sequence, attention, optimizer, cap and blocks."""

    batch: int
    seq: int
    attn: str  # eager or sdpa
    optim: str  # adam (torch.optim.Adam, foreach) or sgd (plain SGD: no state)
    cap_gib: float
    layers: int


def run_a_setups() -> tuple[RunASetup, ...]:
    """The setups of the committed run_a.csv, to measure them again."""
    return tuple(
        RunASetup(
            batch=int(r["batch"]),
            seq=int(r["seq"]),
            attn=r["attn"],
            optim=r["optim"],
            cap_gib=float(r["cap_gib"]),
            layers=int(r["layers"]),
        )
        for r in read_csv_rows(f"{FOLDER}/run_a.csv")
    )


def run_a_config(setup: RunASetup) -> dict[str, Any]:
    """Run A's config.json (data/run_a.json) with the setup's blocks, and positions for its sequence."""
    raw = dict(json.loads(data_path("run_a.json").read_text(encoding="utf-8"))["scenario"]["config"])
    raw.update(n_layer=setup.layers, n_positions=max(int(raw["n_positions"]), setup.seq))
    return raw


def _phases(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, ids: torch.Tensor
) -> tuple[tuple[str, Callable[[], None]], ...]:
    """One training step as three phases, in the names run_a.csv gives them."""
    held: dict[str, torch.Tensor] = {}

    def forward() -> None:
        held["loss"] = model(input_ids=ids, labels=ids).loss

    def backward() -> None:
        held.pop("loss").backward()

    def step() -> None:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return (("forward", forward), ("backward", backward), ("optimizer.step", step))


def measure_first_failure(
    setup: RunASetup,
    *,
    device: torch.device,
    readers: Readers = CUDA_READERS,
    config: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """One row of run_a.csv: up to two steps of `setup`, and the phase of the first out-of-memory error.

    The caller caps the process (`cap_process`) before building anything: the cap limits what PyTorch's
    allocator reserves, so the CUDA context stays outside it, as it did on the H200."""
    raw = config if config is not None else run_a_config(setup)
    model = build_model(
        GpuSetup("Run A", setup.batch, setup.seq, "fp32", setup.attn, "none", "foreach"), device, raw
    )
    optimizer: torch.optim.Optimizer = (
        torch.optim.Adam(model.parameters(), lr=1e-5)
        if setup.optim == "adam"
        else torch.optim.SGD(model.parameters(), lr=1e-5)
    )
    ids = torch.randint(0, int(raw["vocab_size"]), (setup.batch, setup.seq), device=device)
    outcome, message = "ok", ""
    readers.reset_peak()
    try:
        for step in range(1, STEPS + 1):
            for phase, run in _phases(model, optimizer, ids):
                outcome = f"step {step} {phase}"
                run()
                readers.synchronize()
        outcome = "ok"
    except torch.OutOfMemoryError as error:
        message = str(error).splitlines()[0]
    row = {
        "batch": str(setup.batch),
        "seq": str(setup.seq),
        "attn": setup.attn,
        "optim": setup.optim,
        "cap_gib": f"{setup.cap_gib:.1f}",
        "layers": str(setup.layers),
        "n_params": str(sum(p.numel() for p in model.parameters())),
        "outcome": outcome,
        "peak_allocated": str(readers.peak()),
        "message": message,
    }
    del model, optimizer, ids
    return row


def cap_process(cap_gib: float, device: torch.device) -> None:
    """Cap what this process's allocator may reserve at `cap_gib` GiB."""
    total = torch.cuda.get_device_properties(device).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_gib * GIB / total), device)


def measure_run_a(output: Path, setups: tuple[RunASetup, ...] | None = None) -> int:
    """Measure where each Run A setup first dies on the first CUDA device; write run_a.csv's columns."""
    if not torch.cuda.is_available():
        raise SystemExit("--run-a needs a CUDA GPU; none is visible to PyTorch.")
    device = torch.device("cuda", 0)
    rows = []
    for setup in setups or run_a_setups():
        with _fresh_device():
            cap_process(setup.cap_gib, device)
            rows.append(measure_first_failure(setup, device=device))
        print(f"{setup}: {rows[-1]['outcome']}")
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RUN_A_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
