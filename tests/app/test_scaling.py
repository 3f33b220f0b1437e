"""The Scaling out page: predictions gate results, snapshots go stale, the synthesis gets ready."""

import functools
import json

from core import lessons
from core.scaling import narrative
from core.scaling.evidence import PREDICTION_TRACKS, PREDICTIONS, SNAPSHOTS, SYNTHESIS, current_settings
from core.scaling.outcomes import part_contrasts
from core.scaling.scenarios import load_scaling, track
from core.units import count_label, fixed_label
from tests.app.conftest import headings, markdown_blocks, open_page, open_tab, says
from ui.tables import Format, stacked

PAGE = "pages/scaling.py"
PREDICTIONS_GIVEN = {"A": "below-half", "B": "optimizer", "C": "within", "D": "faster-oom", "E": "strict"}
DECISIONS = {"B": "shard", "C": "within", "D": "baseline", "E": "strict"}
PLAN = {
    "plan": "data-parallel",
    "rejected": "fit-first",
    "trigger": "communication",
    "limitation": "contention",
}


def _chart_titles(at):
    titles = []
    for chart in at.get("vega_lite_chart"):
        title = json.loads(chart.proto.spec).get("title")
        titles.append(title["text"] if isinstance(title, dict) else title)
    return titles


def _open(at, part):
    """Open a part's tab ("Synthesis" for the synthesis): only the open tab is on the page."""
    label = "Synthesis" if part == "Synthesis" else load_scaling().parts[part].tab
    return open_tab(at, "scaling.part", label)


def _lock(at, part, option):
    _open(at, part)
    at.radio(key=f"scaling.predict.{part}").set_value(option)
    at.button(key=f"scaling.predict.{part}.lock").click()
    return at.run()


def _capture(at, part):
    _open(at, part)
    if part in DECISIONS:
        at.radio(key=f"scaling.decide.{part}").set_value(DECISIONS[part])
    at.button(key=f"scaling.capture.{part}").click()
    return at.run()


def _all_captured():
    at = open_page(PAGE)
    for part, option in PREDICTIONS_GIVEN.items():
        _lock(at, part, option)
    for part in PREDICTIONS_GIVEN:
        _capture(at, part)
    return at


def _stale(at):
    """The stale-snapshot errors of every part, opening each tab in turn."""
    return [e.value for part in "ABCDE" for e in _open(at, part).error if "Stale snapshot" in e.value]


def test_results_stay_hidden_until_a_prediction_is_locked():
    at = open_page(PAGE)
    assert not at.exception
    assert not at.get("vega_lite_chart")
    assert not at.table  # part A is open, its result hidden
    _lock(at, "A", "middle")
    assert _chart_titles(at) == ["Parallel efficiency as the pool grows"]
    assert at.session_state["records"][PREDICTIONS] == {"A": "middle"}
    assert not [r for r in at.radio if r.key == "scaling.predict.A"]  # the form is gone for good


def test_locking_without_choosing_says_so_and_stores_nothing():
    at = _open(open_page(PAGE), "B")
    at.button(key="scaling.predict.B.lock").click()
    at.run()
    assert lessons.sentence("marked", "pick_prediction") in [i.value for i in at.info]
    assert PREDICTIONS not in at.session_state["records"]


def test_each_locked_part_shows_its_chart_and_the_prediction_survives_a_page_switch():
    at = open_page(PAGE)
    for part, option in PREDICTIONS_GIVEN.items():
        _lock(at, part, option)
        assert not at.exception
        assert len(at.get("vega_lite_chart")) == 1  # the open part's
    open_page("pages/home.py", at=at)
    open_page(PAGE, at=at)
    # Each part's chart is there again when its tab is opened.
    assert [len(_open(at, part).get("vega_lite_chart")) for part in PREDICTIONS_GIVEN] == [1] * 5
    assert at.session_state["records"][PREDICTIONS] == PREDICTIONS_GIVEN


