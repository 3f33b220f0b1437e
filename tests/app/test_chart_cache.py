"""Charts drawn through ui.charts: one spec per key, shared by every session, bounded in number."""

import json

from tests.app.conftest import open_page
from ui import charts


def test_a_second_learner_gets_the_same_spec_without_rebuilding_it(monkeypatch):
    first = open_page("pages/four_runs.py")
    built = []
    original = charts.cached_chart

    def counting(key, build):
        return original(key, lambda: built.append(key) or build())

    monkeypatch.setattr(charts, "cached_chart", counting)
    second = open_page("pages/four_runs.py")
    assert built == []  # every telemetry chart came from the cache
    specs = [json.loads(c.proto.spec) for c in second.get("vega_lite_chart")]
    assert specs == [json.loads(c.proto.spec) for c in first.get("vega_lite_chart")]
    assert all("continuousWidth" not in spec.get("config", {}).get("view", {}) for spec in specs)


def test_the_cache_forgets_the_oldest_specs_beyond_its_limit(monkeypatch):
    monkeypatch.setattr(charts, "MAX_SPECS", 3)
    monkeypatch.setattr(charts, "_charts", charts.OrderedDict())
    import altair as alt
    import pandas as pd

    def chart():
        return alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")

    for n in range(5):
        charts.cached_chart(("test", n), chart)
    assert list(charts._charts) == [("test", 2), ("test", 3), ("test", 4)]


def _draw_both_ways():
    import altair as alt
    import pandas as pd
    import streamlit as st

    from ui.charts import draw

    def chart():
        rows = pd.DataFrame({"step": [1, 2, 3], "loss_nats": [2.3, 1.9, float("nan")], "run": ["a", "b", "c"]})
        return alt.Chart(rows).mark_line().encode(x="step:Q", y="loss_nats:Q", color="run:N")

    draw(("equivalence-test",), chart, description="cached")
    spec = chart().to_dict(validate=False)
    spec["config"]["view"].pop("continuousWidth", None)
    spec["config"]["view"].pop("continuousHeight", None)
    st.vega_lite_chart(spec=spec, width="stretch", height="content", alt="cached")


def test_a_cached_chart_reaches_the_browser_exactly_as_an_uncached_one_would():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_draw_both_ways).run()
    cached, direct = (c.proto for c in at.get("vega_lite_chart"))
    assert json.loads(cached.spec) == json.loads(direct.spec)
    assert [(d.name, d.data.data) for d in cached.datasets] == [(d.name, d.data.data) for d in direct.datasets]
    assert len(cached.datasets) == 1 and cached.datasets[0].data.data  # the rows travel as Arrow bytes
