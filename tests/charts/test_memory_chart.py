"""Memory charts: fixed term colours, the device rule, tooltips on every mark, the breaking point."""

import pytest

from charts.memory import TERM_COLOURS, budget_chart, sweep_chart
from core.memory import TERM_LABELS, TERMS, MemoryTerms
from core.memory.lesson import lesson_sweep, lesson_terms
from core.memory.setup import LessonSetup

SETUP = LessonSetup(hidden=2048, layers=16, dtype="fp32", optimizer="adam", batch=4, seq_len=1024)


def marks(spec: dict) -> list[dict]:
    """Every single-view chart in a (possibly nested) layer spec."""
    if "layer" in spec:
        return [m for layer in spec["layer"] for m in marks(layer)]
    return [spec]


def rows(spec: dict, index: int) -> list[dict]:
    """The data rows the `index`-th single view draws (its own data or its enclosing layer's)."""
    found: list[str] = []

    def walk(node: dict, inherited: str | None) -> None:
        name = node.get("data", {}).get("name", inherited)
        if "layer" in node:
            for layer in node["layer"]:
                walk(layer, name)
        else:
            found.append(name)

    walk(spec, None)
    return spec["datasets"][found[index]]


def mark_type(view: dict) -> str:
    mark = view["mark"]
    return mark["type"] if isinstance(mark, dict) else mark


def test_every_term_has_its_own_colour():
    assert set(TERM_COLOURS) == set(TERMS)
    assert len(set(TERM_COLOURS.values())) == len(TERMS)


def test_budget_chart_stacks_terms_in_fixed_colours_against_the_device():
    spec = budget_chart(
        [("The lesson's five terms", lesson_terms(SETUP))],
        device_gb=24,
        device_label="24 GB device",
        title="Budget",
    ).to_dict()
    assert spec["title"] == "Budget"
    bars, rule, text = marks(spec)
    assert (mark_type(bars), mark_type(rule), mark_type(text)) == ("bar", "rule", "text")
    assert bars["encoding"]["x"]["title"] == "Memory (GB)" and bars["encoding"]["x"]["stack"] == "zero"
    scale = bars["encoding"]["color"]["scale"]
    five = ["parameters", "gradients", "optimizer_state", "activations", "workspace"]
    assert scale["domain"] == [TERM_LABELS[t] for t in five]
    assert scale["range"] == [TERM_COLOURS[t] for t in five]
    assert all("tooltip" in view["encoding"] for view in marks(spec))
    assert [t["title"] for t in bars["encoding"]["tooltip"]] == ["Term", "Memory (GB)", "Share of total (%)"]
    assert rows(spec, 1) == rows(spec, 2) == [{"gb": 24, "label": "24 GB device"}]


def test_budget_chart_draws_one_bar_per_budget_and_keeps_colours_across_charts():
    sharded = MemoryTerms(parameters_bytes=1e9, master_weights_bytes=2e9, communication_buffers_bytes=1e9)
    spec = budget_chart(
        [("Replicated", lesson_terms(SETUP)), ("ZeRO-3", sharded)],
        device_gb=80,
        device_label="H100",
        title="Plans",
    ).to_dict()
    bars = marks(spec)[0]
    assert {row["bar"] for row in rows(spec, 0)} == {"Replicated", "ZeRO-3"}
    assert [row["term"] for row in rows(spec, 0) if row["bar"] == "ZeRO-3"] == [
        "parameters",
        "master_weights",
        "communication_buffers",
    ]
    assert bars["encoding"]["y"]["sort"] == ["Replicated", "ZeRO-3"]
    colours = dict(
        zip(
            bars["encoding"]["color"]["scale"]["domain"],
            bars["encoding"]["color"]["scale"]["range"],
            strict=True,
        )
    )
    assert colours["Parameters"] == TERM_COLOURS["parameters"]
    assert colours["Communication buffers"] == TERM_COLOURS["communication_buffers"]


