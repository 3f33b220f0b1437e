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

Fine-tuning is measured the same way, the model wrapped or quantized as tools/finetune_model.py says
(LoRA, QLoRA, frozen blocks, AdamW8bit), the optimizer given only what trains; the row adds
tools/finetune_csv.py's columns (method, rank, targets, ..., trainable_params).

Run from the repository root on a machine with a CUDA GPU (needs requirements-torch.txt):
    python3 -m tools.measure_memory --gpu                     # re-measures the reference's setups
    python3 -m tools.measure_memory --gpu --output my.csv
    python3 -m tools.measure_memory --run-a                   # re-measures run_a.csv's setups
    python3 -m tools.measure_gpu --model Llama-3.2-1B --batch 2 --seq 2048 --method qlora \
        --lora-rank 16 --lora-targets all-linear              # one setup, to test-artifacts/gpu/finetune.csv
    python3 -m tools.measure_gpu --plan finetune --output X   # full, LoRA and QLoRA for four models
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from core.datafiles import data_path, read_csv_rows, require
from core.memory.finetune import LORA_TARGETS
from core.memory.reference import COLUMNS, FOLDER, SETUP_COLUMNS
from core.memory.setup import METHODS, TrainingMethod
from core.model_config import parse_config
from tools.finetune_csv import FINETUNE_COLUMNS, MODEL_CONFIGS, row_label
from tools.finetune_model import (
    OPTIMIZERS,
    freeze,
    frozen_names,
    hf_config,
    make_optimizer,
    nf4_model,
    parameter_counts,
    prepare_for_kbit,
    trained,
    with_lora,
)

GPU_OUTPUT_PATH = Path("test-artifacts/gpu/memory.csv")  # compare it with the reference before committing it
FINETUNE_OUTPUT_PATH = Path("test-artifacts/gpu/finetune.csv")


@dataclass(frozen=True)
class GpuSetup:
    """One row to measure: a model from MODEL_CONFIGS, how its step is run, and what it trains."""

    model: str
    batch: int
    seq: int
    mode: str  # fp32, bf16 (model cast, AdamW state in BF16) or amp (autocast BF16 over FP32 weights)
    attn: str  # eager or sdpa
    recompute: str  # none or full
    optimizer_impl: str  # foreach, fused or loop
    training: TrainingMethod = TrainingMethod()  # full, LoRA or QLoRA; frozen blocks
    optimizer: str = "adamw"  # adamw (torch.optim.AdamW) or adamw8bit (bitsandbytes)
    prepare_kbit: bool = False  # QLoRA: run peft's prepare_model_for_kbit_training

    def __post_init__(self) -> None:
        t = self.training
        require((t.gpus, t.sharding, t.tensor_parallel) == (1, "none", 1), "The measurement runs on one GPU.")
        require(
            t.method != "qlora" or self.mode == "bf16",
            "QLoRA computes in BF16 over its NF4 base; measure it with mode bf16.",
        )
        require(self.prepare_kbit is False or t.method == "qlora", "prepare_kbit is a QLoRA setting.")
        require(
            self.optimizer in OPTIMIZERS,
            f"The optimizer must be one of {', '.join(OPTIMIZERS)}, not {self.optimizer!r}.",
        )
        require(
            self.optimizer != "adamw8bit" or self.optimizer_impl == "loop",
            "bitsandbytes' AdamW8bit steps one tensor at a time: its optimizer_impl is loop.",
        )


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
    """The published config.json of a model the tool measures, as committed under data/."""
    require(model in MODEL_CONFIGS, f"No published config is committed for {model!r}.")
    return dict(json.loads(data_path(MODEL_CONFIGS[model]).read_text(encoding="utf-8")))


def build_model(setup: GpuSetup, device: torch.device, raw: Mapping[str, Any]) -> torch.nn.Module:
    """The model of config `raw` with random weights on `device`, trained as `setup` says: in the dtype of
    its mode (QLoRA: NF4 linear layers), LoRA-wrapped or with its first blocks frozen."""
    from transformers import AutoModelForCausalLM  # test-only dependency

    training = setup.training
    spec = parse_config(dict(raw))
    require(
        training.freeze_blocks <= spec.layers,
        f"{setup.model} has {spec.layers} blocks; {training.freeze_blocks} cannot be frozen.",
    )
    model: Any  # a transformers model, then peft's wrapper of it
    if training.method == "qlora":
        model = nf4_model(raw, device, setup.attn)
    else:
        dtype = torch.bfloat16 if setup.mode == "bf16" else torch.float32
        with device:
            model = AutoModelForCausalLM.from_config(
                hf_config(raw), attn_implementation=setup.attn, dtype=dtype
            )
    if setup.recompute == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if setup.prepare_kbit:
        model = prepare_for_kbit(model)
    if training.adapted:
        model = with_lora(model, spec, training)
    freeze(model, frozen_names(spec, training.freeze_blocks))
    model.train()
    return model


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
    release: Callable[[], None] = lambda: None  # hand cached, unallocated blocks back to the device


