"""How close the detailed estimate comes to what PyTorch really kept, term by term.

For every configuration in `data/measured_memory.csv` we build the detailed estimate's
`TrainingSetup` for the same model, number format, optimizer, batch, sequence length,
recomputation and attention, and set each estimated term next to the measured bytes. Where they
differ, the known causes are computed from the shapes, so a test can check that they add up to
the gap and the page can say what the gap is made of.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core.datafiles import require
from core.measured import FAMILIES, MeasuredRun, load_measured, measured_run
from core.memory import BudgetOptimizer
from core.memory_detailed import (
    TrainingSetup,
    layer_activation_bytes,
    output_activation_bytes,
    precision,
    precision_label,
    replicated_terms,
)
from core.models import ModelSpec

# The one place measured names meet the estimate's names. Every measured run keeps all its copies in
# one dtype (fp32, or a model cast to bf16); the math SDPA kernel materialises the scores as written-out
# attention does.
PRECISION_OF_DTYPE = {"fp32": "fp32", "bf16": "bf16"}
ATTENTION_OF_KIND = {
    "explicit": "standard",
    "sdpa_math": "standard",
    "sdpa_flash": "memory_efficient",
    "sdpa_efficient": "memory_efficient",
}
FUSED_ATTENTION_KINDS = ("sdpa_flash", "sdpa_efficient")

# How close the saved-activation estimate must come to PyTorch's bytes; model state must match exactly.
ACTIVATION_TOLERANCE = 0.10
STATE_TERMS = ("parameters", "gradients", "optimizer_state")
ACTIVATION_TERMS = ("saved_activations_layers", "saved_activations_other")
COMPARED_TERMS = (*STATE_TERMS, "optimizer_step_counters", *ACTIVATION_TERMS)
# The terms compared with PyTorch, finer than the budget's TERMS (see BUDGET_TERM below).
COMPARED_LABELS = {
    "parameters": "Parameters",
    "gradients": "Gradients",
    "optimizer_state": "Optimizer state",
    "optimizer_step_counters": "Optimizer step counters",
    "saved_activations_layers": "Saved activations in the blocks",
    "saved_activations_other": "Saved activations outside the blocks",
}
# The budget term each compared term belongs to: it decides the colour in charts.
BUDGET_TERM = {
    "parameters": "parameters",
    "gradients": "gradients",
    "optimizer_state": "optimizer_state",
    "optimizer_step_counters": "optimizer_state",
    "saved_activations_layers": "activations",
    "saved_activations_other": "activations",
}

CAUSE_WORDS = {
    "cpu_rmsnorm": "RMSNorm written in Python is not fused: it works in FP32 and keeps FP32 copies of its "
    "input and of its normalised output (on a GPU too, as transformers writes it; the H200 reference shows "
    "it), where the fused kernel this estimate assumes keeps only the input",
    "qkv_view": "with rotary positions Q and K are rotated into new tensors, while V stays a view into the "
    "fused QKV projection's output and so keeps all of that output alive",
    "softmax_statistics": "the fused attention kernel keeps an FP32 log-sum-exp per head and token to redo "
    "the softmax in backward",
    "norm_statistics": "LayerNorm keeps a mean and a 1/σ for every token",
    "token_ids": "the embedding and the loss keep token ids, targets and positions as 8-byte integers",
    "step_counters": "Adam keeps a 4-byte step count for each weight tensor",
}
# Causes that come from unfused Python code (the CPU runs here, and transformers' RMSNorm on a GPU as well)
# rather than from the fused-kernel stack this estimate models; core.memory.hf_stack counts them.
PLATFORM_CAUSES = ("cpu_rmsnorm",)

FAMILY_WORDS = {"gpt2": "GPT-2-style", "llama": "Llama-style"}
ATTENTION_WORDS = {
    "explicit": "attention written out",
    "sdpa_flash": "SDPA, flash kernel",
    "sdpa_efficient": "SDPA, memory-efficient kernel",
    "sdpa_math": "SDPA, math kernel",
}
OPTIMIZER_WORDS = {"adam": "Adam", "sgd_momentum": "SGD with momentum"}
RECOMPUTE_WORDS = {
    "none": "no recomputation",
    "selective": "selective recomputation",
    "full": "full recomputation",
}
FP32_BYTES = 4
INDEX_BYTES = 8  # int64, how PyTorch keeps token ids and positions


@dataclass(frozen=True)
class Cause:
    """Part of a gap, computed from the shapes: measured minus estimated bytes it accounts for."""

    key: str
    words: str
    explained_bytes: int


@dataclass(frozen=True)
class TermCheck:
    """One term: the estimate, PyTorch's bytes and the known causes of the difference."""

    term: str
    label: str
    budget_term: str
    estimate_bytes: int
    measured_bytes: int
    causes: tuple[Cause, ...]

    @property
    def gap_bytes(self) -> int:
        """Measured minus estimated bytes: positive when the estimate is short."""
        return self.measured_bytes - self.estimate_bytes

    @property
    def error_percent(self) -> float | None:
        """(estimate − measured) / measured in percent; None when PyTorch kept nothing for this term."""
        return (
            None
            if self.measured_bytes == 0
            else 100 * (self.estimate_bytes - self.measured_bytes) / self.measured_bytes
        )

    @property
    def error_text(self) -> str:
        """The relative error as a table shows it."""
        if self.error_percent is None:
            return "exact (none kept)" if self.estimate_bytes == 0 else "none measured"
        if self.gap_bytes == 0:
            return "exact"
        return f"{self.error_percent:+.1f}%" + (" (not estimated)" if self.estimate_bytes == 0 else "")

    @property
    def explained_bytes(self) -> int:
        """Bytes of the gap the causes account for."""
        return sum(cause.explained_bytes for cause in self.causes)

    @property
    def unexplained_bytes(self) -> int:
        """What is left of the gap once every known cause is added to the estimate."""
        return self.gap_bytes - self.explained_bytes

    def error_with(self, keys: tuple[str, ...]) -> float:
        """Relative error (fraction) once the causes named in `keys` are added to the estimate."""
        require(
            self.measured_bytes > 0,
            f"PyTorch kept nothing for {self.label.lower()}, so there is no relative error.",
        )
        added = sum(cause.explained_bytes for cause in self.causes if cause.key in keys)
        return (self.estimate_bytes + added - self.measured_bytes) / self.measured_bytes

    def within_tolerance(self) -> bool:
        """True when the estimate is within `ACTIVATION_TOLERANCE` of the measured bytes."""
        return self.measured_bytes > 0 and abs(self.error_with(())) <= ACTIVATION_TOLERANCE


