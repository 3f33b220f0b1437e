"""Command-line memory estimate of one training step from a Hugging Face config.json.

    python -m core.estimate --config FILE --batch B --seq S --precision amp --attention sdpa \
        --recompute none --optimizer-impl foreach [--optimizer adamw] [--stack hf] \
        [--capacity-gib C] [--method full|lora|qlora --lora-rank R --lora-targets attention|all-linear]
        [--freeze-blocks K] [--optimizer adamw8bit] [--tensor-parallel T]
        [--gpus N --sharding none|ddp|zero1|zero2|shard_grad_op|zero3|fsdp] [--json]

`phases` are what `torch.cuda.max_memory_allocated()` would read at the end of forward, backward and
the optimizer step (peak reset at the start of the step); `terms` break each phase's own peak down.
With `--capacity-gib C` (the memory PyTorch's allocator may reserve: a per-process cap, or a card's
memory less the CUDA context), the JSON adds `first_oom`: `{"step": 1 or 2, "phase": "forward" |
"backward" | "optimizer_step"}` where the first two steps first fail (`core.memory.first_oom`), or
null when both complete. Bad input prints one line on stderr and exits with status 2.

The JSON also gives the model state one GPU holds (`core.memory.model_state`): `trainable_parameters`,
`base_weight_bytes` (the frozen weights as stored: LoRA's base model, QLoRA's in NF4; 0 for full
training),
`model_state_per_gpu` (`weights`, `gradients`, `master_weights`, `optimizer_state`),
`model_state_transients_per_gpu` (`gradient_buckets`: DDP's; `gathered_block`: FSDP's and ZeRO-3's)
and, for a mixture of experts, `active_parameters`.

Every method (full, `--freeze-blocks K`, LoRA, QLoRA) and sharding scheme gets phases and, with
`--capacity-gib`, `first_oom`, all per GPU: in `terms`, the model state is `weights`, `gradients`,
`master_weights` and `optimizer_state`, and each transient has a name of its own
(`gradient_buckets`, `gathered_block`, `dequantized_weight`, `optimizer_transient`, `workspace`,
`loss`). Where the phase model does not count a run (tensor parallelism, which `--tensor-parallel`
passes on; QLoRA under autocast; LoRA or frozen blocks under autocast on GPT-2 or a mixture of
experts, or on the fused stack; LoRA on a mixture of experts with shared experts) the error
says so and the exit status is 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from core.memory.count import KIND_LABELS
from core.memory.finetune import LORA_TARGETS
from core.memory.first_oom import first_oom
from core.memory.model_state import RunModelState, run_model_state
from core.memory.phases import PHASE_LABELS, PHASE_TERM_LABELS, PHASES, StepPhases, step_phases
from core.memory.settings import PRECISIONS, Attention, Optimizer, OptimizerImpl, Recompute, Stack
from core.memory.setup import METHODS, StepSetup, TrainingMethod
from core.memory.sharding import SHARDINGS
from core.memory.verdict import capped
from core.model_config import load_config_text
from core.model_spec import ModelSpec
from core.models import active_parameter_count

EXIT_BAD_INPUT = 2
MAX_CAPACITY_GIB = 100_000  # far above any device; keeps the bytes a whole number


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print `message` as one line and exit with status 2."""
        _fail(message)


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"core.estimate: {' '.join(message.split())}\n")
    raise SystemExit(EXIT_BAD_INPUT)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m core.estimate", description="Memory of one training step, phase by phase."
    )
    parser.add_argument("--config", required=True, help="a Hugging Face config.json")
    parser.add_argument("--batch", required=True, type=int, help="micro-batch (sequences)")
    parser.add_argument("--seq", required=True, type=int, help="sequence length (tokens)")
    parser.add_argument("--precision", default="bf16", choices=PRECISIONS)
    parser.add_argument("--attention", default="sdpa", choices=Attention.ids())
    parser.add_argument("--recompute", default="none", choices=Recompute.ids())
    parser.add_argument("--optimizer-impl", default="foreach", choices=OptimizerImpl.ids())
    parser.add_argument("--optimizer", default="adamw", choices=Optimizer.ids())
    parser.add_argument("--stack", default="hf", choices=Stack.ids())
    parser.add_argument(
        "--capacity-gib", type=float, help="memory the allocator may reserve (GiB): adds first_oom"
    )
    parser.add_argument("--method", default="full", choices=METHODS, help="what is trained")
    parser.add_argument("--lora-rank", type=int, help="LoRA's rank r (--method lora or qlora; default 16)")
    parser.add_argument("--lora-targets", choices=LORA_TARGETS, help="layers LoRA adapts (default attention)")
    parser.add_argument(
        "--freeze-blocks",
        default=0,
        type=int,
        help="full training: freeze the embeddings and the first K blocks",
    )
    parser.add_argument("--gpus", default=1, type=int, help="GPUs in all")
    parser.add_argument(
        "--tensor-parallel", default=1, type=int, help="GPUs that split each block's matrices"
    )
    parser.add_argument(
        "--sharding", default="none", choices=SHARDINGS, help="how the GPUs share model state"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def _training_method(args: argparse.Namespace) -> TrainingMethod:
    lora_options = args.lora_rank is not None or args.lora_targets is not None
    if lora_options and args.method == "full":
        raise ValueError("--lora-rank and --lora-targets need --method lora or qlora.")
    return TrainingMethod(
        method=args.method,
        lora_rank=16 if args.lora_rank is None else args.lora_rank,
        lora_targets=args.lora_targets or "attention",
        freeze_blocks=args.freeze_blocks,
        gpus=args.gpus,
        tensor_parallel=args.tensor_parallel,
        sharding=args.sharding,
    )


def model_state_json(state: RunModelState, model: ModelSpec, method: TrainingMethod) -> dict[str, Any]:
    """The model state one GPU holds, as the JSON contract gives it (bytes)."""
    result: dict[str, Any] = {
        "tensor_parallel": method.tensor_parallel,
        "data_parallel": method.data_parallel,
        "trainable_parameters": state.trainable_parameters,
        "base_weight_bytes": int(round(state.base_weight_bytes)),
        "model_state_per_gpu": {t: int(round(b)) for t, b in state.per_gpu.as_terms().items()},
        "model_state_transients_per_gpu": {
            "gradient_buckets": int(round(state.gradient_buckets_bytes)),
            "gathered_block": int(round(state.gathered_block_bytes)),
        },
    }
    if model.experts:
        result["active_parameters"] = active_parameter_count(model)
    return result


def model_state_table(state: RunModelState, method: TrainingMethod) -> str:
    """The model state one GPU holds as a readable table, in GB (1e9 bytes)."""
    lines = [
        f"{method.method} training on {method.gpus} GPU(s) ({method.tensor_parallel} tensor-parallel × "
        f"{method.data_parallel} data-parallel), sharding {method.sharding}: "
        f"{state.trainable_parameters:,} trainable parameters",
        f"Frozen base weights (all GPUs together): {state.base_weight_bytes / 1e9:8.2f} GB",
        "Model state on each GPU:",
    ]
    lines += [
        f"    {PHASE_TERM_LABELS[t]:<36} {b / 1e9:8.2f} GB" for t, b in state.per_gpu.as_terms().items()
    ]
    if state.gradient_buckets_bytes:
        lines.append(f"    {'DDP gradient buckets':<36} {state.gradient_buckets_bytes / 1e9:8.2f} GB")
    if state.gathered_block_bytes:
        lines.append(
            f"    {'FSDP gathered blocks (transient)':<36} {state.gathered_block_bytes / 1e9:8.2f} GB"
        )
    return "\n".join(lines)


def estimate_json(phases: StepPhases) -> dict[str, Any]:
    """The estimate as the JSON contract gives it: parameters, peak, phases and terms (bytes)."""
    count = phases.count
    return {
        "parameters": phases.parameters,
        "peak_bytes": int(round(phases.peak_bytes)),
        "peak_phase": phases.peak_phase,
        "phases": {p: int(round(v)) for p, v in phases.reported_bytes.items()},
        "phase_own_peaks": {p: int(round(phases.own(p).peak_bytes)) for p in PHASES},
        "terms": {p: {t: int(round(b)) for t, b in phases.own(p).terms.items()} for p in PHASES},
        "moments": {p: phases.own(p).moment for p in PHASES},
        "activations_per_block": {k: int(round(b)) for k, b in count.block.items() if b},
        "activations_outside_blocks": {k: int(round(b)) for k, b in count.outside.items() if b},
        "allocated_after_forward": int(round(phases.after_forward_bytes)),
    }


def estimate_table(phases: StepPhases) -> str:
    """The estimate as a readable table, in GB (1e9 bytes) and GiB (2^30 bytes)."""
    lines = [f"{phases.setup.model.name}: {phases.parameters:,} parameters"]
    for phase in PHASES:
        own = phases.own(phase)
        shown = f"{own.peak_bytes / 1e9:8.2f} GB {own.peak_bytes / 2**30:8.2f} GiB"
        lines.append(f"{PHASE_LABELS[phase]:<18} {shown}  ({own.moment})")
        for term, size in own.terms.items():
            if size:
                lines.append(f"    {PHASE_TERM_LABELS[term]:<36} {size / 1e9:8.2f} GB")
    peak = f"{phases.peak_bytes / 1e9:.2f} GB ({phases.peak_bytes / 2**30:.2f} GiB)"
    lines.append(f"Step peak: {peak} in {PHASE_LABELS[phases.peak_phase]}")
    lines.append("Saved activations of one block:")
    lines += [f"    {KIND_LABELS[k]:<44} {b / 1e9:8.3f} GB" for k, b in phases.count.block.items() if b]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        text = Path(args.config).read_text(encoding="utf-8")
    except OSError as err:
        _fail(f"cannot read {args.config}: {err.strerror or err}.")
    try:
        setup = StepSetup(
            model=load_config_text(text),
            batch=args.batch,
            seq_len=args.seq,
            precision=args.precision,
            attention=args.attention,
            recompute=args.recompute,
            optimizer=args.optimizer,
            optimizer_impl=args.optimizer_impl,
            stack=args.stack,
            training=_training_method(args),
        )
        capacity = None if args.capacity_gib is None else capped(_capacity_gib(args.capacity_gib))
        phases = step_phases(setup)
        failure = None if capacity is None else first_oom(setup, capacity)
    except ValueError as err:
        _fail(str(err))
    state = run_model_state(setup, setup.training)
    if args.json:
        result = {**estimate_json(phases), **model_state_json(state, setup.model, setup.training)}
        if capacity is not None:
            result["first_oom"] = None if failure is None else failure.as_json()
        print(json.dumps(result, indent=2))
    else:
        if setup.training != TrainingMethod():
            print(model_state_table(state, setup.training))
        print(estimate_table(phases))
        if capacity is not None:
            fate = "runs two steps" if failure is None else f"first fails in {failure.where}"
            print(f"On a {capacity.label}: {fate}")
    return 0


def _capacity_gib(gib: float) -> float:
    if not (math.isfinite(gib) and 0 < gib <= MAX_CAPACITY_GIB):
        raise ValueError(f"--capacity-gib must be a number of GiB above 0 and at most {MAX_CAPACITY_GIB:,}.")
    return gib


if __name__ == "__main__":
    raise SystemExit(main())