def test_only_the_open_tab_is_built():
    at = open_page(PAGE)
    assert at.session_state["scaling.part"] == "A Scaling"
    *_, part, closing = headings(at, 3)  # the open part's title, then the page's closing section
    assert part == load_scaling().parts["A"].title
    at = _open(at, "D")
    assert headings(at, 3)[-2:] == [load_scaling().parts["D"].title, closing]
    assert not [r for r in at.radio if r.key == "scaling.predict.A"]
    assert [r.key for r in at.radio if r.key == "scaling.predict.D"] == ["scaling.predict.D"]


def test_part_a_result_follows_the_chosen_pool():
    at = open_page(PAGE)
    _lock(at, "A", "middle")
    at.selectbox(key="scaling.pool").set_value(3).run()
    assert "On 256 GPUs" in " ".join(m.value for m in [*at.warning, *at.success])  # Cloud: 8, 32, 128, 256


def test_a_track_change_marks_every_snapshot_stale():
    at = _all_captured()
    assert set(at.session_state["records"][SNAPSHOTS]) == set("ABCDE")
    assert _stale(at) == []
    at.selectbox(key="scaling.track").set_value("tinyml").run()
    assert not at.exception
    stale = _stale(at)
    assert len(stale) == 5 and all(lessons.sentence("scaling", "changed_track") in error for error in stale)


def test_changing_part_a_scaling_makes_only_part_e_stale():
    at = _all_captured()
    _open(at, "A").radio(key="scaling.mode").set_value("weak").run()
    stale = _stale(at)
    assert len(stale) == 1 and "scaling experiment" in stale[0]


def _save_synthesis(at, choices, rationale):
    _open(at, "Synthesis")
    for name, value in choices.items():
        at.radio(key=f"scaling.synthesis.{name}").set_value(value)
    at.text_area(key="scaling.synthesis.rationale").input(rationale)
    at.button(key="scaling.synthesis.save").click()
    return at.run()


def test_synthesis_is_ready_only_with_five_current_snapshots_and_a_quantified_plan():
    at = _all_captured()
    _save_synthesis(at, PLAN, "Strong scaling fell to 0.09 efficiency on 16 GPUs, so stay on one node.")
    assert lessons.sentence("scaling", "synthesis_ready") in [s.value for s in at.success]
    assert at.session_state["records"][SYNTHESIS]["plan"] == "data-parallel"
    at.selectbox(key="scaling.track").set_value("mobile").run()
    assert lessons.sentence("scaling", "synthesis_ready") not in [s.value for s in at.success]
    assert any("A, B, C, D, E" in w.value for w in at.warning)  # every part is stale after the switch


def test_synthesis_refuses_the_same_plan_twice_and_an_unquantified_rationale():
    at = _all_captured()
    _save_synthesis(at, PLAN | {"rejected": "data-parallel"}, "It seemed slow.")
    warning = " ".join(w.value for w in at.warning)
    assert lessons.sentence("scaling", "same_plan") in warning
    assert lessons.sentence("scaling", "quantify_rationale") in warning
    assert lessons.sentence("scaling", "synthesis_ready") not in [s.value for s in at.success]


def test_after_hand_in_no_prediction_decision_or_synthesis_can_change():
    at = open_page(PAGE)
    at.session_state["handed_in_at"] = "2026-01-01T00:00:00+00:00"  # as `state.hand_in` stores it, in UTC
    at.run()
    # A part never predicted opens ungraded (tests/app/test_hand_in_opens_results.py): no form to lock.
    assert not [b for b in at.button if b.key == "scaling.predict.A.lock"]
    assert at.button(key="scaling.capture.A").disabled
    assert not at.selectbox(key="scaling.track").disabled  # a setting of the tools, not an answer
    assert _open(at, "B").button(key="scaling.capture.B").disabled  # the tabs still open, to read
    assert _open(at, "Synthesis").button(key="scaling.synthesis.save").disabled


def test_cloud_is_the_default_and_says_its_model_needs_sharding_then_points_at_tinyml():
    at = open_page(PAGE)
    assert at.selectbox(key="scaling.track").value == "cloud"
    # 8,030,261,248 parameters x 16 bytes (2 + 2 + 4 + 8, mixed precision with Adam) = 128 GB > 86 GB.
    assert any("128 GB" in w.value and "86 GB" in w.value for w in at.warning)
    _lock(at, "A", "below-half")
    assert lessons.sentence("scaling", "now_try_tinyml") in [i.value for i in at.info]
    at.selectbox(key="scaling.track").set_value("tinyml").run()
    assert not any("128 GB" in w.value for w in at.warning)


