"""Run A, the out-of-memory run: its configuration, the four first experiments run on the model,
budget against leak, and the learner's decision and reflection.

Every figure comes from the phase model (`core.memory.phases`) played out moment by moment
(`core.memory.timeline`) on the Hugging Face stack Run A was run with; what the H200 really did comes
from the reference's run_a.csv (`core.memory.reference`); the page's content comes from `data/run_a.json`.

Modules in the order they build on each other, none reaching back up: `experiments` (the first
experiments by id, and their pairs) → `scenario` (the data file, validated, and Run A's timeline) →
`brief` (Run A's figures, its phase table, the H200 grid) → `outcomes` (each experiment run on the
model) → `two_changes` (two at once, and the prediction before them) → `leak` (budget against leak) →
`decision` (the learner's records and their feedback). The names the pages use are re-exported here.
"""

from core.run_a.brief import (
    BriefFigures,
    MapCell,
    brief_figures,
    brief_sentence,
    estimated_outcome,
    map_agreement,
    outcome_map,
    phase_rows,
)
from core.run_a.decision import (
    DECISION_RECORD,
    MAX_TEXT_CHARS,
    REFLECTION_RECORD,
    decision_record,
    feedback,
    reflection_record,
    saved_choice_index,
    stored_text,
)
from core.run_a.experiments import EXPERIMENTS, FIRST_EXPERIMENTS, SHORT_NAMES, pair_experiments, pairs
from core.run_a.leak import IterationSeries, Leak, budget_series, leak
from core.run_a.outcomes import (
    ExperimentOutcome,
    change_rows,
    pair_label,
    reach_rows,
    run_experiment,
    short_label,
)
from core.run_a.scenario import RunAContent, Scenario, load_content, parse_content, run_a_timeline
from core.run_a.two_changes import PAIR_PREDICTION, PREDICTED_PAIR, REACHES, PairOutcome, reach, run_pair

__all__ = [
    "DECISION_RECORD",
    "EXPERIMENTS",
    "FIRST_EXPERIMENTS",
    "MAX_TEXT_CHARS",
    "PAIR_PREDICTION",
    "PREDICTED_PAIR",
    "REACHES",
    "REFLECTION_RECORD",
    "SHORT_NAMES",
    "BriefFigures",
    "ExperimentOutcome",
    "IterationSeries",
    "Leak",
    "MapCell",
    "PairOutcome",
    "RunAContent",
    "Scenario",
    "brief_figures",
    "brief_sentence",
    "budget_series",
    "change_rows",
    "decision_record",
    "estimated_outcome",
    "feedback",
    "leak",
    "load_content",
    "map_agreement",
    "outcome_map",
    "pair_experiments",
    "pair_label",
    "pairs",
    "parse_content",
    "phase_rows",
    "reach",
    "reach_rows",
    "reflection_record",
    "run_a_timeline",
    "run_experiment",
    "run_pair",
    "saved_choice_index",
    "short_label",
    "stored_text",
]
