"""What the Memory page shows of the estimate check: a run in words, the table rows, and the sentences about
the gaps, every one computed from the comparison's numbers."""

from __future__ import annotations

from dataclasses import dataclass

from core.estimate_check.causes import CAUSE_WORDS
from core.estimate_check.compare import (
    STATE_TERMS,
    CheckSummary,
    EstimateCheck,
    TermCheck,
    WorstGap,
    check_summary,
    estimate_check,
    worst_gaps,
)
from core.measured import measured_run
from core.memory import BudgetOptimizer
from core.memory.detailed import precision_label

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
