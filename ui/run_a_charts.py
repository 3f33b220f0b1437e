"""Run A's experiment and pair timelines by chart key: the page draws them, and the server builds all ten
once at start (`ui.warm`), so no learner's click waits for one.

There are four experiments and six pairs, the same for every learner; each timeline chart costs 60-75 ms of
CPU to build on an idle core (bench: `python -m bench.page_cpu --profile run-a`), far more under a class's
burst, and without this the first learner to pick each one paid it inside the click.
"""

from __future__ import annotations

from charts.run_a import timeline_chart, timeline_description
from core import lessons
from core.run_a import (
    EXPERIMENTS,
    SHORT_NAMES,
    ExperimentOutcome,
    PairOutcome,
    pairs,
    run_a_timeline,
    run_experiment,
    run_pair,
    short_label,
)
from ui.charts import ChartRecipe, cached_chart


def _experiment_title(outcome: ExperimentOutcome) -> str:
    return lessons.sentence("run_a", "experiment_chart_title", experiment=short_label(outcome.experiment))


def experiment_chart(outcome: ExperimentOutcome) -> ChartRecipe:
    """The key and builder of one experiment's timeline, drawn over Run A as briefed."""
    return (
        ("run_a.experiment", outcome.label),
        lambda: timeline_chart(outcome.timeline, title=_experiment_title(outcome), before=run_a_timeline()),
    )


def experiment_description(outcome: ExperimentOutcome) -> str:
    """What `experiment_chart` shows, for a screen reader."""
    return timeline_description(outcome.timeline, _experiment_title(outcome))


def compared_note(pair: PairOutcome) -> str:
    """What the pair's dashed line is: the experiment that moved the wall alone, or Run A as briefed."""
    compared = pair.wall_mover
    if compared:
        return lessons.sentence("run_a", "compared_alone", experiment=SHORT_NAMES[compared.experiment])
    return lessons.sentence("run_a", "compared_run_a")


def pair_chart(pair: PairOutcome) -> ChartRecipe:
    """The key and builder of two experiments together, drawn over the one compared with."""
    compared = pair.wall_mover
    return (
        ("run_a.pair", pair.together.experiment),
        lambda: timeline_chart(
            pair.together.timeline,
            title=lessons.sentence("run_a", "pair_chart_title"),
            before=compared.timeline if compared else run_a_timeline(),
            before_note=compared_note(pair),
        ),
    )


def pair_description(pair: PairOutcome) -> str:
    """What `pair_chart` shows, for a screen reader."""
    return timeline_description(pair.together.timeline, lessons.sentence("run_a", "pair_chart_title"))


def warm_run_a_charts() -> int:
    """Build every experiment's and every pair's chart into the per-process chart cache; how many."""
    recipes = [experiment_chart(run_experiment(e)) for e in EXPERIMENTS]
    recipes += [pair_chart(run_pair(p)) for p in pairs()]
    for key, build in recipes:
        cached_chart(key, build)
    return len(recipes)
