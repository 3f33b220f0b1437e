"""Measure what a training step holds in memory with PyTorch, term by term.

Tiny GPT-2-style and Llama-style transformers are built on the CPU with random weights (nothing
is downloaded) and trained for two real steps. Every term is the bytes of actual tensors:
parameters, gradients and optimizer state after the first optimizer step, and the activations
autograd keeps for backward, caught with saved-tensor hooks and counted once per storage.
Where a GPU is present, torch.cuda.max_memory_allocated over a step is added.

Run from the repository root (needs requirements-torch.txt):
    python3 -m tools.measure_memory            # writes data/measured_memory.csv
    python3 -m tools.measure_memory --explain ID   # what layer 0 of one configuration keeps
    python3 -m tools.measure_memory --gpu      # Hugging Face models phase by phase on a CUDA GPU
"""

from __future__ import annotations

import argparse
import csv
import datetime
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from core.measured import COLUMNS, FILE_NAME, TERMS, family_spec, parse_measured_rows
from core.models import ModelSpec

OUTPUT_PATH = Path(__file__).resolve().parent.parent / "data" / FILE_NAME
TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
DROPOUT = 0.1  # GPT-2 drops out embeddings, attention probabilities and both residual branches
OTHER = "other"  # the region outside the transformer blocks


@dataclass(frozen=True)
class Run:
    """One configuration to measure: an architecture, its batch, number format and training choices."""

    spec: ModelSpec
    seq_len: int
    batch: int
    dtype: str
    optimizer: str
    recompute: str  # none, selective (the attention core of each block) or full (each block)
    attention: str  # explicit or sdpa

    @property
    def config_id(self) -> str:
        """A readable unique name, e.g. gpt2-h64-l2-s64-b2-bf16-adam-none-explicit."""
        s = self.spec
        return (
            f"{s.name}-h{s.hidden}-l{s.layers}-s{self.seq_len}-b{self.batch}"
            f"-{self.dtype}-{self.optimizer}-{self.recompute}-{self.attention}"
        )

    @property
    def dropout_p(self) -> float:
        """Dropout probability: GPT-2 trains with it, Llama does not."""
        return DROPOUT if self.spec.dropout else 0.0


GPT2_SPEC = family_spec("gpt2", hidden=64, layers=2, heads=4, kv_heads=4, intermediate=256, vocab=512)
# Llama's MLP is about 8/3 of hidden wide, rounded up to a multiple of 16; two KV heads exercise GQA.
LLAMA_SPEC = family_spec("llama", hidden=64, layers=2, heads=4, kv_heads=2, intermediate=176, vocab=512)
SEQ_BATCH = ((32, 2), (64, 2), (64, 4), (128, 2))
SETTINGS = (("none", "explicit"), ("selective", "explicit"), ("full", "explicit"), ("none", "sdpa"))


def all_runs() -> tuple[Run, ...]:
    """Every configuration the CSV holds: a grid, with SGD only where it adds a new optimizer state."""
    runs = [
        Run(spec, seq, batch, dtype, "adam", recompute, attention)
        for spec, dtype, (seq, batch), (recompute, attention) in itertools.product(
            (GPT2_SPEC, LLAMA_SPEC), TORCH_DTYPES, SEQ_BATCH, SETTINGS
        )
    ]
    runs += [
        Run(spec, 64, 2, dtype, "sgd_momentum", "none", "explicit")
        for spec in (GPT2_SPEC, LLAMA_SPEC)
        for dtype in TORCH_DTYPES
    ]
    return tuple(runs)


def dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """Dropout through the kernel GPUs run, which keeps a 1-byte mask (CPU F.dropout keeps x's dtype)."""
    return torch.native_dropout(x, p, True)[0] if p > 0 else x


