"""Every term of the detailed estimate next to the bytes PyTorch kept: for one measured run, and over all of
them (the worst gap per term, and how close the estimate is once the known causes are added)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core.datafiles import require
from core.estimate_check.causes import (
    CAUSES,
    PLATFORM_CAUSES,
    Cause,
    layer_causes,
    other_causes,
    step_causes,
)
from core.estimate_check.setups import setup_for
from core.measured import FAMILIES, MeasuredRun, load_measured, measured_run
from core.memory.detailed import layer_activation_bytes, output_activation_bytes, replicated_terms
from core.memory.setup import TrainingSetup

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
        "optimizer_step_counters": step_causes(run),
        "saved_activations_layers": layer_causes(run),
        "saved_activations_other": other_causes(run),
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


@dataclass(frozen=True)
class WorstGap:
    """The measured run where the estimate of one term is furthest from PyTorch."""

    term: str
    label: str
    config_id: str
    error_percent: float
    main_cause: str | None  # the key of the cause behind most of the gap; None: no gap, or no known cause


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
            max(row.causes, key=lambda cause: cause.explained_bytes).key
            if row.causes and row.gap_bytes
            else None
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
        * _signed_extreme([row.error_with(CAUSES) for _, row in activation_rows]),
    )