def test_sweep_chart_marks_where_the_budget_breaks():
    sweep = lesson_sweep(SETUP, axis="seq_len", values=range(512, 8193, 512), device_gb=24)
    spec = sweep_chart(sweep, device_label="24 GB device", title="Sweep").to_dict()
    views = marks(spec)
    assert [mark_type(v) for v in views] == ["line", "rule", "text", "point"]
    line = views[0]
    assert (line["encoding"]["x"]["title"], line["encoding"]["y"]["title"]) == (
        "Sequence length (tokens)",
        "Peak memory (GB)",
    )
    assert all("tooltip" in v["encoding"] for v in views)
    assert rows(spec, 1) == [{"gb": 24.0, "label": "24 GB device"}]
    marker = rows(spec, 3)
    assert len(marker) == 1 and (marker[0]["value"], marker[0]["fits"]) == (5120, "out of memory")
    assert [row["fits"] for row in rows(spec, 0)].count("fits") == 9  # 512 … 4,608


def test_sweep_chart_without_a_breaking_point_has_no_marker():
    sweep = lesson_sweep(SETUP, axis="batch", values=range(1, 5), device_gb=80)
    assert [
        mark_type(v) for v in marks(sweep_chart(sweep, device_label="80 GB device", title="Sweep").to_dict())
    ] == ["line", "rule", "text"]


def test_the_guess_is_drawn_first_so_the_sweep_line_sits_over_it():
    sweep = lesson_sweep(SETUP, axis="seq_len", values=range(512, 8193, 512), device_gb=24)
    spec = sweep_chart(sweep, device_label="24 GB device", title="Sweep", guess=4096).to_dict()
    views = marks(spec)
    assert [mark_type(v) for v in views] == ["rule", "text", "text", "line", "rule", "text", "point"]
    assert rows(spec, 0) == [{"value": 4096, "label": "your guess: 4,096", "side": "right"}]


@pytest.mark.parametrize(("guess", "side", "align"), [(1536, "right", "left"), (7680, "left", "right")])
def test_the_guess_label_sits_on_the_side_of_its_rule_that_has_room(guess, side, align):
    # On a 390 px phone a label written rightwards from a guess near the sweep's end ran off the chart.
    sweep = lesson_sweep(SETUP, axis="seq_len", values=range(512, 8193, 512), device_gb=24)
    spec = sweep_chart(sweep, device_label="24 GB device", title="Sweep", guess=guess).to_dict()
    [row] = rows(spec, 0)
    assert row["side"] == side
    shown = [v for v in marks(spec) if v.get("transform") == [{"filter": f"(datum.side === '{side}')"}]]
    assert len(shown) == 1 and shown[0]["mark"]["align"] == align


def test_a_long_title_is_set_in_lines_a_phone_shows_whole():
    sweep = lesson_sweep(SETUP, axis="seq_len", values=range(512, 8193, 512), device_gb=24)
    title = "Peak memory as sequence length (tokens) grows"
    spec = sweep_chart(sweep, device_label="24 GB device", title=title, guess=None).to_dict()
    assert spec["title"]["text"] == ["Peak memory as sequence length", "(tokens) grows"]
    assert all(len(line) <= 34 for line in spec["title"]["text"])


def test_a_single_budget_can_carry_its_gb_in_the_legend():
    terms = lesson_terms(SETUP)
    spec = budget_chart(
        [("Budget", terms)], device_gb=24, device_label="24 GB", title="T", gb_legend=True
    ).to_dict()
    legend = marks(spec)[0]["encoding"]["color"]["legend"]
    # The label reads the GB from the chart's own rows, so the spec does not change with the numbers.
    assert "data('terms')" in legend["labelExpr"] and "format(" in legend["labelExpr"]
    plain = budget_chart([("Budget", terms)], device_gb=24, device_label="24 GB", title="T").to_dict()
    assert "labelExpr" not in marks(plain)[0]["encoding"]["color"]["legend"]
    with pytest.raises(ValueError, match="exactly one bar"):
        budget_chart(
            [("A", terms), ("B", terms)], device_gb=24, device_label="24 GB", title="T", gb_legend=True
        )
