"""Training memory, modules in the order data flows, none reaching back up: `budget` (the terms every
estimate fills) → `settings` (stacks, precision conventions, optimizers) → `setup` (one training step)
→ `count`, `hf_stack`, `fused_stack` (what a step keeps, per stack) → `phases` (forward, backward,
optimizer step) → `timeline` (moment by moment) → `verdict` (a device's capacity) → `reference` (the
H200 measurements) → `view` (what the pages show).

The budget terms are re-exported here, so `from core.memory import MemoryTerms` keeps working.
"""

from core.memory.budget import (
    BYTES_PER_GB,
    LEVERS,
    LOGIT_BYTES,
    OPTIMIZER_STATE_BYTES_PER_VALUE,
    TERM_LABELS,
    TERMS,
    WORKSPACE_BYTES,
    ZERO_SHARDED_TERMS,
    ZERO_STAGES,
    BudgetOptimizer,
    MemorySweep,
    MemoryTerms,
    Precision,
    SweepAxis,
    TermShare,
    Verdict,
    accumulation_steps,
    budget_verdict,
    check_choice,
    check_whole,
    effective_batch,
    model_state_terms,
    optimizer_state_values,
    sweep_totals,
    to_gb,
    zero_sharded,
)

__all__ = [
    "BYTES_PER_GB",
    "WORKSPACE_BYTES",
    "OPTIMIZER_STATE_BYTES_PER_VALUE",
    "LOGIT_BYTES",
    "TERMS",
    "TERM_LABELS",
    "LEVERS",
    "BudgetOptimizer",
    "ZERO_STAGES",
    "ZERO_SHARDED_TERMS",
    "to_gb",
    "check_whole",
    "check_choice",
    "optimizer_state_values",
    "TermShare",
    "MemoryTerms",
    "Precision",
    "model_state_terms",
    "zero_sharded",
    "effective_batch",
    "accumulation_steps",
    "Verdict",
    "budget_verdict",
    "SweepAxis",
    "MemorySweep",
    "sweep_totals",
]
