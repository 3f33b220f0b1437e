"""A learner's out-of-memory error read against the estimate: where the run died, what the block it asked
for most likely was, the memory at that moment term by term, and the smallest changes that make it fit.

The message (`core.oom`) gives the line the allocator ran into and what it held; the learner names the
run (`core.memory.setup.StepSetup`); the step-aware phase model (`core.memory.first_oom`) says where
that run first fails. Where the run died is the estimate's place when the message bears it out (the
block it asked for is a tensor that phase makes, and a pasted traceback names the same phase), and the
message's own evidence where it does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.gpus import Gpu, load_gpus
from core.memory.allocator import over_the_cap, segment_bytes
from core.memory.first_oom import PHASE_WORDS, FirstOom, first_oom
from core.memory.model_state import MIN_8BIT_SIZE
from core.memory.phases import PHASE_TERM_LABELS, step_moments
from core.memory.settings import COMPUTE_BYTES, STATE_VALUES
from core.memory.setup import StepSetup
from core.memory.verdict import GIB, Capacity, capped, whole_card
from core.model_tensors import model_tensors
from core.oom import UNITS, OomMessage, half_digit_bytes

FP32 = 4
# The frames a traceback shows while each phase runs (PyTorch's own files and the usual call lines).
_TRACEBACK_PHASES = (
    (
        "optimizer_step",
        re.compile(r"torch/optim/|optimizer\.step\(|in _multi_tensor_adam|in _single_tensor_adam"),
    ),
    ("backward", re.compile(r"\.backward\(|torch/autograd/|in backward\b|_engine_run_backward")),
    ("forward", re.compile(r"in forward\b|model\(|_call_impl")),
)


@dataclass(frozen=True)
class Block:
    """A tensor of the run that a "Tried to allocate" figure may be: its size and the phases that make it."""

    name: str
    arithmetic: str
    tensor_bytes: int
    phases: tuple[str, ...]

    @property
    def segment_bytes(self) -> int:
        """What the allocator would ask CUDA for, as the message reports it."""
        return segment_bytes(self.tensor_bytes)


def size_words(size: float) -> str:
    """A size in PyTorch's own units (MiB up to 1 GiB, then GiB), two decimals."""
    return f"{size / UNITS['MiB']:,.2f} MiB" if size <= GIB else f"{size / GIB:,.2f} GiB"


def blocks(setup: StepSetup) -> tuple[Block, ...]:
    """The large tensors a step of `setup` allocates at once, each with its arithmetic."""
    m, c = setup.model, setup.convention
    b, s, w = setup.batch, setup.seq_len, COMPUTE_BYTES[c.compute]
    found = [
        Block(
            "the logits",
            f"{b} × {s:,} × {m.vocab:,} vocabulary × {w} bytes",
            b * s * m.vocab * w,
            ("forward",),
        ),
        Block(
            "the loss's FP32 logits or their gradient",
            f"{b} × {s:,} × {m.vocab:,} vocabulary × 4 bytes",
            b * s * m.vocab * FP32,
            ("forward", "backward"),
        ),
        Block(
            "an MLP intermediate",
            f"{b} × {s:,} × {m.intermediate:,} × {w} bytes",
            b * s * m.intermediate * w,
            ("forward", "backward"),
        ),
        Block(
            "the attention's Q, K and V projection",
            f"{b} × {s:,} × {m.hidden + 2 * m.kv_width:,} × {w} bytes",
            b * s * (m.hidden + 2 * m.kv_width) * w,
            ("forward", "backward"),
        ),
        Block(
            "a block's hidden states",
            f"{b} × {s:,} × {m.hidden:,} × {w} bytes",
            b * s * m.hidden * w,
            ("forward", "backward"),
        ),
    ]
    if setup.attention == "eager":
        score = FP32 if c.compute != "bf16" else 2
        found.append(
            Block(
                "the attention scores",
                f"{b} × {m.heads} heads × {s:,}² × {score} bytes",
                b * m.heads * s * s * score,
                ("forward", "backward"),
            )
        )
    shapes: dict[int, str] = {}
    for tensor in model_tensors(m):
        shapes.setdefault(tensor.numel, f"{tensor.name} ({' × '.join(f'{d:,}' for d in tensor.shape)})")
    for numel, named in sorted(shapes.items(), reverse=True)[:6]:
        found.append(
            Block(
                f"the gradient of {named}",
                f"{numel:,} values × {c.gradient_bytes} bytes",
                numel * c.gradient_bytes,
                ("backward",),
            )
        )
        if STATE_VALUES[setup.optimizer]:
            state_bytes = _state_value_bytes(setup, numel)
            found.append(
                Block(
                    f"the optimizer's state for {named}",
                    f"{numel:,} values × {state_bytes} bytes",
                    numel * state_bytes,
                    ("optimizer_step",),
                )
            )
    return tuple(found)