@dataclass(frozen=True)
class EstimateCheck:
    """One measured configuration: the setup the estimate used and every compared term."""

    run: MeasuredRun
    setup: TrainingSetup
    rows: tuple[TermCheck, ...]

    def row(self, term: str) -> TermCheck:
        """The compared term called `term`."""
        for row in self.rows:
            if row.term == term:
                return row
        raise ValueError(f"Unknown compared term {term!r}: pick one of {', '.join(COMPARED_TERMS)}.")


def setup_for(run: MeasuredRun) -> TrainingSetup:
    """The detailed estimate's setup for a measured run: same shape, number format, optimizer and settings."""
    return TrainingSetup(
        model=run.spec,
        precision=PRECISION_OF_DTYPE[run.dtype],
        optimizer=run.optimizer,
        micro_batch=run.batch,
        seq_len=run.seq_len,
        recompute=run.recompute,
        attention=ATTENTION_OF_KIND[run.attention],
        runtime_overhead_gb=0.0,
    )


def weight_tensor_count(spec: ModelSpec) -> int:
    """Weight tensors of the model as the measuring tool builds it (one fused QKV projection)."""
    per_norm = 2 if spec.norm == "layernorm" else 1
    linears = 2 + (3 if spec.gated_mlp else 2)  # QKV and output projection, then the MLP's matrices
    biases = (2 + 2) if spec.biases else 0  # QKV, projection, MLP up and down
    per_block = 2 * per_norm + linears + biases
    embeddings = 1 + (1 if spec.positions else 0) + (0 if spec.tied_embeddings else 1)
    return embeddings + spec.layers * per_block + per_norm


def _cause(key: str, explained_bytes: int) -> Cause:
    return Cause(key, CAUSE_WORDS[key], explained_bytes)


def _value_bytes(run: MeasuredRun) -> int:
    return precision(PRECISION_OF_DTYPE[run.dtype]).activation_bytes