CUDA_READERS = Readers(
    allocated=torch.cuda.memory_allocated,
    peak=torch.cuda.max_memory_allocated,
    reserved_peak=torch.cuda.max_memory_reserved,
    reset_peak=torch.cuda.reset_peak_memory_stats,
    synchronize=torch.cuda.synchronize,
    release=torch.cuda.empty_cache,
)


def measure_setup(
    setup: GpuSetup,
    *,
    device: torch.device,
    readers: Readers = CUDA_READERS,
    config: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """One row of FINETUNE_COLUMNS for `setup` (its published config unless `config` is given), every
    column measured on the second of two steps; memory.csv's columns come first."""
    read = readers
    read.synchronize()
    start = read.allocated()
    raw = config if config is not None else published_config(setup.model)
    model = build_model(setup, device, raw)
    read.synchronize()
    if setup.training.method == "qlora":
        read.release()  # the loader's warm-up reservation is loading, not training
    weights = read.allocated() - start
    optimizer = make_optimizer(trained(model), setup.optimizer, setup.optimizer_impl)
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
    base_params, trainable_params = parameter_counts(model)
    row = {name: str(getattr(setup, name)) for name in SETUP_COLUMNS}
    row.update(
        n_params=str(base_params),
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
    row.update(training_columns(setup), trainable_params=str(trainable_params))
    return row


def describe(setup: GpuSetup) -> str:
    """The setup in a few words, as its CSV row would be labelled."""
    return row_label({**{n: str(getattr(setup, n)) for n in SETUP_COLUMNS}, **training_columns(setup)})


def training_columns(setup: GpuSetup) -> dict[str, str]:
    """The fine-tuning setup's columns (LoRA's rank and targets blank for full training)."""
    t = setup.training
    return {
        "method": t.method,
        "lora_rank": str(t.lora_rank) if t.adapted else "",
        "lora_targets": t.lora_targets if t.adapted else "",
        "freeze_blocks": str(t.freeze_blocks),
        "optim": setup.optimizer,
        "prepare_kbit": "yes" if setup.prepare_kbit else "no",
    }


@contextlib.contextmanager
def _fresh_device(readers: Readers = CUDA_READERS) -> Iterator[None]:
    """Free everything the previous setup left, before and after the next (peft's wrappers hold reference
    cycles, which only the collector frees)."""
    gc.collect()
    readers.release()
    yield
    gc.collect()
    readers.release()


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
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def measure_setups(
    setups: tuple[GpuSetup, ...],
    output: Path,
    *,
    device: torch.device,
    readers: Readers = CUDA_READERS,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Measure each setup and write its row of FINETUNE_COLUMNS to `output` at once, so a run cut short
    keeps what it measured; a setup that fails is skipped and its failure returned as one line.
    `configs` replaces a model's published config (the CPU tests narrow them)."""
    failures = []
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FINETUNE_COLUMNS)
        writer.writeheader()
        for setup in setups:
            config = None if configs is None else configs[setup.model]
            try:
                with _fresh_device(readers):
                    row = measure_setup(setup, device=device, readers=readers, config=config)
            except Exception as error:  # one broken setup must not cost the others their device time
                failures.append(f"{describe(setup)}: {type(error).__name__}: {str(error).splitlines()[0]}")
                print(failures[-1], file=sys.stderr, flush=True)
                continue
            writer.writerow(row)
            handle.flush()
            print(f"{describe(setup)}: peak {int(row['peak_step']) / GIB:.2f} GiB", flush=True)
    return failures


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


# --plan finetune: LoRA and QLoRA beside full training on the same card, four models at two shapes each,
# in BF16 with SDPA (how people fine-tune). Sized for one device call (tools/measure_finetune.sh); not yet
# run on a GPU: the whole plan narrowed to width 64 runs on a shared 2-core CPU in under four minutes.
# The first shape of each reference model is one memory.csv measured, so full training checks the card.
PLAN_SHAPES = {
    "GPT-2 small": ((4, 1024), (2, 512)),  # 1,024 learned positions
    "Qwen2.5-0.5B": ((4, 1024), (1, 2048)),
    "Llama-3.2-1B": ((2, 2048), (8, 512)),
    "Qwen3-0.6B": ((2, 2048), (4, 512)),
}
PLAN_METHODS = (
    TrainingMethod(),
    TrainingMethod("lora", 16, "attention"),
    TrainingMethod("lora", 16, "all-linear"),
    TrainingMethod("qlora", 16, "all-linear"),
)


def finetune_plan() -> tuple[GpuSetup, ...]:
    """Every setup --plan finetune measures, and three variants of one: frozen blocks, AdamW8bit, QLoRA
    prepared by peft."""
    setups = [
        GpuSetup(model, batch, seq, "bf16", "sdpa", "none", "foreach", training)
        for model, shapes in PLAN_SHAPES.items()
        for batch, seq in shapes
        for training in PLAN_METHODS
    ]
    llama = GpuSetup("Llama-3.2-1B", 2, 2048, "bf16", "sdpa", "none", "foreach")
    setups += [
        replace(llama, training=TrainingMethod(freeze_blocks=12)),
        replace(llama, optimizer="adamw8bit", optimizer_impl="loop"),
        replace(llama, training=PLAN_METHODS[-1], prepare_kbit=True),
    ]
    return tuple(setups)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.measure_gpu",
        description="Measure one training step phase by phase on a CUDA GPU: full, LoRA or QLoRA.",
    )
    parser.add_argument("--plan", choices=("finetune",), help="measure a prepared list of setups")
    parser.add_argument("--model", choices=MODEL_CONFIGS, help="a model whose config.json is committed")
    parser.add_argument("--batch", type=int, help="micro-batch (sequences)")
    parser.add_argument("--seq", type=int, help="sequence length (tokens)")
    parser.add_argument("--mode", default="bf16", choices=("fp32", "bf16", "amp"))
    parser.add_argument("--attn", default="sdpa", choices=("eager", "sdpa"))
    parser.add_argument("--recompute", default="none", choices=("none", "full"))
    parser.add_argument(
        "--optimizer-impl", choices=("foreach", "fused", "loop"), help="default: foreach (AdamW8bit: loop)"
    )
    parser.add_argument("--optimizer", default="adamw", choices=OPTIMIZERS)
    parser.add_argument("--method", default="full", choices=METHODS, help="what is trained")
    parser.add_argument("--lora-rank", type=int, help="LoRA's rank r (--method lora or qlora; default 16)")
    parser.add_argument("--lora-targets", choices=LORA_TARGETS, help="layers LoRA adapts (default attention)")
    parser.add_argument(
        "--freeze-blocks", type=int, default=0, help="full training: freeze the first K blocks"
    )
    parser.add_argument(
        "--prepare-kbit", action="store_true", help="QLoRA: run peft's prepare_model_for_kbit_training"
    )
    parser.add_argument("--output", type=Path, default=FINETUNE_OUTPUT_PATH, help="where to write the CSV")
    return parser


def _one_setup(args: argparse.Namespace) -> GpuSetup:
    require(None not in (args.model, args.batch, args.seq), "Name --model, --batch and --seq, or a --plan.")
    require(
        args.method != "full" or (args.lora_rank, args.lora_targets) == (None, None),
        "--lora-rank and --lora-targets need --method lora or qlora.",
    )
    training = TrainingMethod(
        method=args.method,
        lora_rank=16 if args.lora_rank is None else args.lora_rank,
        lora_targets=args.lora_targets or "attention",
        freeze_blocks=args.freeze_blocks,
    )
    impl = args.optimizer_impl or ("loop" if args.optimizer == "adamw8bit" else "foreach")
    return GpuSetup(
        args.model,
        args.batch,
        args.seq,
        args.mode,
        args.attn,
        args.recompute,
        impl,
        training,
        args.optimizer,
        args.prepare_kbit,
    )


def parse_setups(argv: Sequence[str] | None = None) -> tuple[tuple[GpuSetup, ...], Path]:
    """The setups the command line asks for and where their CSV goes; bad input exits with status 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.plan:
            require(args.model is None, "--plan measures its own list of models; leave out --model.")
            return finetune_plan(), args.output
        return (_one_setup(args),), args.output
    except ValueError as err:
        parser.error(str(err))


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the setups the command line asks for; the exit status is 1 if any of them failed."""
    setups, output = parse_setups(argv)
    if not torch.cuda.is_available():
        raise SystemExit("Measuring a training step needs a CUDA GPU; none is visible to PyTorch.")
    failures = measure_setups(setups, output, device=torch.device("cuda", 0))
    print(f"Wrote {len(setups) - len(failures)} of {len(setups)} setups to {output}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