def norm(spec: ModelSpec) -> nn.Module:
    """The model's normalisation layer: LayerNorm or RMSNorm over the hidden size."""
    return nn.RMSNorm(spec.hidden, eps=1e-5) if spec.norm == "rmsnorm" else nn.LayerNorm(spec.hidden)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding: pairs of the two head halves turned by a position-dependent angle."""
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-second, first), dim=-1) * sin


class Attention(nn.Module):
    """Causal self-attention with one fused QKV projection, written out or through SDPA."""

    cos: torch.Tensor  # rotary tables, registered as buffers when the family uses rotary positions
    sin: torch.Tensor

    def __init__(self, run: Run) -> None:
        super().__init__()
        s = run.spec
        self.run = run
        self.qkv = nn.Linear(s.hidden, s.hidden + 2 * s.kv_width, bias=s.biases)
        self.proj = nn.Linear(s.hidden, s.hidden, bias=s.biases)
        # Additive mask: adding it saves nothing for backward, unlike masked_fill with a bool mask.
        self.register_buffer(
            "mask", torch.full((run.seq_len, run.seq_len), -math.inf).triu(1), persistent=False
        )
        self.rope = s.positions == 0  # no learned position table: positions are rotary, as in Llama
        if self.rope:
            angles = torch.outer(
                torch.arange(run.seq_len), 10000.0 ** (-torch.arange(0, s.head_dim, 2) / s.head_dim)
            )
            self.register_buffer("cos", angles.cos().repeat(1, 2), persistent=False)
            self.register_buffer("sin", angles.sin().repeat(1, 2), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attention output for x of shape (batch, seq, hidden)."""
        s = self.run.spec
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split([s.hidden, s.kv_width, s.kv_width], dim=-1)
        q = q.view(b, t, s.heads, s.head_dim).transpose(1, 2)
        k = k.view(b, t, s.kv_heads, s.head_dim).transpose(1, 2)
        v = v.view(b, t, s.kv_heads, s.head_dim).transpose(1, 2)
        if self.rope:
            q, k = rotate(q, self.cos, self.sin), rotate(k, self.cos, self.sin)
        if self.run.recompute == "selective":
            context = checkpoint(self.core, q, k, v, use_reentrant=False)
        else:
            context = self.core(q, k, v)
        return self.proj(context.transpose(1, 2).reshape(b, t, s.hidden))

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """softmax(q·kᵀ/√d + mask)·v per head; the part selective recomputation redoes."""
        s = self.run.spec
        if self.run.attention == "sdpa":
            # CPU flash attention has no dropout, so this variant leaves attention dropout out.
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=s.kv_heads < s.heads)
        if s.kv_heads < s.heads:
            k, v = (t.repeat_interleave(s.heads // s.kv_heads, dim=1) for t in (k, v))
        scores = q @ k.transpose(-2, -1) * s.head_dim**-0.5 + self.mask
        return dropout(torch.softmax(scores, dim=-1), self.run.dropout_p) @ v


class Block(nn.Module):
    """A pre-norm transformer block: GPT-2's LayerNorm and GELU MLP, or Llama's RMSNorm and SwiGLU."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        s = run.spec
        self.p = run.dropout_p
        self.norm1, self.norm2 = norm(s), norm(s)
        self.attention = Attention(run)
        self.up = nn.Linear(s.hidden, s.intermediate, bias=s.biases)
        self.gate = nn.Linear(s.hidden, s.intermediate, bias=False) if s.gated_mlp else None
        self.down = nn.Linear(s.intermediate, s.hidden, bias=s.biases)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        """SwiGLU when the block has a gate, else GELU (GPT-2's tanh form)."""
        if self.gate is not None:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x), approximate="tanh"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output: two residual branches, each dropped out where the family does so."""
        x = x + dropout(self.attention(self.norm1(x)), self.p)
        return x + dropout(self.mlp(self.norm2(x)), self.p)


class TinyTransformer(nn.Module):
    """A decoder-only language model: learned positions or rotary ones, tied or separate output layer."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        s = run.spec
        if 0 < s.positions < run.seq_len:
            raise ValueError(f"This model learns {s.positions} positions; seq_len {run.seq_len} is longer.")
        self.run = run
        self.tokens = nn.Embedding(s.vocab, s.hidden)
        self.positions = nn.Embedding(s.positions, s.hidden) if s.positions else None
        self.blocks = nn.ModuleList(Block(run) for _ in range(s.layers))
        self.norm = norm(s)
        self.head = nn.Linear(s.hidden, s.vocab, bias=False)
        if s.tied_embeddings:
            self.head.weight = self.tokens.weight

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Token (plus position) embeddings of ids, shape (batch, seq, hidden)."""
        x = self.tokens(ids)
        if self.positions is not None:
            x = x + self.positions(torch.arange(ids.shape[1], device=ids.device))
        return dropout(x, self.run.dropout_p)

    def layer(self, index: int, x: torch.Tensor) -> torch.Tensor:
        """Block `index` applied to x, keeping only its input when the run recomputes whole blocks."""
        block = self.blocks[index]
        return checkpoint(block, x, use_reentrant=False) if self.run.recompute == "full" else block(x)

    def loss(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Cross-entropy of the next-token logits."""
        return F.cross_entropy(self.head(self.norm(x)).flatten(0, 1), targets.flatten())


@dataclass
class Ledger:
    """Storages autograd keeps for backward, counted once each, under the region that saved them first."""

    skip: set[int] = field(default_factory=set)  # parameters and buffers: the model holds them anyway
    region: str = OTHER
    bytes_by_region: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    seen: dict[int, tuple[str, tuple[int, ...], torch.dtype, int]] = field(default_factory=dict)

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        """Saved-tensor pack hook: note the storage, keep the tensor as it is."""
        storage = tensor.untyped_storage()
        pointer = storage.data_ptr()
        if storage.nbytes() and pointer not in self.skip and pointer not in self.seen:
            self.seen[pointer] = (self.region, tuple(tensor.shape), tensor.dtype, storage.nbytes())
            self.bytes_by_region[self.region] += storage.nbytes()
        return tensor


def _storage_bytes(tensors: Iterable[torch.Tensor]) -> int:
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values())


def _optimizer(run: Run, params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    if run.optimizer == "adam":
        return torch.optim.Adam(params, lr=1e-3)
    if run.optimizer == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-2, momentum=0.9)
    raise ValueError(f"Unknown optimizer {run.optimizer!r}.")


def _training_step(
    model: TinyTransformer,
    optimizer: torch.optim.Optimizer,
    batch: tuple[torch.Tensor, torch.Tensor],
    ledger: Ledger,
) -> dict[str, int]:
    """One forward, backward and optimizer step; the bytes of each term as the step leaves them."""
    model_storages = itertools.chain(model.parameters(), model.buffers())
    ledger.skip = {t.untyped_storage().data_ptr() for t in model_storages}
    ids, targets = batch
    with torch.autograd.graph.saved_tensors_hooks(ledger.pack, lambda tensor: tensor):
        x = model.embed(ids)
        for index in range(len(model.blocks)):
            ledger.region = f"layer{index}"
            x = model.layer(index, x)
        ledger.region = OTHER
        loss = model.loss(x, targets)
    layer_bytes = {ledger.bytes_by_region[f"layer{i}"] for i in range(len(model.blocks))}
    if len(layer_bytes) != 1:
        raise RuntimeError(f"Blocks of {model.run.config_id} saved different amounts: {sorted(layer_bytes)}.")
    loss.backward()
    gradient_bytes = _storage_bytes(p.grad for p in model.parameters() if p.grad is not None)
    optimizer.step()
    optimizer.zero_grad()
    states = [
        (name, value)
        for state in optimizer.state.values()
        for name, value in state.items()
        if torch.is_tensor(value)
    ]
    return {
        "parameters": _storage_bytes(model.parameters()),
        "gradients": gradient_bytes,
        "optimizer_state": _storage_bytes(value for name, value in states if name != "step"),
        "optimizer_step_counters": _storage_bytes(value for name, value in states if name == "step"),
        "saved_activations_layers": len(model.blocks) * layer_bytes.pop(),
        "saved_activations_other": ledger.bytes_by_region[OTHER],
    }


def _setup(
    run: Run, device: str
) -> tuple[TinyTransformer, torch.optim.Optimizer, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    model = TinyTransformer(run).to(device=device, dtype=TORCH_DTYPES[run.dtype])
    tokens = torch.randint(run.spec.vocab, (run.batch, run.seq_len + 1), device=device)
    return model, _optimizer(run, model.parameters()), (tokens[:, :-1], tokens[:, 1:])


def measure(run: Run, *, device: str = "cpu", ledger: Ledger | None = None) -> dict[str, int]:
    """Measured bytes per term for `run`: two real steps, which must agree (the state is steady)."""
    model, optimizer, batch = _setup(run, device)
    first = _training_step(model, optimizer, batch, ledger or Ledger())
    second = _training_step(model, optimizer, batch, Ledger())
    if first != second:
        raise RuntimeError(f"{run.config_id}: the second step held different bytes: {first} then {second}.")
    return first


def cuda_peak_bytes(run: Run) -> int:
    """torch.cuda.max_memory_allocated over one whole step, after a first step has built the optimizer
    state."""
    model, optimizer, batch = _setup(run, "cuda")
    _training_step(model, optimizer, batch, Ledger())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    _training_step(model, optimizer, batch, Ledger())
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


def attention_kind(run: Run) -> str:
    """What ran: 'explicit', or 'sdpa_' and the kernel PyTorch picked for these shapes and dtype."""
    if run.attention == "explicit":
        return "explicit"
    s = run.spec
    q = torch.zeros(
        run.batch, s.heads, run.seq_len, s.head_dim, dtype=TORCH_DTYPES[run.dtype], requires_grad=True
    )
    kv = torch.zeros(run.batch, s.kv_heads, run.seq_len, s.head_dim, dtype=q.dtype)
    grad_fn = F.scaled_dot_product_attention(
        q, kv, kv, is_causal=True, enable_gqa=s.kv_heads < s.heads
    ).grad_fn
    if grad_fn is None:
        raise RuntimeError(
            "scaled_dot_product_attention recorded no backward node for a tensor needing grad."
        )
    node = grad_fn.name()
    for kernel in ("flash", "efficient"):
        if kernel in node.lower():
            return f"sdpa_{kernel}"
    return "sdpa_math"


def csv_rows(run: Run, terms: dict[str, int], *, date: str) -> list[dict[str, str]]:
    """The CSV rows of one measured run, one per term, as strings in the column order of the file."""
    s = run.spec
    settings = {
        "config_id": run.config_id,
        "family": s.name,
        "hidden": s.hidden,
        "layers": s.layers,
        "heads": s.heads,
        "kv_heads": s.kv_heads,
        "intermediate": s.intermediate,
        "vocab": s.vocab,
        "seq_len": run.seq_len,
        "batch": run.batch,
        "dtype": run.dtype,
        "optimizer": run.optimizer,
        "recompute": run.recompute,
        "attention": attention_kind(run),
        "torch_version": torch.__version__.split("+")[0],
        "date": date,
    }
    rows = [{**settings, "term": term, "measured_bytes": terms[term]} for term in TERMS if term in terms]
    return [{column: str(row[column]) for column in COLUMNS} for row in rows]


def write_csv(rows: list[dict[str, str]], path: Path) -> None:
    """Check the rows with the app's own loader, then write them with a comment saying where they come
    from."""
    parse_measured_rows(rows)
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(
            "# Written by tools/measure_memory.py: bytes of real PyTorch tensors in tiny "
            "transformers on the CPU.\n"
            "# The family column stands for core.measured.FAMILY_TRAITS: GPT-2 style learns 128 "
            "positions, ties embeddings\n"
            "# and uses LayerNorm, GELU and biases; Llama style uses RoPE, RMSNorm, SwiGLU, no "
            "biases and no dropout.\n"
            "# Dropout keeps 1-byte masks (the GPU kernel's layout); sdpa runs have no attention dropout.\n"
        )
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def explain(run: Run) -> None:
    """Print each storage block 0 of `run` keeps for backward, largest first."""
    ledger = Ledger()
    terms = measure(run, ledger=ledger)
    sbh = run.seq_len * run.batch * run.spec.hidden
    print(
        f"{run.config_id}: {terms['saved_activations_layers'] // run.spec.layers / sbh:.3f} bytes "
        "per s·b·h per layer"
    )
    kept = sorted(
        (entry for entry in ledger.seen.values() if entry[0] == "layer0"), key=lambda entry: -entry[3]
    )
    for _, shape, dtype, nbytes in kept:
        print(f"  {nbytes:>9} bytes  {nbytes / sbh:7.3f} sbh  {str(dtype):15} {shape}")


def main() -> None:
    """Measure every configuration and write the CSV, or explain one configuration."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--explain", metavar="CONFIG_ID", help="list what block 0 of this configuration keeps, write nothing"
    )
    parser.add_argument("--output", type=Path, default=None, help="where to write the CSV")
    parser.add_argument(
        "--gpu",
        action="store_true",
        help="measure the H200 reference setups phase by phase on a CUDA GPU (tools/measure_gpu.py)",
    )
    parser.add_argument(
        "--run-a",
        action="store_true",
        help="measure where Run A's shape first dies on a capped CUDA GPU (tools/measure_gpu.py)",
    )
    args = parser.parse_args()
    if args.run_a:
        from tools.measure_gpu import RUN_A_OUTPUT_PATH, measure_run_a

        output = args.output or RUN_A_OUTPUT_PATH
        print(f"Wrote {measure_run_a(output)} setups to {output}")
        return
    if args.gpu:
        from tools.measure_gpu import GPU_OUTPUT_PATH, measure_reference

        output = args.output or GPU_OUTPUT_PATH
        print(f"Wrote {measure_reference(output)} setups to {output}")
        return
    torch.set_num_threads(1)  # the tensors are tiny: more threads only fight over a shared machine's cores
    runs = {run.config_id: run for run in all_runs()}
    if args.explain:
        explain(runs[args.explain])
        return
    date = datetime.date.today().isoformat()
    rows = []
    for run in runs.values():
        terms = measure(run)
        if torch.cuda.is_available():
            terms["cuda_peak_allocated"] = cuda_peak_bytes(run)
        rows += csv_rows(run, terms, date=date)
    write_csv(rows, args.output or OUTPUT_PATH)
    print(f"Wrote {len(rows)} rows for {len(runs)} configurations to {args.output or OUTPUT_PATH}")


if __name__ == "__main__":
    main()
