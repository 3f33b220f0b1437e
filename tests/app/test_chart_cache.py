"""Charts drawn through ui.charts: one spec per key, shared by every session, bounded in number."""

import json

from tests.app.conftest import open_page
from ui import charts


def test_a_second_learner_gets_the_same_spec_without_rebuilding_it(monkeypatch):
    first = open_page("pages/four_runs.py")
    built = []
    original = charts._spec_json

    def counting(key, build):
        return original(key, lambda: built.append(key) or build())

    monkeypatch.setattr(charts, "_spec_json", counting)
    second = open_page("pages/four_runs.py")
    assert built == []  # every telemetry chart came from the cache
    specs = [json.loads(c.proto.spec) for c in second.get("vega_lite_chart")]
    assert specs == [json.loads(c.proto.spec) for c in first.get("vega_lite_chart")]
    assert all("continuousWidth" not in spec.get("config", {}).get("view", {}) for spec in specs)


def test_the_cache_forgets_the_oldest_specs_beyond_its_limit(monkeypatch):
    monkeypatch.setattr(charts, "MAX_SPECS", 3)
    monkeypatch.setattr(charts, "_specs", charts.OrderedDict())
    import altair as alt
    import pandas as pd

    def chart():
        return alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")

    for n in range(5):
        charts._spec_json(("test", n), chart)
    assert list(charts._specs) == [("test", 2), ("test", 3), ("test", 4)]