def _norm_causes(run: MeasuredRun, norms: int) -> list[Cause]:
    """What `norms` norms over every token keep beyond their input (the only thing the estimate counts)."""
    tokens, h, size = run.batch * run.seq_len, run.spec.hidden, _value_bytes(run)
    if run.spec.norm == "rmsnorm":
        # FP32 copies of input and output (the input itself when it is FP32 already) and 1/rms per token.
        extra = (2 * FP32_BYTES - size) * h + FP32_BYTES
        return [_cause("cpu_rmsnorm", norms * tokens * extra)]
    # A pure-precision LayerNorm on the CPU keeps its mean and 1/σ in the input's dtype.
    return [_cause("norm_statistics", norms * tokens * 2 * size)]


def _layer_causes(run: MeasuredRun) -> list[Cause]:
    if run.recompute == "full":
        return []  # a recomputed block keeps its input only, exactly what the estimate counts
    spec, tokens, size = run.spec, run.batch * run.seq_len, _value_bytes(run)
    causes = _norm_causes(run, 2)
    fused = run.attention in FUSED_ATTENTION_KINDS and run.recompute == "none"
    if fused:
        causes.append(_cause("softmax_statistics", tokens * spec.heads * FP32_BYTES))
    if spec.positions == 0 and (fused or run.recompute == "selective"):
        causes.append(_cause("qkv_view", tokens * (spec.hidden + spec.kv_width) * size))
    return [_cause(c.key, spec.layers * c.explained_bytes) for c in causes]


def _other_causes(run: MeasuredRun) -> list[Cause]:
    tokens = run.batch * run.seq_len
    positions = run.seq_len if run.spec.positions else 0
    ids = INDEX_BYTES * (2 * tokens + positions)  # inputs and targets per token, one position index per place
    return [*_norm_causes(run, 1), _cause("token_ids", ids)]


def _step_causes(run: MeasuredRun) -> list[Cause]:
    if run.optimizer != "adam":
        return []
    return [_cause("step_counters", FP32_BYTES * weight_tensor_count(run.spec))]


def check_run(run: MeasuredRun) -> EstimateCheck:
    """The estimate of every compared term for `run`, next to what PyTorch measured."""
    setup = setup_for(run)
    state = replicated_terms(setup)
    require(
        state.master_weights_bytes == 0,
        f"{run.config_id}: the measured runs keep no separate master copy of the weights.",
    )
    tokens = {"micro_batch": run.batch, "seq_len": run.seq_len}
    estimates = {
        "parameters": state.parameters_bytes,
        "gradients": state.gradients_bytes,
        "optimizer_state": state.optimizer_state_bytes,
        "optimizer_step_counters": 0,
        # whole-number tokens give a number (these functions also take arrays of tokens)
        "saved_activations_layers": run.spec.layers * float(layer_activation_bytes(setup, **tokens)),
        "saved_activations_other": float(output_activation_bytes(setup, **tokens)),
    }
    causes = {
        "optimizer_step_counters": _step_causes(run),
        "saved_activations_layers": _layer_causes(run),
        "saved_activations_other": _other_causes(run),
    }
    rows = tuple(
        TermCheck(
            term=term,
            label=COMPARED_LABELS[term],
            budget_term=BUDGET_TERM[term],
            estimate_bytes=round(estimates[term]),
            measured_bytes=run.term_bytes(term),
            causes=tuple(causes.get(term, ())),
        )
        for term in COMPARED_TERMS
    )
    return EstimateCheck(run=run, setup=setup, rows=rows)


@cache
def estimate_check(config_id: str) -> EstimateCheck:
    """The check of the measured configuration called `config_id`."""
    return check_run(measured_run(config_id))


def all_checks() -> tuple[EstimateCheck, ...]:
    """The check of every measured configuration, in file order."""
    return tuple(estimate_check(run.config_id) for run in load_measured())


def config_label(config_id: str) -> str:
    """A measured configuration in words, for a picker."""
    run = measured_run(config_id)
    return (
        f"{FAMILY_WORDS[run.spec.name]} · {run.dtype.upper()} · {run.seq_len} tokens × {run.batch} · "
        f"{OPTIMIZER_WORDS[run.optimizer]} · {RECOMPUTE_WORDS[run.recompute]} · "
        f"{ATTENTION_WORDS[run.attention]}"
    )


