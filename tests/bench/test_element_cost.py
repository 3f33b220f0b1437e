"""The element price list (`bench.element_cost`): its page draws what it is asked for, a real burst
reaches the server with the kind it names, and the figures are worked out as bench/README.md says."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from bench.element_cost import Priced, per_element_ms, price, schedule, table, yardstick
from bench.element_page import ENV, KINDS, MIXES, ONE_MARKDOWN, parse
from server import warm
from tests.app.conftest import drawn
from tests.harness.paths import REPO_ROOT

PAGE = str(REPO_ROOT / "bench" / "element_page.py")
BARE_MARKDOWN = 2  # the hello page's heading and line, which every variant draws first

# What three of each kind look like in AppTest's tree: (its element list, how many, markdown beside).
DRAWN = {
    "markdown": ("markdown", BARE_MARKDOWN + 3),
    "heading": ("subheader", 3),
    "caption": ("caption", 3),
    "metric": ("metric", 3),
    "boxed_markdown": ("markdown", BARE_MARKDOWN + 3),
    "fragment_markdown": ("markdown", BARE_MARKDOWN + 3),
    "radio": ("radio", 3),
    "button": ("button", 3),
    "chart": ("vega_lite_chart", 3),
    "table": ("table", 3),
}


@pytest.fixture(autouse=True)
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The page's calls to freeze the process, recorded instead: a test worker's collector stays as it is."""
    calls: list[bool] = []

    def record() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(warm, "freeze_once", record)
    return calls


def _page(monkeypatch: pytest.MonkeyPatch, spec: str) -> AppTest:
    monkeypatch.setenv(ENV, spec)
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    return at


@pytest.mark.parametrize("kind", sorted(DRAWN))
def test_the_page_draws_three_of_the_kind_it_is_asked_for(monkeypatch, kind):
    element, count = DRAWN[kind]
    at = _page(monkeypatch, f"{kind}:3")
    assert len(at.get(element)) == count
    if kind in ("radio", "button"):  # disabled: a load client only reruns the page
        assert all(widget.proto.disabled for widget in at.get(element))


def test_every_kind_is_drawn_by_a_test():
    assert set(KINDS) - {"none"} == set(DRAWN)


def test_the_bare_page_draws_the_hello_pages_two_elements_and_one_markdown_holds_every_paragraph(
    monkeypatch,
):
    assert len(_page(monkeypatch, "none:0").markdown) == BARE_MARKDOWN
    merged = _page(monkeypatch, f"{ONE_MARKDOWN}:3").markdown
    assert len(merged) == BARE_MARKDOWN + 1
    assert [line.split(":")[0] for line in merged[-1].value.split("\n\n")] == [
        "Paragraph 0",
        "Paragraph 1",
        "Paragraph 2",
    ]


def test_every_run_of_the_page_asks_to_freeze_what_the_process_loaded_as_serve_py_does(monkeypatch, freezes):
    at = _page(monkeypatch, "markdown:1")
    at.run()
    # Asked on both runs; server.warm.freeze_once freezes on the first call only (tests/app/test_warm.py).
    assert freezes == [True, True]


def test_several_kinds_are_drawn_in_turn_and_a_mix_is_named():
    assert parse("radio:5,button:2") == [("radio", 5), ("button", 2)]
    assert parse("lesson") == parse(MIXES["lesson"])


def test_the_lesson_mix_draws_an_average_runs_widgets_blocks_and_other_elements(monkeypatch):
    counts = drawn(_page(monkeypatch, "lesson"))
    widgets = counts["radio"] + counts["button"]
    blocks = counts["flex_container"]  # a bordered box and a fragment's container each
    assert (widgets, blocks, counts.total() - widgets - blocks) == (7, 13, 18)
    assert (counts["metric"], counts["vega_lite_chart"]) == (2, 1)


@pytest.mark.parametrize(
    ("spec", "message"),
    [("sonnet:3", "names no kind"), ("markdown", "count from 0 to 500"), ("radio:-1", "count"),
     ("radio:501", "count"), ("radio:2,", "names no kind"), ("radio:2,caption:x", "count")],
)  # fmt: skip
def test_a_kind_or_count_the_page_cannot_draw_is_refused_in_a_sentence(spec, message):
    with pytest.raises(ValueError, match=message):
        parse(spec)


def test_the_bare_page_runs_first_and_last():
    assert schedule(["markdown", "none", "radio"]) == ["none", "markdown", "radio", "none"]


def test_each_element_is_priced_over_the_mean_of_the_bare_runs():
    runs = [
        Priced("none", 3.0, 5.0, 200.0, 600.0),
        Priced("markdown", 23.0, 12.0, 90.0, 1_300.0),
        Priced(ONE_MARKDOWN, 3.2, 5.5, 190.0, 640.0),  # no extra message: no price per element
        Priced("none", 3.0, 5.4, 190.0, 680.0),
    ]
    bare = yardstick(runs)
    assert (bare.server_cpu_ms, bare.p95_ms) == (5.2, 640.0)
    # (12.0 - 5.2) ms over 20 messages more than the bare page's 3
    assert per_element_ms(runs[1], bare) == pytest.approx(0.34)
    assert per_element_ms(runs[2], bare) is None
    lines = table(runs, 20).splitlines()
    assert lines[3] == "| markdown | 23 | 12.0 | 0.34 | 90 | 1,300 | 2.03 |"
    assert lines[4] == f"| {ONE_MARKDOWN} | 3 | 5.5 | — | 190 | 640 | 1.00 |"
    with pytest.raises(ValueError, match="bare page"):
        yardstick(runs[1:3])


def test_a_burst_against_the_page_prices_the_kind_the_server_was_asked_for(tmp_path: Path):
    bare = price("none", 0, sessions=2, duration_s=2.0, out=tmp_path / "bare.json")
    markdown = price("markdown", 6, sessions=2, duration_s=2.0, out=tmp_path / "markdown.json")
    assert markdown.messages - bare.messages == pytest.approx(6)
    assert bare.reruns_per_s > 0 and markdown.server_cpu_ms > 0
    assert (tmp_path / "markdown.runs.jsonl").stat().st_size > 0


def test_a_run_is_read_off_its_result_and_one_that_served_nothing_is_refused():
    result = {
        "label": "load-elements",
        "elapsed_s": 25.0,
        "initial_load": {"count": 100},
        "navigate": {"count": 100},
        "rerun": {"count": 1_800, "p95_ms": 1_450.0},
        "extra_script_runs": 0,
        "server": {"cpu_s": 26.4},
        "script_runs": {"kinds": {"whole": {"messages_mean": 23.0}}},
    }
    # 26.4 s over 2,000 script runs; 1,800 reruns in 25 s
    assert Priced.of("caption", result) == Priced("caption", 23.0, 13.2, 72.0, 1_450.0)
    with pytest.raises(ValueError, match="served no rerun"):
        Priced.of("caption", {**result, "rerun": {"count": 0, "p95_ms": None}})
    with pytest.raises(ValueError, match="served no rerun"):
        Priced.of("caption", {**result, "script_runs": None})  # a run without its run log
