"""Train five small models with PyTorch on the CPU and write their logs: the Your run page's examples.

Every number in the logs is measured while training, nothing is drawn by hand. One task for all
five: 32 features, 10 classes, labels given by a fixed random linear "teacher", a small MLP
learner. Each run differs from the healthy one in exactly one way, and writes its log with the
writer people use for that format (csv, json, transformers' TrainerState, torch's SummaryWriter).

Run from the repository root (needs requirements-torch.txt; about a minute on 2 cores):
    python3 -m tools.make_example_logs      # writes data/logs/* and data/logs/manifest.json
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

OUTPUT_DIR = Path(__file__).resolve().parent.parent / "data" / "logs"
FEATURES, CLASSES, HIDDEN = 32, 10, 128
SEED = 17


def _teacher() -> torch.Tensor:
    return torch.randn(FEATURES, CLASSES, generator=torch.Generator().manual_seed(SEED))


def _batch(generator: torch.Generator, size: int, teacher: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Fresh inputs and the teacher's labels for them (an endless stream: nothing can be memorised)."""
    inputs = torch.randn(size, FEATURES, generator=generator)
    return inputs, (inputs @ teacher).argmax(dim=1)


def _model(hidden: int = HIDDEN) -> nn.Module:
    torch.manual_seed(SEED)
    return nn.Sequential(
        nn.Linear(FEATURES, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, CLASSES),
    )


def _rss_mb() -> float:
    """The process's resident memory in MB (10^6 bytes), read from /proc (Linux)."""
    with open("/proc/self/statm") as handle:
        resident_pages = int(handle.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _train_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor, labels: torch.Tensor
) -> dict[str, float]:
    optimizer.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=math.inf)
    optimizer.step()
    accuracy = (logits.argmax(dim=1) == labels).float().mean()
    return {"loss": loss.item(), "grad_norm": grad_norm.item(), "accuracy": accuracy.item()}


def healthy() -> list[dict[str, float]]:
    """Adam at 1e-3 on batches of 64: the loss falls, memory is flat, the loader is instant. CSV."""
    model, teacher, generator = _model(), _teacher(), torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    rows = []
    for step in range(1, 401):
        started = time.perf_counter()
        inputs, labels = _batch(generator, 64, teacher)
        loaded = time.perf_counter()
        logged = _train_step(model, optimizer, inputs, labels)
        finished = time.perf_counter()
        rows.append(
            {
                "step": step,
                "train/loss": logged["loss"],
                "train/accuracy": logged["accuracy"],
                "grad_norm": logged["grad_norm"],
                "lr": 1e-3,
                "data_time": loaded - started,
                "batch_time": finished - started,
                "samples_per_s": 64 / (finished - started),
                "memory_rss_mb": _rss_mb(),
            }
        )
    return rows


def too_high_lr() -> list[dict[str, float]]:
    """SGD with momentum 0.9 at a learning rate of 12 (the healthy run's Adam is at 1e-3). JSON Lines."""
    model, teacher, generator = _model(), _teacher(), torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.SGD(model.parameters(), lr=12.0, momentum=0.9)
    rows = []
    for step in range(1, 101):
        inputs, labels = _batch(generator, 64, teacher)
        logged = _train_step(model, optimizer, inputs, labels)
        rows.append({"step": step, "loss": logged["loss"], "grad_norm": logged["grad_norm"], "lr": 12.0})
    return rows


def shuffled_labels() -> list[dict[str, float]]:
    """The healthy setup, but each batch's labels are shuffled among its inputs; logged every 10 steps
    the way the Hugging Face Trainer logs (mean loss over the interval)."""
    model, teacher, generator = _model(), _teacher(), torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    history: list[dict[str, float]] = []
    window: list[float] = []
    for step in range(1, 401):
        inputs, labels = _batch(generator, 64, teacher)
        labels = labels[torch.randperm(len(labels), generator=generator)]
        logged = _train_step(model, optimizer, inputs, labels)
        window.append(logged["loss"])
        if step % 10 == 0:
            history.append(
                {
                    "epoch": round(step / 400, 4),
                    "grad_norm": logged["grad_norm"],
                    "learning_rate": 1e-3,
                    "loss": round(sum(window) / len(window), 4),
                    "step": step,
                }
            )
            window = []
    return history


def leak() -> list[dict[str, float]]:
    """The healthy setup, but each step also computes a held-out loss without `torch.no_grad()` and keeps
    the tensor in a list to average later: every kept loss holds its graph and the activations in it."""
    model, teacher, generator = _model(hidden=1024), _teacher(), torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    held_out = _batch(generator, 256, teacher)
    kept_losses = []
    rows = []
    for step in range(1, 201):
        inputs, labels = _batch(generator, 64, teacher)
        logged = _train_step(model, optimizer, inputs, labels)
        kept_losses.append(F.cross_entropy(model(held_out[0]), held_out[1]))  # the bug: graph kept alive
        rows.append({"step": step, "train/loss": logged["loss"], "memory/rss_mb": _rss_mb()})
    return rows


