"""Putting the four detectors together: every verdict, the primary kind, and a form for JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import lessons
from core.diagnose.columns import RunLog, guess_mapping, role, run_log
from core.diagnose.detectors import (
    KINDS,
    LIKELY,
    POSSIBLE,
    Finding,
    RunContext,
    correctness,
    numerical,
    resource,
    throughput,
)
from core.diagnose.formats import Table, read_log

HEALTHY = "healthy"
# When two kinds are equally sure, the one that ends a run first names it: a nan or an
# out-of-memory stops training, a model that learns nothing wastes it, a slow one only delays it.
PRIORITY = ("numerical", "resource", "correctness", "throughput")


@dataclass(frozen=True)
class Diagnosis:
    """The four findings in the lesson's order, the primary kind and one sentence that says it."""

    findings: tuple[Finding, ...]
    primary: str
    summary: str

    def finding(self, kind: str) -> Finding:
        """The finding for one failure kind."""
        return next(f for f in self.findings if f.kind == kind)


def primary_kind(findings: tuple[Finding, ...]) -> str:
    """The surest kind (likely before possible, ties by PRIORITY), or `healthy` when none shows a sign."""
    for verdict in (LIKELY, POSSIBLE):
        for kind in PRIORITY:
            if any(f.kind == kind and f.verdict == verdict for f in findings):
                return kind
    return HEALTHY


def _summary(primary: str, findings: tuple[Finding, ...]) -> str:
    if primary != HEALTHY:
        found = next(f for f in findings if f.kind == primary)
        if found.verdict == LIKELY:
            return lessons.sentence("diagnose", "primary_likely", kind=primary, summary=found.summary)
        return lessons.sentence("diagnose", "primary_possible", kind=primary, summary=found.summary)
    missing = sorted({m for f in findings for m in f.missing})
    if not missing:
        return lessons.sentence("diagnose", "healthy")
    return lessons.sentence("diagnose", "healthy_unchecked", missing="; ".join(missing))


def diagnose(run: RunLog, context: RunContext) -> Diagnosis:
    """Run every detector on the log and name the primary kind."""
    by_kind = {
        "resource": resource(run, context),
        "throughput": throughput(run, context),
        "numerical": numerical(run),
        "correctness": correctness(run, context),
    }
    findings = tuple(by_kind[kind] for kind in KINDS)
    primary = primary_kind(findings)
    return Diagnosis(findings=findings, primary=primary, summary=_summary(primary, findings))


def diagnose_log(run: RunLog, context: RunContext) -> Diagnosis:
    """`diagnose` for a file a learner gave: numbers so large (or so near zero) that the detectors'
    arithmetic overflows get a sentence, not Python's words."""
    try:
        return diagnose(run, context)
    except ArithmeticError:
        raise ValueError(
            "Some numbers in this log are too large, or too close to zero, to work with (such as 1e+300); "
            "check that each column holds what its name says."
        ) from None


def mapped_run(table: Table, mapping: Mapping[str, str | None], context: RunContext) -> RunLog:
    """The table read through `mapping`; ValueError when no column the detectors read is mapped."""
    run = run_log(table, mapping, device_gb=context.device_gb)
    if not run.series:
        raise ValueError(
            "None of this log's columns is one the diagnosis reads (loss, memory, timing, utilisation...). "
            f"Its columns are: {', '.join(table.columns)}."
        )
    return run


def diagnose_bytes(data: bytes, name: str, context: RunContext) -> tuple[Table, RunLog, Diagnosis]:
    """Read a log file's bytes, map its columns by name and diagnose it (what the command line does)."""
    table = read_log(data, name)
    run = mapped_run(table, guess_mapping(table.columns), context)
    return table, run, diagnose_log(run, context)


def as_json(run: RunLog, diagnosis: Diagnosis) -> dict[str, Any]:
    """The diagnosis as plain JSON data: format, columns used, `primary` and each kind's finding."""
    return {
        "format": run.format,
        "rows": run.rows,
        "columns": {
            "step": run.step_column,
            **{role_id: series.column for role_id, series in run.series.items()},
        },
        "primary": diagnosis.primary,
        "summary": diagnosis.summary,
        "findings": {
            f.kind: {
                "verdict": f.verdict,
                "summary": f.summary,
                "evidence": list(f.evidence),
                "missing": list(f.missing),
                "next_step": f.next_step,
                "page": f.page_title,
            }
            for f in diagnosis.findings
        },
    }


def column_lines(run: RunLog) -> tuple[str, ...]:
    """One line per mapped column: the quantity, the column and how its unit was read."""
    step = run.step_column or lessons.sentence("diagnose", "no_step_column")
    lines = [f"step: {step}"]
    lines += [f"{role(r).label}: {s.column} ({s.unit_note})" for r, s in run.series.items()]
    return tuple(lines)