def table_rows(check: EstimateCheck) -> list[dict[str, str]]:
    """The comparison as table rows: term, estimate, measured and relative error, bytes with thousands
    separators."""
    return [
        {
            "Term": row.label,
            "Estimate (bytes)": f"{row.estimate_bytes:,}",
            "PyTorch (bytes)": f"{row.measured_bytes:,}",
            "Relative error": row.error_text,
        }
        for row in check.rows
    ]


def setup_sentence(check: EstimateCheck) -> str:
    """Which estimate the measured bytes are compared with, in words."""
    spec, setup = check.run.spec, check.setup
    return (
        f"Compared with the detailed estimate for the same {FAMILY_WORDS[spec.name]} model (hidden "
        f"{spec.hidden}, "
        f"{spec.layers} layers, {spec.heads} heads, {spec.kv_heads} KV heads, MLP {spec.intermediate} wide, "
        f"vocabulary {spec.vocab}): {precision_label(setup.precision)}; "
        f"{BudgetOptimizer.label_of(setup.optimizer)}; "
        f"micro-batches of {setup.micro_batch} × {setup.seq_len} tokens; {RECOMPUTE_WORDS[setup.recompute]}; "
        f"{setup.attention.replace('_', '-')} attention. Measured with PyTorch "
        f"{check.run.torch_version} on the CPU."
    )


def _direction(error_percent: float) -> str:
    return "under" if error_percent < 0 else "over"


def _gap_clause(row: TermCheck) -> str:
    error = row.error_percent
    if row.estimate_bytes == 0 or error is None:
        return f"{row.label.lower()} (left out, {row.gap_bytes:,} bytes)"
    return f"{row.label.lower()} ({abs(error):.1f}% {_direction(error)}, {abs(row.gap_bytes):,} bytes)"


def gap_sentence(check: EstimateCheck, *, largest: int = 2, causes: int = 3) -> str:
    """What the larger gaps of one check are and what they are made of, computed from its rows."""
    state_gap = sum(abs(check.row(term).gap_bytes) for term in STATE_TERMS)
    opening = (
        "Parameters, gradients and optimizer state match PyTorch to the byte."
        if state_gap == 0
        else f"Parameters, gradients and optimizer state differ from PyTorch by {state_gap:,} bytes in all."
    )
    gaps = sorted((row for row in check.rows if row.gap_bytes), key=lambda row: -abs(row.gap_bytes))
    if not gaps:
        return opening + " So does every other term."
    sizes = " and for ".join(_gap_clause(row) for row in gaps[:largest])
    by_cause: dict[str, int] = {}
    for row in gaps[:largest]:
        for cause in row.causes:
            by_cause[cause.key] = by_cause.get(cause.key, 0) + cause.explained_bytes
    ranked = sorted((key for key, n in by_cause.items() if n), key=lambda key: -by_cause[key])
    text = f"{opening} The estimate is furthest off for {sizes}."
    if ranked:
        named = "; ".join(f"{CAUSE_WORDS[key]} ({by_cause[key]:,} bytes)" for key in ranked[:causes])
        text += f" What makes up the difference: {named}."
    unexplained = sum(row.unexplained_bytes for row in gaps[:largest])
    if abs(unexplained) > 0.05 * sum(abs(row.gap_bytes) for row in gaps[:largest]):
        text += f" {unexplained:,} bytes have no named cause."
    return text


@dataclass(frozen=True)
class WorstGap:
    """The measured run where the estimate of one term is furthest from PyTorch."""

    term: str
    label: str
    config_id: str
    error_percent: float
    main_cause: str


def worst_gaps(checks: tuple[EstimateCheck, ...] | None = None) -> tuple[WorstGap, ...]:
    """For each compared term, the run with the largest relative error and the cause that explains most of
    it."""
    checks = all_checks() if checks is None else checks
    found = []
    for term in COMPARED_TERMS:
        rows = [
            (check.run.config_id, check.row(term), error)
            for check in checks
            if (error := check.row(term).error_percent) is not None
        ]
        config_id, row, error = max(rows, key=lambda found: abs(found[2]))
        main = (
            max(row.causes, key=lambda cause: cause.explained_bytes).words
            if row.causes and row.gap_bytes
            else "none: exact"
        )
        found.append(
            WorstGap(
                term=term,
                label=row.label,
                config_id=config_id,
                error_percent=error,
                main_cause=main,
            )
        )
    return tuple(found)