class SlowDecode(torch.utils.data.IterableDataset):
    """Samples stored as JSON text of a 32×32 'image', decoded and pooled to 32 features per sample."""

    def __init__(self, teacher: torch.Tensor, count: int) -> None:
        self.teacher, self.count = teacher, count

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        generator = torch.Generator().manual_seed(SEED)
        for _ in range(self.count):
            image = torch.randn(32, 32, generator=generator)
            text = json.dumps(image.tolist())  # what the loader reads from disk
            pixels = torch.tensor(json.loads(text))
            features = pixels.reshape(32, 32).mean(dim=1) * math.sqrt(32)
            yield features, (features @ self.teacher).argmax()


def starved() -> list[dict[str, float]]:
    """The healthy model, fed by a DataLoader in the main process (num_workers=0) that decodes every
    sample from JSON text; data_time is the wait for the next batch, batch_time the whole step."""
    model, teacher = _model(), _teacher()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(SlowDecode(teacher, 64 * 40), batch_size=64, num_workers=0)
    rows = []
    batches = iter(loader)
    for step in range(1, 41):
        started = time.perf_counter()
        inputs, labels = next(batches)
        loaded = time.perf_counter()
        logged = _train_step(model, optimizer, inputs, labels)
        finished = time.perf_counter()
        rows.append(
            {
                "step": step,
                "loss": logged["loss"],
                "data_time": loaded - started,
                "batch_time": finished - started,
                "samples_per_s": 64 / (finished - started),
            }
        )
    return rows


def _write_csv(rows: list[dict[str, float]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _write_json_lines(rows: list[dict[str, float]], path: Path) -> None:
    # json.dumps writes nan as NaN, which Python's json (and the lab's reader) reads back.
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _write_trainer_state(history: list[dict[str, float]], path: Path) -> None:
    from transformers import TrainerState

    last = int(history[-1]["step"])
    TrainerState(
        epoch=1.0,
        global_step=last,
        max_steps=last,
        logging_steps=10,
        train_batch_size=64,
        num_train_epochs=1,
        log_history=history,
    ).save_to_json(str(path))


def _write_tensorboard(rows: list[dict[str, float]], path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as folder:
        writer = SummaryWriter(folder)
        for row in rows:
            for tag, value in row.items():
                if tag != "step":
                    writer.add_scalar(tag, value, int(row["step"]), walltime=0.0)  # no clock in the file
        writer.close()
        [written] = Path(folder).glob("events.out.tfevents.*")
        path.write_bytes(written.read_bytes())


EXAMPLES: list[dict[str, Any]] = [
    {
        "file": "healthy.csv",
        "title": "Healthy run",
        "train": healthy,
        "write": _write_csv,
        "intended": "healthy",
        "measured": "loss, batch accuracy, gradient norm, data and step time, samples/s, process RSS (MB)",
    },
    {
        "file": "too_high_lr.jsonl",
        "title": "Learning rate too high",
        "train": too_high_lr,
        "write": _write_json_lines,
        "intended": "numerical",
        "measured": "loss and gradient norm every step",
    },
    {
        "file": "shuffled_labels_trainer_state.json",
        "title": "Labels shuffled",
        "train": shuffled_labels,
        "write": _write_trainer_state,
        "intended": "correctness",
        "measured": "mean loss over each 10 steps and the gradient norm, as the Hugging Face Trainer logs",
    },
    {
        "file": "leak.tfevents",
        "title": "An MLP logged to TensorBoard",
        "train": leak,
        "write": _write_tensorboard,
        "intended": "resource",
        "measured": "training loss and the process's resident memory (RSS, MB from /proc/self/statm) every "
        "step; on the CPU there is no GPU memory counter, and RSS includes Python and PyTorch themselves",
    },
    {
        "file": "slow_loader.csv",
        "title": "Starved by the data loader",
        "train": starved,
        "write": _write_csv,
        "intended": "throughput",
        "measured": "loss, time waiting for the next batch, whole step time, samples/s",
    },
]


def main() -> None:
    """Train every example, write its log and the manifest that says how each was made."""
    torch.set_num_threads(1)  # the same arithmetic on every machine; timings are the only thing that varies
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    manifest = []
    for example in EXAMPLES:
        train: Callable[[], list[dict[str, float]]] = example["train"]
        started = time.perf_counter()
        rows = train()
        example["write"](rows, OUTPUT_DIR / example["file"])
        print(f"{example['file']}: {len(rows)} rows in {time.perf_counter() - started:.1f} s")
        manifest.append(
            {
                "file": example["file"],
                "title": example["title"],
                "intended": example["intended"],
                "classes": CLASSES,
                "how": " ".join((train.__doc__ or "").split()),
                "measured": example["measured"],
            }
        )
    made_with = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "seed": SEED,
        "task": f"{FEATURES} features, {CLASSES} classes from a fixed random linear teacher; "
        f"MLP {FEATURES}-{HIDDEN}-{HIDDEN}-{CLASSES} (1024 wide in the leak run), CPU, 1 thread",
        "script": "tools/make_example_logs.py",
    }
    (OUTPUT_DIR / "manifest.json").write_text(
        json.dumps({"made_with": made_with, "examples": manifest}, indent=2) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
