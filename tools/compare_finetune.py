"""Set a fine-tuning measurement (the CSV tools/measure_gpu.py writes) beside `python -m core.estimate`.

Each row's setup is put to the estimate's command line as it stands (`--method`, `--lora-rank`,
`--lora-targets`, `--freeze-blocks` and `--optimizer` where the row uses them, `--json`), and its answer
is set beside what was measured: trainable parameters, the weights after building
(`model_state_per_gpu.weights`: the frozen base as stored and the trainable weights), the optimizer's
state (`optimizer_state` and `master_weights`), and the peaks of forward, backward and the optimizer step
(`phases`) where the estimate gives them. A setup the estimate refuses is listed with its one-line
refusal. Nothing is fitted: the ratios are for reading.

    python -m tools.compare_finetune data/reference/<folder>/finetune.csv
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import estimate
from core.datafiles import data_path, require
from tools.finetune_csv import FINETUNE_COLUMNS, MODEL_CONFIGS, row_label

PHASE_COLUMNS = {"forward": "peak_forward", "backward": "peak_backward", "optimizer_step": "peak_step"}


@dataclass(frozen=True)
class Check:
    """One quantity, measured and estimated (parameters, or bytes)."""

    name: str
    measured: int
    estimated: int

    @property
    def ratio(self) -> float:
        """Estimated over measured: under 1 where the estimate runs short."""
        return self.estimated / self.measured if self.measured else float("inf")


@dataclass(frozen=True)
class RowComparison:
    """A measured row, what the estimate said of it, and why a quantity is missing."""

    label: str
    checks: tuple[Check, ...]
    note: str  # the estimate's refusal, or what it does not give for this setup; "" when all is compared


def estimate_argv(row: Mapping[str, str]) -> list[str]:
    """`python -m core.estimate`'s arguments for the row's setup."""
    require(row["model"] in MODEL_CONFIGS, f"No published config is committed for {row['model']!r}.")
    argv = [
        f"--config={data_path(MODEL_CONFIGS[row['model']])}",
        f"--batch={row['batch']}",
        f"--seq={row['seq']}",
        f"--precision={row['mode']}",
        f"--attention={row['attn']}",
        f"--recompute={row['recompute']}",
        f"--optimizer-impl={row['optimizer_impl']}",
        f"--method={row['method']}",
        "--json",
    ]
    if row["lora_rank"]:
        argv += [f"--lora-rank={row['lora_rank']}", f"--lora-targets={row['lora_targets']}"]
    if row["freeze_blocks"] not in ("", "0"):
        argv.append(f"--freeze-blocks={row['freeze_blocks']}")
    if row["optim"] != "adamw":
        argv.append(f"--optimizer={row['optim']}")
    return argv


def run_estimate(argv: Sequence[str]) -> dict[str, Any] | str:
    """The estimate's JSON for `argv`, or its one-line refusal."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            estimate.main(list(argv))
    except SystemExit:
        return err.getvalue().strip()
    return dict(json.loads(out.getvalue()))


def _checks(row: Mapping[str, str], answer: Mapping[str, Any]) -> tuple[Check, ...]:
    state = answer["model_state_per_gpu"]
    checks = [
        Check("trainable_params", int(row["trainable_params"]), int(answer["trainable_parameters"])),
        Check("weights", int(row["weights"]), int(state["weights"])),
        Check(
            "optimizer", int(row["optimizer"]), int(state["optimizer_state"]) + int(state["master_weights"])
        ),
    ]
    phases = answer.get("phases", {})
    checks += [
        Check(p, int(row[column]), int(phases[p])) for p, column in PHASE_COLUMNS.items() if p in phases
    ]
    return tuple(checks)


def compare_row(row: Mapping[str, str]) -> RowComparison:
    """The row beside the estimate of its setup."""
    answer = run_estimate(estimate_argv(row))
    if isinstance(answer, str):
        return RowComparison(row_label(row), (), answer)
    note = "" if "phases" in answer else "the estimate gives no phases for this setup yet"
    return RowComparison(row_label(row), _checks(row, answer), note)


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a fine-tuning CSV, its columns checked."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    require(
        tuple(reader.fieldnames or ()) == FINETUNE_COLUMNS,
        f"{path} does not have the columns tools/measure_gpu.py writes.",
    )
    return rows


def report(comparisons: Sequence[RowComparison]) -> str:
    """The comparison as text: one block a row, measured, estimated and their ratio for each quantity."""
    lines = []
    for c in comparisons:
        lines.append(c.label + (f"  ({c.note})" if c.note else ""))
        lines += [
            f"    {k.name:<18} measured {k.measured:>16,}  estimated {k.estimated:>16,}  ×{k.ratio:.3f}"
            for k in c.checks
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison of one CSV."""
    parser = argparse.ArgumentParser(prog="python -m tools.compare_finetune", description=__doc__)
    parser.add_argument("csv", type=Path, help="a CSV from python -m tools.measure_gpu")
    args = parser.parse_args(argv)
    print(report([compare_row(row) for row in read_rows(args.csv)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