def worst_gap_rows(gaps: tuple[WorstGap, ...]) -> list[dict[str, str]]:
    """The worst gaps as table rows: term, the run, its relative error and the cause behind most of it."""
    return [
        {
            "Term": gap.label,
            "Furthest-off run": config_label(gap.config_id),
            "Relative error": "exact" if gap.error_percent == 0 else f"{gap.error_percent:+.1f}%",
            "Main cause": gap.main_cause,
        }
        for gap in gaps
    ]


@dataclass(frozen=True)
class CheckSummary:
    """All measured runs at once: how far the estimate strays, with and without the known causes."""

    runs: int
    state_exact: bool
    worst_activation_error_percent: dict[str, float]  # by model family, signed
    worst_gpu_error_percent: float  # activations, with only the CPU-only causes added
    worst_explained_error_percent: float  # activations, with every known cause added


def _signed_extreme(values: list[float]) -> float:
    return max(values, key=abs)


def check_summary(checks: tuple[EstimateCheck, ...] | None = None) -> CheckSummary:
    """How close the estimate is over every measured run, per family and once the known causes are added."""
    checks = all_checks() if checks is None else checks
    activation_rows = [
        (check.run.spec.name, check.row(term)) for check in checks for term in ACTIVATION_TERMS
    ]
    every_cause = tuple(CAUSE_WORDS)
    return CheckSummary(
        runs=len(checks),
        state_exact=all(check.row(term).gap_bytes == 0 for check in checks for term in STATE_TERMS),
        worst_activation_error_percent={
            family: 100
            * _signed_extreme([row.error_with(()) for name, row in activation_rows if name == family])
            for family in FAMILIES
            if any(name == family for name, _ in activation_rows)
        },
        worst_gpu_error_percent=100
        * _signed_extreme([row.error_with(PLATFORM_CAUSES) for _, row in activation_rows]),
        worst_explained_error_percent=100
        * _signed_extreme([row.error_with(every_cause) for _, row in activation_rows]),
    )


def summary_sentence(summary: CheckSummary) -> str:
    """The whole comparison in two sentences, for under the chart."""
    state = (
        "parameters, gradients and optimizer state match to the byte"
        if summary.state_exact
        else "parameters, gradients or optimizer state miss somewhere"
    )
    families = " and ".join(
        f"at most {abs(error):.1f}% {_direction(error)} for {FAMILY_WORDS[family]} runs"
        for family, error in summary.worst_activation_error_percent.items()
    )
    return (
        f"Across all {summary.runs} measured runs, {state}; the saved activations are {families}. "
        "Taking out the CPU's unfused RMSNorm leaves every run within "
        f"{abs(summary.worst_gpu_error_percent):.1f}%, "
        "and with every cause named here added the estimate is within "
        f"{abs(summary.worst_explained_error_percent):.2f}%."
    )


def chart_description(check: EstimateCheck) -> str:
    """One line saying what the comparison chart draws, for under it and for screen readers."""
    gaps = [
        (row.label, error)
        for row in check.rows
        if row.gap_bytes and row.estimate_bytes and (error := row.error_percent) is not None
    ]
    widest = max(gaps, key=lambda gap: abs(gap[1]), default=None)
    ending = (
        f"the widest gap is {widest[0].lower()}, {abs(widest[1]):.1f}% {_direction(widest[1])}"
        if widest
        else "every estimated term sits on its measured one"
    )
    return (
        f"Dot plot of {len(check.rows)} memory terms on a logarithmic byte axis, the estimate as a "
        "circle and "
        f"PyTorch's bytes as a diamond, joined by a grey line where they differ; {ending}."
    )


@dataclass(frozen=True)
class CheckView:
    """Everything the page shows for one measured run: the check, its table rows and the sentences about
    it."""

    check: EstimateCheck
    setup_text: str
    table: tuple[dict[str, str], ...]
    chart_description: str
    gap_text: str
    summary_text: str
    worst_table: tuple[dict[str, str], ...]


@cache  # one per measured run: every learner who picks the run sees the same view
def check_view(config_id: str) -> CheckView:
    """The page's view of the measured run `config_id`, every sentence computed from the numbers."""
    check = estimate_check(config_id)
    return CheckView(
        check=check,
        setup_text=setup_sentence(check),
        table=tuple(table_rows(check)),
        chart_description=chart_description(check),
        gap_text=gap_sentence(check),
        summary_text=summary_sentence(check_summary()),
        worst_table=tuple(worst_gap_rows(worst_gaps())),
    )
