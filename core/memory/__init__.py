"""Training memory as one pipeline, its modules in the order the data flows, none importing a later one
(tests/core/test_memory_pipeline.py checks it):

- `budget`: the terms every estimate fills, and what each does with them (shard, judge, sweep);
- `settings`: every choice a step is run with (the phase model's stacks, conventions, attention and
  optimizers; the detailed estimate's precisions, recomputation and attention; the lesson's dtype);
- `setup`: one training step as each estimate reads it, its settings validated together;
- count: `count` (what a step keeps, the result every stack's count fills), `lesson` (the lesson's
  first-order count, kept exactly as the seed has it), `detailed` (the Korthikanti count, per GPU), and
  one module per stack, `hf_stack` and `fused_stack`;
- `phases`: forward, backward and the optimizer step, each with its own peak;
- verdict: `allocator` (the caching allocator's rounding and cap), `verdict` (a device's capacity),
  `timeline` (two steps moment by moment) and `first_oom` (the step and phase where a run first fails);
- view: `reference` (the H200 measurements) and `view` (what the Memory and Run A pages show).

The budget terms are re-exported here, so `from core.memory import MemoryTerms` keeps working.
"""

from core.memory.budget import (
    BYTES_PER_GB,
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