def _state_value_bytes(setup: StepSetup, numel: int) -> int:
    """Bytes of one value of one optimizer-state tensor: bitsandbytes' AdamW8bit keeps a byte (its FP32
    block statistics are tensors of their own) for tensors of 4,096 values or more, FP32 below."""
    if setup.optimizer != "adamw8bit":
        return setup.convention.state_bytes
    return 1 if numel >= MIN_8BIT_SIZE else FP32


def matching_blocks(setup: StepSetup, tried_bytes: int) -> tuple[Block, ...]:
    """The tensors whose segment prints as `tried_bytes` does (to the message's two decimals)."""
    half_digit = 0.005 * (GIB if tried_bytes > GIB else UNITS["MiB"])
    return tuple(b for b in blocks(setup) if abs(b.segment_bytes - tried_bytes) <= half_digit)


def traceback_phase(text: str) -> str | None:
    """The phase a pasted traceback was in, from the frames it shows; None for a message alone."""
    if "Traceback" not in text and 'File "' not in text:
        return None
    return next((phase for phase, frames in _TRACEBACK_PHASES if frames.search(text)), None)


def capacity_of(message: OomMessage | None, card: Gpu, cap_gib: float, *, context_bytes: int) -> Capacity:
    """The line the run met: the cap where there is one, else the card less what lives outside PyTorch
    (the message's own figure for this process and any other, or the reference's CUDA context)."""
    if cap_gib > 0:
        return capped(cap_gib)
    outside = context_bytes
    total = card.memory_bytes
    if message is not None:
        total = message.capacity_bytes or total
        outside = (
            message.outside_pytorch_bytes if message.outside_pytorch_bytes is not None else context_bytes
        )
        outside += sum(p.in_use_bytes for p in message.other_processes)
    return whole_card(card.name, total, context_bytes=outside)


def card_for(message: OomMessage) -> Gpu | None:
    """The GPU preset whose memory is the message's total capacity (within 2%), if any."""
    total = message.capacity_bytes
    if total is None:
        return None
    near = [g for g in load_gpus() if abs(g.memory_bytes - total) <= 0.02 * g.memory_bytes]
    return min(near, key=lambda g: abs(g.memory_bytes - total), default=None)


@dataclass(frozen=True)
class Change:
    """One change to the run, and where the changed run first fails (None: it runs two steps)."""

    name: str
    how: str
    setup: StepSetup
    capacity: Capacity
    failure: FirstOom | None
    card: str | None = None  # the GPU preset a bigger-card change moves to

    @property
    def fits(self) -> bool:
        """Whether the changed run gets through two steps."""
        return self.failure is None


def _halve(setup: StepSetup) -> tuple[str, str, StepSetup] | None:
    if setup.batch >= 2:
        half = setup.batch // 2
        return (
            f"Micro-batch {half}, accumulating gradients over 2",
            f"batch {setup.batch} → {half}; call optimizer.step() every second micro-batch",
            replace(setup, batch=half),
        )
    if setup.seq_len >= 2:
        half = setup.seq_len // 2
        return (
            f"Half the tokens: sequence {half:,}",
            f"seq {setup.seq_len:,} → {half:,}",
            replace(setup, seq_len=half),
        )
    return None


