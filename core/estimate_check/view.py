"""What the Memory page shows of the estimate check: a run in words, the table rows, and the sentences about
the gaps, computed from the comparison's numbers; their wording is in `data/lessons/memory/sentences.toml`
(filled here, since each is assembled from several templates)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core import lessons
from core.estimate_check.causes import CAUSES
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
from core.memory import BudgetOptimizer, check_choice
from core.memory.settings import precision_label

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
        f"{FAMILY_WORDS[run.spec.name]} · {run.dtype.upper()} · {run.seq_len:,} tokens × {run.batch:,} · "
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
    return lessons.sentence(
        "memory",
        "check_setup",
        family=FAMILY_WORDS[spec.name],
        hidden=spec.hidden,
        layers=spec.layers,
        heads=spec.heads,
        kv_heads=spec.kv_heads,
        intermediate=spec.intermediate,
        vocab=spec.vocab,
        precision=precision_label(setup.precision),
        optimizer=BudgetOptimizer.label_of(setup.optimizer),
        micro_batch=setup.micro_batch,
        seq_len=setup.seq_len,
        recompute=RECOMPUTE_WORDS[setup.recompute],
        attention=setup.attention.replace("_", "-"),
        torch_version=check.run.torch_version,
    )


def cause_words(key: str) -> str:
    """What a known cause of a gap is, in words (`data/lessons/memory/sentences.toml`, under its key)."""
    return lessons.sentence("memory", check_choice(key, CAUSES, "cause"))


def _gap_clause(row: TermCheck) -> str:
    error, term = row.error_percent, row.label.lower()
    if row.estimate_bytes == 0 or error is None:
        return lessons.sentence("memory", "gap_left_out", term=term, gap_bytes=row.gap_bytes)
    figures = {"term": term, "percent": abs(error), "gap_bytes": abs(row.gap_bytes)}
    if error < 0:
        return lessons.sentence("memory", "gap_under", **figures)
    return lessons.sentence("memory", "gap_over", **figures)


def gap_sentence(check: EstimateCheck, *, largest: int = 2, causes: int = 3) -> str:
    """What the larger gaps of one check are and what they are made of, computed from its rows."""
    state_gap = sum(abs(check.row(term).gap_bytes) for term in STATE_TERMS)
    opening = (
        lessons.sentence("memory", "state_exact")
        if state_gap == 0
        else lessons.sentence("memory", "state_off", gap_bytes=state_gap)
    )
    gaps = sorted((row for row in check.rows if row.gap_bytes), key=lambda row: -abs(row.gap_bytes))
    if not gaps:
        return f"{opening} {lessons.sentence('memory', 'no_other_gap')}"
    by_cause: dict[str, int] = {}
    for row in gaps[:largest]:
        for cause in row.causes:
            by_cause[cause.key] = by_cause.get(cause.key, 0) + cause.explained_bytes
    ranked = sorted((key for key, n in by_cause.items() if n), key=lambda key: -by_cause[key])
    terms = " and for ".join(_gap_clause(row) for row in gaps[:largest])
    said = [opening, lessons.sentence("memory", "furthest_off", terms=terms)]
    if ranked:
        named = "; ".join(
            lessons.sentence("memory", "cause_bytes", cause=cause_words(key), explained_bytes=by_cause[key])
            for key in ranked[:causes]
        )
        said.append(lessons.sentence("memory", "made_of", causes=named))
    unexplained = sum(row.unexplained_bytes for row in gaps[:largest])
    if abs(unexplained) > 0.05 * sum(abs(row.gap_bytes) for row in gaps[:largest]):
        said.append(lessons.sentence("memory", "unexplained", unexplained_bytes=unexplained))
    return " ".join(said)


def worst_gap_rows(gaps: tuple[WorstGap, ...]) -> list[dict[str, str]]:
    """The worst gaps as table rows: term, the run, its relative error and the cause behind most of it."""
    return [
        {
            "Term": gap.label,
            "Furthest-off run": config_label(gap.config_id),
            "Relative error": "exact" if gap.error_percent == 0 else f"{gap.error_percent:+.1f}%",
            "Main cause": (
                lessons.sentence("memory", "exact_no_cause")
                if gap.main_cause is None
                else cause_words(gap.main_cause)
            ),
        }
        for gap in gaps
    ]


def _family_clause(family: str, error_percent: float) -> str:
    figures = {"percent": abs(error_percent), "family": FAMILY_WORDS[family]}
    if error_percent < 0:
        return lessons.sentence("memory", "family_under", **figures)
    return lessons.sentence("memory", "family_over", **figures)


def summary_sentence(summary: CheckSummary) -> str:
    """The whole comparison in two sentences, for under the chart."""
    state = (
        lessons.sentence("memory", "summary_state_exact")
        if summary.state_exact
        else lessons.sentence("memory", "summary_state_off")
    )
    families = " and ".join(
        _family_clause(family, error) for family, error in summary.worst_activation_error_percent.items()
    )
    return lessons.sentence(
        "memory",
        "check_summary",
        runs=summary.runs,
        state=state,
        families=families,
        gpu_percent=abs(summary.worst_gpu_error_percent),
        explained_percent=abs(summary.worst_explained_error_percent),
    )


def chart_description(check: EstimateCheck) -> str:
    """One line saying what the comparison chart draws, for under it and for screen readers."""
    gaps = [
        (row.label, error)
        for row in check.rows
        if row.gap_bytes and row.estimate_bytes and (error := row.error_percent) is not None
    ]
    widest = max(gaps, key=lambda gap: abs(gap[1]), default=None)
    if widest is None:
        ending = lessons.sentence("memory", "no_gap")
    elif widest[1] < 0:
        ending = lessons.sentence("memory", "widest_under", term=widest[0].lower(), percent=abs(widest[1]))
    else:
        ending = lessons.sentence("memory", "widest_over", term=widest[0].lower(), percent=abs(widest[1]))
    return lessons.sentence("memory", "check_chart", terms=len(check.rows), ending=ending)


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
