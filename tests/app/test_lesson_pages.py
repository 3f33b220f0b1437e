"""The Four runs and Execution stack pages."""

import json

from streamlit.testing.v1 import AppTest

from core import lessons
from core.settings_schema import section
from core.share_links import read_link
from core.stack import load_stack
from core.telemetry import recorded
from tests.app.conftest import HOME, answer, headings, open_box, open_page, open_tab, sort_four_runs
from ui.links import share_open_key


def test_four_runs_shows_four_cards_and_a_chart_per_run():
    at = sort_four_runs(open_page("pages/four_runs.py"))
    assert not at.exception
    assert headings(at, 3)[:4] == ["Run A", "Run B", "Run C", "Run D"]
    assert [t.label for t in at.tabs] == ["Run A", "Run B", "Run C", "Run D"]
    # Only the open run's dashboard is on the page; each tab opened in turn shows its own.
    charts, captions = {}, []
    for run in ("Run A", "Run B", "Run C", "Run D"):
        open_tab(at, "four_runs.dashboard", run)
        charts[run] = at.get("vega_lite_chart")
        captions += [c.value for c in at.caption]
    # Run A logs only memory and utilisation; B, C and D add loss and accuracy: 2 + 4 + 4 + 4 panels.
    assert [len(drawn) for drawn in charts.values()] == [2, 4, 4, 4]
    specs = [json.loads(c.proto.spec) for drawn in charts.values() for c in drawn]
    titles = [
        spec.get("title") or spec["layer"][0]["title"] for spec in specs
    ]  # a panel with rules is a layer
    assert all(title["text"] if isinstance(title, dict) else title for title in titles)
    run_a_failure = recorded("A").failure_text or ""
    assert run_a_failure.startswith("out of memory in backward")
    assert any(c.startswith("Run A") and run_a_failure in c for c in captions)
    assert any(c.startswith("Run C") and "nan" in c and "2,000" in c for c in captions)
    # The device: 24 GiB = 24 × 2^30 bytes = 25.77 GB.
    assert any("24 GiB" in c and "25.77 GB" in c for c in captions)


def test_all_four_runs_can_be_sorted_and_stay_sorted():
    at = open_page("pages/four_runs.py")
    for qid, option in [("r1", "mem"), ("r2", "speed"), ("r3", "num"), ("r4", "learn")]:
        answer(at, qid, option)
    assert at.session_state["answers"] == {"r1": "mem", "r2": "speed", "r3": "num", "r4": "learn"}
    assert len(at.success) == 4
    open_page("pages/home.py", at=at)
    assert [m.value for m in at.metric][:3] == ["4/9", "0/3", "4/12"]


def test_picking_a_symptom_changes_the_layers_that_light_up():
    at = open_page("pages/execution_stack.py")
    assert len(at.error) == 4  # out of memory: model, operations, tensors, hardware
    at.radio(key="stack.symptom").set_value("low_util").run()
    stack = load_stack()  # low utilisation: the host's input pipeline, the model or the kernels
    layers = [p.name for p in stack.places() if p.id in stack.symptom("low_util").layer_ids()]
    assert [e.value.split("**")[1] for e in at.error] == layers
    assert "torch.profiler" in at.info[0].value


def test_the_chosen_symptom_survives_a_page_switch():
    at = open_page("pages/execution_stack.py")
    at.radio(key="stack.symptom").set_value("nan").run()
    open_page("pages/four_runs.py", at=at)
    open_page("pages/execution_stack.py", at=at)
    assert at.radio(key="stack.symptom").value == "nan"
    assert at.session_state["settings"]["stack"] == {"symptom": "nan"}


def test_training_is_slow_shows_both_sides_of_the_fork():
    at = open_page("pages/execution_stack.py")
    at.radio(key="stack.symptom").set_value("slow").run()
    assert "Tensors" in [e.value.split("**")[1] for e in at.error]
    fork = load_stack().symptom("slow").fork
    assert fork is not None and fork.idle.startswith("Look upward")
    assert [w.value for w in at.warning] == [
        lessons.sentence("execution_stack", "gpu_idle", where_to_look=fork.idle),
        lessons.sentence("execution_stack", "gpu_busy", where_to_look=fork.busy),
    ]


def test_the_stack_page_asks_the_training_is_slow_question():
    at = open_page("pages/execution_stack.py")
    answer(at, "c1", "b")
    assert at.session_state["answers"] == {"c1": "b"}


def test_a_share_link_sets_the_symptom_and_the_url_follows_changes():
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.query_params["symptom"] = "flat"
    open_page("pages/execution_stack.py", at=at)
    assert at.radio(key="stack.symptom").value == "flat"
    open_box(at, share_open_key("stack"))
    assert "symptom=flat" in at.code[0].value
    at.radio(key="stack.symptom").set_value("slow").run()
    assert at.query_params["symptom"] == ["slow"] or at.query_params["symptom"] == "slow"
    assert "symptom=slow" in at.code[0].value  # an open box follows the change


def test_a_bad_share_link_shows_a_note_and_the_default():
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.query_params["symptom"] = "<script>alert(1)</script>"
    open_page("pages/execution_stack.py", at=at)
    assert not at.exception
    assert at.radio(key="stack.symptom").value == "oom"
    reading = read_link(section("stack"), {"symptom": ["<script>alert(1)</script>"]})
    assert len(reading.notes) == 1 and any(reading.notes[0] in w.value for w in at.warning)