_CHANGES: tuple[tuple[str, str, Callable[[StepSetup], StepSetup | None]], ...] = (
    (
        "Recompute each block in backward",
        "model.gradient_checkpointing_enable()",
        lambda s: replace(s, recompute="full") if s.recompute != "full" else None,
    ),
    (
        "SDPA attention",
        'attn_implementation="sdpa"',
        lambda s: replace(s, attention="sdpa") if s.attention == "eager" else None,
    ),
    (
        "BF16 autocast",
        'torch.autocast("cuda", dtype=torch.bfloat16) around forward and loss',
        lambda s: replace(s, precision="amp") if s.precision == "fp32" else None,
    ),
    (
        "Fused AdamW",
        "torch.optim.AdamW(..., fused=True)",
        lambda s: (
            replace(s, optimizer="adamw", optimizer_impl="fused")
            if s.optimizer in ("adam", "adamw") and s.optimizer_impl != "fused"
            else None
        ),
    ),
)


def _bigger_card(setup: StepSetup, capacity: Capacity, *, context_bytes: int) -> Gpu | None:
    """The smallest GPU preset above `capacity` that runs two steps, else the largest one."""
    bigger = sorted(
        (g for g in load_gpus() if g.memory_bytes > capacity.total_bytes), key=lambda g: g.memory_bytes
    )
    for card in bigger:
        if first_oom(setup, whole_card(card.name, card.memory_bytes, context_bytes=context_bytes)) is None:
            return card
    return bigger[-1] if bigger else None


def changes(setup: StepSetup, capacity: Capacity, *, context_bytes: int) -> tuple[Change, ...]:
    """The smallest changes, each alone, ranked: those that fit first (in order of how little they change),
    then the rest by how far the run gets."""
    found: list[Change] = []
    halved = _halve(setup)
    if halved is not None:
        name, how, changed = halved
        found.append(Change(name, how, changed, capacity, first_oom(changed, capacity)))
    for name, how, change in _CHANGES:
        changed_setup = change(setup)
        if changed_setup is not None:
            found.append(Change(name, how, changed_setup, capacity, first_oom(changed_setup, capacity)))
    card = _bigger_card(setup, capacity, context_bytes=context_bytes)
    if card is not None:
        on_card = whole_card(card.name, card.memory_bytes, context_bytes=context_bytes)
        found.append(
            Change(
                f"A bigger card: {card.name}",
                f"{card.memory_gib:.0f} GiB instead of {capacity.total_gib:.0f} GiB",
                setup,
                on_card,
                first_oom(setup, on_card),
                card=card.name,
            )
        )
    order = {"forward": 0, "backward": 1, "optimizer_step": 2}

    def rank(change: Change) -> tuple[int, int, int]:
        f = change.failure
        return (0, 0, 0) if f is None else (1, -f.step, -order[f.phase])

    return tuple(sorted(found, key=rank))  # sorted() is stable: equals keep their order of size


@dataclass(frozen=True)
class TermRow:
    """One row of "the memory at that moment": the estimate's figure and the message's, where it gives one."""

    term: str
    estimate_bytes: float | None
    message_bytes: float | None


@dataclass(frozen=True)
class OomVerdict:
    """Everything the Your OOM page says about one message and one named run."""

    setup: StepSetup
    capacity: Capacity
    message: OomMessage
    estimate: FirstOom | None
    died_phase: str | None  # the phase the evidence points to (traceback, then the block), None if unclear
    died_step: int | None
    evidence: str  # "traceback", "block" or "estimate" (nothing in the message decides: the estimate's place)
    candidates: tuple[Block, ...]
    rows: tuple[TermRow, ...]

    @property
    def agrees(self) -> bool:
        """Whether the estimate's first failure is where the message puts the run's death."""
        return self.estimate is not None and (self.estimate.step, self.estimate.phase) == (
            self.died_step,
            self.died_phase,
        )

    @property
    def reserved_after_bytes(self) -> int | None:
        """What the allocator would have reserved with the block it asked for (the cap's measure), if the
        message says what it held and what it tried."""
        reserved, tried = self.message.reserved_bytes, self.message.tried_bytes
        return None if reserved is None or tried is None else reserved + tried

    @property
    def over_the_line(self) -> bool:
        """Whether the message's own figures pass its line, to their rounding: reserved memory plus the new
        segment (the cap counts reserved memory, so this holds with memory free under the line in tensors'
        terms)."""
        m = self.message
        if m.allowed_bytes is None:  # no cap: CUDA itself had no room for the segment
            return m.free_bytes is not None and m.tried_bytes is not None and m.tried_bytes > m.free_bytes
        if m.allocated_bytes is None or m.reserved_unallocated_bytes is None or m.tried_bytes is None:
            return False
        rounding = half_digit_bytes(m.allocated_bytes) + half_digit_bytes(m.reserved_unallocated_bytes)
        reserved = m.allocated_bytes + m.reserved_unallocated_bytes + rounding
        return over_the_cap(reserved, m.tried_bytes, m.allowed_bytes)

    @property
    def where(self) -> str | None:
        """Where it died in words: "loss.backward() of step 1"."""
        if self.died_phase is None:
            return None
        step = f" of step {self.died_step}" if self.died_step else ""
        return f"{PHASE_WORDS[self.died_phase]}{step}"