def test_tabs_are_short_and_the_lab_gives_its_time_objectives_and_takeaways():
    at = open_page(PAGE)
    assert [t.label for t in at.tabs] == [
        "A Scaling",
        "B Fit",
        "C Place",
        "D Bubble",
        "E Lag",
        "Synthesis",
    ]
    assert lessons.sentence("scaling", "time_guidance") in [c.value for c in at.caption]
    blocks = markdown_blocks(at)
    assert blocks.count(lessons.text("scaling", "objectives")) == 1
    assert blocks.count(lessons.text("scaling", "takeaways")) == 1


def test_no_plan_fits_is_refused_while_the_plan_fits():
    at = open_page(PAGE)
    _lock(at, "B", "optimizer")
    at.radio(key="scaling.decide.B").set_value("none")
    at.button(key="scaling.capture.B").click()
    at.run()
    assert "B" not in (at.session_state["records"].get(SNAPSHOTS) or {})
    # ZeRO-1 over the 4 nodes of Cloud's 32-GPU pool needs 64.9 GB of the H100's 86 GB: "no plan fits" is
    # refused (tests/core/test_scaling_capacity.py works the figure by hand).
    assert any("ZeRO-1" in i.value and "64.9 GB" in i.value and "86 GB" in i.value for i in at.info)


def test_part_e_answer_follows_the_track_and_a_prediction_is_graded_where_it_was_locked():
    at = open_page(PAGE)
    at.selectbox(key="scaling.track").set_value("tinyml").run()
    _lock(at, "E", "drop")  # TinyML's 2.3 ms steps: waiting 2 ms a step for the slowest GPU costs more
    assert at.session_state["records"][PREDICTION_TRACKS] == {"E": "tinyml"}
    assert any(s.value.startswith(says("scaling", "prediction_held")) for s in at.success)
    at.selectbox(key="scaling.track").set_value("cloud").run()
    assert not at.exception
    held = [s.value for s in at.success if s.value.startswith("**Your prediction held.**")]
    # Still graded on TinyML, while the page names Cloud's own answer from Cloud's 3.3 s steps.
    assert len(held) == 1 and "TinyML" in held[0] and "*Strict synchronisation*" in held[0]
    assert any("TinyML" in c.value for c in at.caption if c.value.startswith(":material/lock:"))


def test_the_same_prediction_misses_on_cloud():
    at = open_page(PAGE)
    _lock(at, "E", "drop")
    assert at.session_state["records"][PREDICTION_TRACKS] == {"E": "cloud"}
    assert any("*Strict synchronisation*" in w.value for w in at.warning)  # a miss, naming what came true


def test_each_parts_table_is_stacked_narrow_with_the_figures_of_its_chart():
    at = open_page(PAGE)
    _lock(at, "B", "optimizer")
    table = at.table[0].value  # part B's, drawn before the synthesis table
    # One column per plan, a row per figure: 3 columns fit a phone where 12 did not.
    assert list(table.columns) == ["", "Replicated (ZeRO-0)", "ZeRO-1"]
    figures = dict(zip(table[""], table["ZeRO-1"], strict=True))
    assert figures["Outcome"] == "fits" and figures["HBM (GB)"] == "86"  # 80 GiB, whole GB
    assert float(figures["Total (GB)"]) < 86


def test_stacking_turns_rows_into_columns_with_each_figures_format():
    rows = [
        {"Workers": 8, "Step (ms)": 1234.5, "Local batch": 32.0, "Mode": "strong"},
        {"Workers": 32, "Step (ms)": 3.21, "Local batch": 8.0, "Mode": "strong"},
    ]
    formats: dict[str, Format] = {
        "Step (ms)": functools.partial(fixed_label, places=1),
        "Local batch": count_label,
    }
    assert stacked(rows, by="Workers", header="{} GPUs", formats=formats) == [
        {"": "Step (ms)", "8 GPUs": "1,234.5", "32 GPUs": "3.2"},
        {"": "Local batch", "8 GPUs": "32", "32 GPUs": "8"},
        {"": "Mode", "8 GPUs": "strong", "32 GPUs": "strong"},
    ]


