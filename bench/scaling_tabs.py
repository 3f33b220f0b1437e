"""CPU time of the first open of each Scaling out part and of the click that reveals its chart, in a fresh
process warmed as the server warms itself (`server.warm`) or cold.

    python -m bench.scaling_tabs           # both, each in a fresh process
    python -m bench.scaling_tabs --only cold

One in-process session (`streamlit.testing.v1.AppTest`) opens the Scaling out page on its first part, then
for each part B to E opens its tab, and for each part A to E locks its prediction, which draws its chart at
the page's default settings. Both modes import the lab first (`server.warm.import_all`) and then freeze
what is loaded out of the garbage collector's scans, so the figures are what is left once the code is
loaded: cold, each part's first chart and the data behind it are built inside the click; warm,
`server.warm.load_shared_data` built them before the first visitor, as `serve.py` does. AppTest reruns
the whole page where a browser reruns only the parts' fragment, so these are whole-page figures.
Figures only: nothing is asserted (`bench.first_clicks` runs each mode).
"""

from __future__ import annotations

from bench import first_clicks
from bench.first_clicks import Figures, cpu_ms

PREDICTIONS = {"A": "below-half", "B": "optimizer", "C": "within", "D": "faster-oom", "E": "strict"}


def clicks(*, warm: bool) -> Figures:
    """CPU ms of the first open of parts B to E, then of locking each part's prediction, in this process."""
    from core.scaling.scenarios import load_scaling
    from server import warm as warming
    from tests.app.conftest import open_page

    warming.import_all()
    if warm:
        warming.load_shared_data()
    warming.freeze_loaded()  # as serve.py does once warm: what is loaded leaves the collector's scans
    at = open_page("pages/scaling.py")
    parts = load_scaling().parts
    figures: Figures = {"open B-E": [], "lock A-E": []}
    for part in "BCDE":
        at.session_state["scaling.part"] = parts[part].tab  # as a click on the tab does
        figures["open B-E"].append(cpu_ms(at))
    for part, option in PREDICTIONS.items():
        at.session_state["scaling.part"] = parts[part].tab
        at.run()
        at.radio(key=f"scaling.predict.{part}").set_value(option)
        figures["lock A-E"].append(cpu_ms(at.button(key=f"scaling.predict.{part}.lock").click()))
    assert not at.exception and len(at.get("vega_lite_chart")) == 1
    return figures


def main(argv: list[str] | None = None) -> int:
    return first_clicks.main(
        argv, module="bench.scaling_tabs", clicks=lambda warm: clicks(warm=warm), doc=__doc__
    )


if __name__ == "__main__":
    raise SystemExit(main())
