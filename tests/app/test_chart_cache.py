"""Charts drawn through ui.charts: one spec per key, shared by every session, bounded in number."""

import json

import pytest
from streamlit.proto.Block_pb2 import Block
from streamlit.testing.v1 import AppTest

from core.units import significant
from tests.app.conftest import chart_rows, open_page, reveal_roofline, sort_four_runs
from ui import charts


def test_a_second_learner_gets_the_same_spec_without_rebuilding_it(monkeypatch):
    first = sort_four_runs(open_page("pages/four_runs.py"))
    built = []
    original = charts.cached_chart

    def counting(key, build):
        def build_and_count():
            built.append(key)
            return build()

        return original(key, build_and_count)

    monkeypatch.setattr(charts, "cached_chart", counting)
    second = sort_four_runs(open_page("pages/four_runs.py"))
    assert built == []  # every telemetry chart came from the cache
    specs = [json.loads(c.proto.spec) for c in second.get("vega_lite_chart")]
    assert specs == [json.loads(c.proto.spec) for c in first.get("vega_lite_chart")]
    assert all("continuousWidth" not in spec.get("config", {}).get("view", {}) for spec in specs)
    # Only the width is fitted: a chart's height is its plot's, whatever its legend and title take.
    assert all(spec["autosize"] == {"type": "fit-x", "contains": "padding"} for spec in specs)


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
        rows = pd.DataFrame(
            {"step": [1, 2, 3], "loss_nats": [2.3, 1.9, float("nan")], "run": ["a", "b", "c"]}
        )
        return alt.Chart(rows).mark_line().encode(x="step:Q", y="loss_nats:Q", color="run:N")

    draw(("equivalence-test",), chart, description="cached")
    spec = chart().to_dict(validate=False)
    spec["config"]["view"].pop("continuousWidth", None)
    spec["config"]["view"].pop("continuousHeight", None)
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    st.vega_lite_chart(spec=spec, width="stretch", height="content", alt="cached")


def test_a_cached_chart_reaches_the_browser_as_an_uncached_one_would():
    at = AppTest.from_function(_draw_both_ways).run()
    cached, direct = at.get("vega_lite_chart")
    assert json.loads(cached.proto.spec) == json.loads(direct.proto.spec)
    [name] = [d.name for d in direct.proto.datasets]
    assert [d.name for d in cached.proto.datasets] == [name]
    assert (
        chart_rows(cached, name)
        == chart_rows(direct, name)
        == [
            {"step": 1, "loss_nats": 2.3, "run": "a"},
            {"step": 2, "loss_nats": 1.9, "run": "b"},
            {"step": 3, "loss_nats": None, "run": "c"},
        ]
    )


def test_moving_a_slider_sends_new_rows_without_rebuilding_the_chart(monkeypatch):
    at = reveal_roofline(open_page("pages/linear_layer.py"))
    built = []
    original = charts._prepare

    def counting(build):
        built.append(build)
        return original(build)

    monkeypatch.setattr(charts, "_prepare", counting)
    before = chart_rows(at.get("vega_lite_chart")[0], "points")
    at.slider(key="linear.batch").set_value(128).run()
    assert built == []
    after = chart_rows(at.get("vega_lite_chart")[0], "points")
    assert after[0]["FLOP/byte"] > before[0]["FLOP/byte"] and after[1:] == before[1:]  # only the layer moved
    table = at.table[0].value  # the roofline's table shows the same rows, as text
    assert list(table["Operation"]) == [row["Operation"] for row in after]
    assert list(table["FLOP per byte"]) == [significant(row["FLOP/byte"]) for row in after]


def _named_points_chart(key):
    import altair as alt

    return charts.cached_chart(
        key,
        lambda: (
            alt.Chart(alt.NamedData(name="points"))
            .mark_point()
            .encode(x="x:Q")
            .properties(datasets={"points": [{"x": 1}]})
        ),
    )


def test_rows_for_datasets_the_chart_does_not_draw_are_refused():
    chart = _named_points_chart(("test", "named"))
    assert list(chart.spec({"points": [{"x": 2}]})["datasets"]) == ["points"]
    with pytest.raises(ValueError, match=r"draws the datasets \['points'\], not \['dots'\]"):
        chart.spec({"dots": [{"x": 2}]})


def test_sessions_missing_the_same_new_key_at_once_build_it_once(monkeypatch):
    import threading
    import time

    import altair as alt
    import pandas as pd

    monkeypatch.setattr(charts, "_charts", charts.OrderedDict())
    builds = []

    def slow_chart():
        builds.append(threading.get_ident())
        time.sleep(0.2)  # long enough for every other thread to miss the cache meanwhile
        return alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")

    got = []
    threads = [
        threading.Thread(target=lambda: got.append(charts.cached_chart(("herd",), slow_chart)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert len(got) == 8 and all(chart is got[0] for chart in got)
    assert charts._building == {}


def test_a_shipped_examples_rows_are_turned_into_arrow_once_and_drawn_as_rows_would_be(monkeypatch):
    monkeypatch.setattr(charts, "_shared", charts.OrderedDict())
    owner, built = object(), []

    def rows():
        built.append(1)
        return {"points": [{"x": 1.5}, {"x": 2.5}]}

    first = charts.shared_datasets(owner, True, rows)
    assert charts.shared_datasets(owner, True, rows) is first
    assert built == [1]
    charts.shared_datasets(owner, False, rows)  # another variant of the same example
    charts.shared_datasets(object(), True, rows)  # another example
    assert built == [1, 1, 1]
    assert first == {"points": charts.arrow_bytes([{"x": 1.5}, {"x": 2.5}])}
    chart = _named_points_chart(("test", "shared rows"))
    assert chart.spec(first)["datasets"] == chart.spec(rows())["datasets"]


def test_the_shared_rows_forget_the_oldest_beyond_their_limit(monkeypatch):
    monkeypatch.setattr(charts, "_shared", charts.OrderedDict())
    monkeypatch.setattr(charts, "MAX_SHARED_DATASETS", 2)
    owners = [object(), object(), object()]
    for owner in owners:
        charts.shared_datasets(owner, True, lambda: {"points": [{"x": 1}]})
    assert [key[0] for key in charts._shared] == [id(owners[1]), id(owners[2])]


def _panels_drawn_in_slots() -> None:
    import streamlit as st

    from ui.charts import panel_slots

    for index, slot in enumerate(panel_slots(5, 2)):
        with slot:
            st.markdown(f"panel {index}")


def test_full_rows_of_panels_are_one_flex_row_and_a_short_last_row_keeps_its_columns():
    at = AppTest.from_function(_panels_drawn_in_slots).run()
    rows = [at.main.children[index] for index in sorted(at.main.children)]

    def texts(block) -> list[str]:
        return [element.value for element in block.get("markdown")]

    assert [texts(row) for row in rows] == [["panel 0", "panel 1"], ["panel 2", "panel 3"], ["panel 4"]]
    # Two panels side by side in one block each; the last, alone, in the left of two columns.
    assert [len(row.get("column")) for row in rows] == [0, 0, 2]
    horizontal = Block.FlexContainer.Direction.HORIZONTAL
    assert [row.proto.flex_container.direction for row in rows] == [horizontal] * 3
    assert [row.proto.flex_container.wrap for row in rows[:2]] == [True, True]  # a phone stacks them