def test_after_a_switch_every_verdict_is_graded_on_the_track_each_prediction_was_locked_on():
    at = open_page(PAGE)
    for part, option in PREDICTIONS_GIVEN.items():
        _lock(at, part, option)
    at.selectbox(key="scaling.track").set_value("tinyml").run()
    assert not at.exception
    verdicts: dict[str, bool] = {}
    for part in PREDICTIONS_GIVEN:
        shown = _open(at, part)
        for held, messages in ((True, shown.success), (False, shown.warning)):
            verdicts |= {m.value: held for m in messages if "Cloud" in m.value and "TinyML" in m.value}
    assert len(verdicts) == 5
    # Part E on Cloud: 3.30 s steps keep strict synchronisation ahead, so "strict" held; TinyML drops.
    part_e = [v for v in verdicts if "*Dropping slow workers*" in v]
    assert len(part_e) == 1 and verdicts[part_e[0]]


def test_part_b_runs_out_of_memory_on_tinymls_two_nodes_and_a_larger_pool_stales_it():
    at = open_page(PAGE)
    at.selectbox(key="scaling.track").set_value("tinyml").run()
    _lock(at, "B", "oom")  # ZeRO-1 over 2 nodes: 91.3 GB of 86 GB
    assert any("91.3 GB" in s.value for s in at.success)
    _capture(at, "B")  # "carry the sharded plan forward" is refused: nothing fits yet
    assert "B" not in (at.session_state["records"].get(SNAPSHOTS) or {})
    at.radio(key="scaling.decide.B").set_value("none")
    at.button(key="scaling.capture.B").click()
    at.run()  # "no plan fits" is refused too: ZeRO-3 with full recomputation needs 73.2 GB of 86 GB
    assert "B" not in (at.session_state["records"].get(SNAPSHOTS) or {})
    assert any("ZeRO-3 with full recomputation" in i.value and "73.2 GB" in i.value for i in at.info)
    at.slider(key="scaling.zero_stage").set_value(3).run()
    _capture(at, "B")  # the plan that fits is carried forward
    assert "B" in at.session_state["records"][SNAPSHOTS]
    _open(at, "A").selectbox(key="scaling.pool").set_value(3).run()  # 64 GPUs: ZeRO shards over 8 nodes
    stale = _stale(at)
    assert len(stale) == 1 and "larger pool" in stale[0]


def test_the_assumptions_are_built_only_when_their_box_is_opened():
    at = open_page(PAGE)
    fleet = lessons.sentence("scaling", "fleet_source", source=track("cloud").fleet.source)
    assert fleet not in [c.value for c in at.caption]
    at.session_state["scaling.assumptions_open"] = True
    at.run()
    assert fleet in [c.value for c in at.caption]


def test_a_decision_the_evidence_rules_out_is_not_captured_and_says_which_figures_rule_it_out():
    at = open_page(PAGE)
    _open(at, "C")
    at.radio(key="scaling.layout").set_value("cross").run()
    _lock(at, "C", "within")
    at.radio(key="scaling.decide.C").set_value("alternative")
    at.button(key="scaling.capture.C").click()
    at.run()  # TP over two nodes: 2,902.6 ms steps against 599.9 ms on the research cluster, so it is refused
    assert "C" not in (at.session_state["records"].get(SNAPSHOTS) or {})
    assert any("2,902.6 ms" in i.value and "599.9 ms" in i.value for i in at.info)
    _capture(at, "C")  # keeping tensor parallel inside the node is what the evidence supports
    assert "C" in at.session_state["records"][SNAPSHOTS]


def test_part_c_says_why_the_two_stage_pipeline_wins_whichever_alternative_is_selected():
    figures = narrative.two_stage_figures(part_contrasts(current_settings({})).c)  # the research cluster
    at = open_page(PAGE)
    _lock(at, "C", "within")  # TP over two nodes is selected; the two-stage pipeline has the shortest step
    verdict = " ".join(w.value for w in [*at.warning, *at.success])
    for ms in (figures["dp_ms"], figures["baseline_dp_ms"], figures["bubble_ms"]):
        assert f"{ms:,.1f} ms" in verdict
