"""CPU time of the first pick of each Run A pair and experiment, in a process warmed as the server warms
itself (`ui.warm`) or cold.

    python -m bench.run_a_picks           # both, each in a fresh process
    python -m bench.run_a_picks --only cold

One in-process session (`streamlit.testing.v1.AppTest`) saves a first experiment on the Run A page and
locks the pair prediction, then picks each of the other five pairs once, and each experiment once. For
each pick it reports the process's CPU time over the rerun (AppTest waits while its script thread runs, so
this is the run's CPU and AppTest's small share): AppTest reruns the whole page where a browser reruns only
the experiments' fragment, so these are whole-page figures. Cold, every
pick builds its timeline chart; warm, `ui.run_a_charts.warm_run_a_charts` built all ten before the
first visitor, as `serve.py` does. Figures only: nothing is asserted (`bench.first_clicks` runs each mode).
"""

from __future__ import annotations

from bench import first_clicks
from bench.first_clicks import cpu_ms

EXPERIMENT_PICKS = ("optim", "gpu", "model", "batch")


def picks(*, warm: bool) -> dict[str, list[float]]:
    """CPU ms of the first pick of each pair and each experiment, in this process."""
    from core.run_a import PAIR_PREDICTION, pairs
    from tests.app.conftest import open_page, predict

    if warm:
        from ui.run_a_charts import warm_run_a_charts

        warm_run_a_charts()
    at = open_page("pages/run_a.py")
    at.radio(key="run_a.decision.choice").set_value("batch")
    at.text_area(key="run_a.decision.why").input("Activations scale with the tokens.")
    at.button[[b.label for b in at.button].index("Save my decision")].click().run()
    assert not at.exception
    predict(at, PAIR_PREDICTION, "runs")
    figures: dict[str, list[float]] = {"pairs": [], "experiments": []}
    for pair in pairs()[1:]:  # the first is drawn already
        figures["pairs"].append(cpu_ms(at.selectbox(key="run_a.pair").select(pair)))
    for experiment in EXPERIMENT_PICKS:
        figures["experiments"].append(cpu_ms(at.radio(key="run_a.experiment").set_value(experiment)))
    return figures


def main(argv: list[str] | None = None) -> int:
    return first_clicks.main(
        argv, module="bench.run_a_picks", clicks=lambda warm: picks(warm=warm), doc=__doc__
    )


if __name__ == "__main__":
    raise SystemExit(main())
