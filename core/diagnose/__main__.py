"""Command line: `python -m core.diagnose LOG [--classes N | --vocab N] [--device-gb X] [--json]`.

Prints each failure kind's verdict with its evidence and the primary kind. A file it cannot read
gets one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import Diagnosis, as_json, column_lines, diagnose_bytes
from core.diagnose.formats import MAX_BYTES
from core.gpus import gpu, peak_tflops

EXIT_UNREADABLE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core.diagnose", description=__doc__.splitlines()[0])
    parser.add_argument(
        "log", type=Path, help="CSV, JSON Lines, W&B CSV export, trainer_state.json or tfevents"
    )
    chance = parser.add_mutually_exclusive_group()
    chance.add_argument("--classes", type=int, help="number of classes (chance loss is ln N)")
    chance.add_argument("--vocab", type=int, help="vocabulary size (chance loss is ln N)")
    parser.add_argument("--device-gb", type=float, help="device memory in GB, to compare the peak with")
    parser.add_argument("--params", type=float, help="parameter count, for MFU from tokens/s")
    parser.add_argument("--gpu", help="GPU name from data/gpus.csv, for MFU (e.g. 'H100 SXM')")
    parser.add_argument("--dtype", default="bf16", help="number format of the matrix work (default bf16)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _text(diagnosis: Diagnosis, lines: tuple[str, ...], name: str, fmt: str) -> str:
    out = [f"{name}: {fmt}", *(f"  {line}" for line in lines), ""]
    for f in diagnosis.findings:
        out.append(f"{f.kind:<12} {f.verdict:<9} {f.summary}")
        out += [f"    - {line}" for line in f.evidence]
        out += [f"    missing: {line}" for line in f.missing]
        if f.verdict != "no sign":
            out.append(f"    next: {f.next_step} (see {f.page_title})")
    out += ["", f"primary: {diagnosis.primary}", diagnosis.summary]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        peak = peak_tflops(gpu(args.gpu), args.dtype) if args.gpu else None
        context = RunContext(
            classes=args.classes,
            vocab=args.vocab,
            device_gb=args.device_gb,
            params=args.params,
            peak_tflops=peak,
        )
        if args.log.stat().st_size > MAX_BYTES:
            raise ValueError(f"The file is larger than {MAX_BYTES / 1e6:g} MB, the most the lab reads.")
        table, run, diagnosis = diagnose_bytes(args.log.read_bytes(), args.log.name, context)
    except FileNotFoundError:
        print(f"{args.log}: there is no file at this path.", file=sys.stderr)
        return EXIT_UNREADABLE
    except (OSError, ValueError) as err:
        print(f"{args.log}: {err}".replace("\n", " "), file=sys.stderr)
        return EXIT_UNREADABLE
    if args.json:
        print(json.dumps({"file": str(args.log), **as_json(run, diagnosis)}, indent=2))
    else:
        print(_text(diagnosis, column_lines(run), str(args.log), table.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