def _moment_terms(setup: StepSetup, failure: FirstOom) -> dict[str, float]:
    """The tensors live at the estimate's failing moment, by the phase model's terms."""
    moments = step_moments(replace(setup, first_step=failure.step == 1))
    moment = next(m for m in moments if m.what == failure.what and m.phase == failure.phase)
    return {k: v for k, v in moment.terms.items() if v}


def _rows(
    setup: StepSetup,
    capacity: Capacity,
    message: OomMessage,
    estimate: FirstOom | None,
    *,
    context_bytes: int,
) -> tuple[TermRow, ...]:
    rows: list[TermRow] = []
    tensors = 0.0
    if estimate is not None:
        terms = _moment_terms(setup, estimate)
        tensors = sum(terms.values())
        rows += [TermRow(PHASE_TERM_LABELS[k], v, None) for k, v in terms.items()]
    held = None
    if message.allocated_bytes is not None and message.tried_bytes is not None:
        held = float(message.allocated_bytes + message.tried_bytes)
    rows.append(TermRow("Allocated by PyTorch, with the block it tried", tensors or None, held))
    rows.append(
        TermRow(
            "Reserved by PyTorch but unallocated",
            float(capacity.reserve_bytes),
            message.reserved_unallocated_bytes,
        )
    )
    outside = capacity.context_bytes or context_bytes
    rows.append(
        TermRow("Outside PyTorch (CUDA context, cuBLAS)", float(outside), message.outside_pytorch_bytes)
    )
    rows.append(TermRow("The line it met", float(capacity.total_bytes), message.limit_bytes))
    return tuple(rows)


def _died_step(
    setup: StepSetup, capacity: Capacity, phase: str, message: OomMessage, estimate: FirstOom | None
) -> int:
    """The step in which the run died in `phase`: the estimate's when it fails there, else step 1 for
    the state's creation, else the step whose memory at that phase is nearer the message's."""
    if estimate is not None and estimate.phase == phase:
        return estimate.step
    if phase == "optimizer_step":
        return 1
    allocated = float(message.allocated_bytes or 0)
    near = {}
    for step in (1, 2):
        moments = step_moments(replace(setup, first_step=step == 1))
        near[step] = abs(max(m.total_bytes for m in moments if m.phase == phase) - allocated)
    return min(near, key=lambda s: near[s])


def verdict(
    text: str, message: OomMessage, setup: StepSetup, capacity: Capacity, *, context_bytes: int
) -> OomVerdict:
    """The message `message` (read from `text`, the paste) against the run `setup` on `capacity`."""
    estimate = first_oom(setup, capacity)
    candidates = matching_blocks(setup, message.tried_bytes) if message.tried_bytes is not None else ()
    phase, evidence = traceback_phase(text), "traceback"
    if phase is None:
        block_phases = {p for b in candidates for p in b.phases}
        if estimate is not None and estimate.phase in block_phases:
            phase, evidence = estimate.phase, "block"
        elif len(block_phases) == 1:
            phase, evidence = block_phases.pop(), "block"
        elif estimate is not None:  # the block is no tensor we know, or one several phases make
            phase, evidence = estimate.phase, "estimate"
    step = None if phase is None else _died_step(setup, capacity, phase, message, estimate)
    if phase is not None and candidates:
        candidates = tuple(b for b in candidates if phase in b.phases) or candidates
    return OomVerdict(
        setup=setup,
        capacity=capacity,
        message=message,
        estimate=estimate,
        died_phase=phase,
        died_step=step,
        evidence=evidence,
        candidates=candidates,
        rows=_rows(setup, capacity, message, estimate, context_bytes=context_bytes),
    )
