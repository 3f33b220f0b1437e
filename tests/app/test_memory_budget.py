"""The Memory budget page: both estimates at every control's extremes, verdicts that match core,
persistence."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from core import lessons
from core.estimate_check.view import check_view, config_label
from core.measured import measured_ids
from core.memory.view import SECTION, budget_view, bytes_per_parameter, said
from core.settings_schema import section
from tests.app.conftest import HOME, answer, chart_rows, open_page, says, sketch_budget

PAGE = "pages/memory_budget.py"


def _open(at=None):
    """The page with both guesses locked (once per session), so the budget and the sweep are drawn."""
    at = open_page(PAGE, at=at)
    return at if "predict.memory.breaks" in at.session_state["records"] else sketch_budget(at)


NUMERIC = ("hidden", "layers", "batch", "seq_len", "accumulation", "zero_stage", "gpus", "overhead_gb")
LESSON_ONLY = ("dtype", "device_gb")  # the detailed estimate takes these from its own controls
CHOICES = (
    "optimizer",
    "model",
    "precision",
    "recompute",
    "attention",
    "gpu",
    "sweep_axis",
)


def widget(at, name):
    """The page's widget for one setting, whatever its kind."""
    key = f"{SECTION}.{name}"
    for kind in (at.slider, at.radio, at.selectbox, at.number_input):
        found = [w for w in kind if w.key == key]
        if found:
            return found[0]
    raise AssertionError(f"no widget for {key}")


def callout(at):
    """The budget's verdict: one success or one error callout, worded from core's figures."""
    text = said(budget_view(at.session_state["settings"][SECTION]).verdict_line)
    [shown] = [c.value for c in [*at.success, *at.error] if c.value.startswith(f"{text}\n\n")]
    return shown


def parameters_shown(at):
    return next(m.value for m in at.metric if m.label == "Parameters")


def assert_verdict_matches_core(at):
    view = budget_view(at.session_state["settings"][SECTION])
    verdict, text = view.verdict, callout(at)
    shown = [c.value for c in (at.success if verdict.fits else at.error)]
    assert text in shown
    for figure in (verdict.total_gb, verdict.headroom_gb if verdict.fits else verdict.over_gb):
        assert f"{figure:.1f} GB" in text
    assert f"{verdict.largest_gb:.1f} GB" in text and f"({verdict.largest_share_percent:.0f}%" in text
    assert verdict.lever in text and view.device_label in text
    budget = at.get("vega_lite_chart")[0]
    assert json.loads(budget.proto.spec)["title"] == lessons.sentence("memory", "budget_chart_title")
    assert sum(row["gb"] for row in chart_rows(budget, "terms")) == pytest.approx(verdict.total_gb)
    assert chart_rows(budget, "device") == [{"gb": verdict.device_gb, "label": view.device_label}]
    assert parameters_shown(at) == f"{view.parameter_count:,}"


def test_the_default_is_the_lessons_budget_worked_in_the_lesson():
    at = _open()
    assert not at.exception
    text = callout(at)
    # 3.22 + 3.22 + 6.44 + 2.15 + 1 = 16.0 GB of 24 GiB = 25.77 GB: 9.7 GB spare; by the rough rule Adam's
    # state is the largest term.
    assert text in [c.value for c in at.success]
    assert all(
        figure in text
        for figure in ("16.0 GB", "24 GiB (25.77 GB) device", "9.7 GB", "optimizer state", "6.4 GB")
    )
    assert "(40%" in text
    assert parameters_shown(at) == "805,306,368"
    assert len(at.get("vega_lite_chart")) == 4  # budget, sweep, the phases, and the estimate against PyTorch
    assert {"marked.c3.choice", "marked.c4.choice"} <= {r.key for r in at.radio}


@pytest.mark.parametrize("estimate", ["lesson", "detailed"])
@pytest.mark.parametrize("end", ["min", "max"])
def test_every_control_at_its_extremes(estimate, end):
    at = _open()
    widget(at, "estimate").set_value(estimate).run()
    fields = section(SECTION)
    names = NUMERIC if estimate == "detailed" else NUMERIC[:4]
    for name in names:
        f = fields.field(name)
        widget(at, name).set_value(f.min if end == "min" else f.max)
    at.run()
    assert not at.exception
    assert_verdict_matches_core(at)


def test_every_option_of_every_choice_renders():
    at = _open()
    widget(at, "estimate").set_value("detailed").run()
    fields = section(SECTION)
    for turn in range(max(len(fields.field(name).choices) for name in CHOICES)):
        for name in CHOICES:
            options = fields.field(name).choices
            widget(at, name).set_value(options[turn % len(options)])
        at.run()
        assert not at.exception, turn
        assert_verdict_matches_core(at)


def test_the_lesson_only_radios_act_in_the_lesson_and_are_hidden_in_the_detailed_estimate():
    at = _open()
    widget(at, "dtype").set_value("bf16").run()
    widget(at, "device_gb").set_value("40").run()
    assert_verdict_matches_core(at)
    assert "40 GiB (42.95 GB) device" in callout(at)  # the device label core names
    widget(at, "estimate").set_value("detailed").run()
    keys = {w.key for kind in (at.radio, at.selectbox) for w in kind}
    assert not {f"{SECTION}.{name}" for name in LESSON_ONLY} & keys
    assert_verdict_matches_core(at)


def test_the_guesses_gate_the_budget_and_the_sweep_is_drawn_over_the_guess():
    at = open_page(PAGE)
    assert len(at.get("vega_lite_chart")) == 1  # only the estimate check further down
    assert lessons.sentence("memory", "locked") in [i.value for i in at.info]
    sketch_budget(at, term="activations", breaks="4096")
    records = at.session_state["records"]
    # Graded on the careful count of the lesson's step on a 24 GiB card (HF, SDPA): saved activations are
    # the largest term at the peak, and 1,024 tokens fit (0.46 GB spare) where 1,536 do not.
    assert records["predict.memory.dominant"] == {"choice": "activations", "actual": "activations"}
    assert records["predict.memory.breaks"] == {"choice": "4096", "actual": "1536"}
    sweep = at.get("vega_lite_chart")[1]
    assert chart_rows(sweep, "guess") == [{"value": 4096, "label": "your guess: 4,096", "side": "right"}]
    assert any(
        "You predicted **4,096 tokens**; it was **1,536 tokens** (missed)" in c.value for c in at.caption
    )


def test_the_bytes_per_parameter_card_names_the_lessons_convention():
    at = _open()
    card = " ".join(m.value for m in at.markdown)
    for figure in ("**4**", "**8**", "**12**", "**16**", "**18**", "**20**"):
        assert figure in card
    # The lesson's 2-byte Adam: 2 + 2 + 8 = 12 bytes a parameter, no FP32 master copy.
    two_byte_adam = lessons.sentence("memory", "lesson_convention", two_byte_adam=12)
    assert two_byte_adam in [c.value for c in at.caption] and "12 bytes" in two_byte_adam


def test_the_sweep_follows_the_chosen_setting_and_marks_the_break():
    at = _open()
    sweep = json.loads(at.get("vega_lite_chart")[1].proto.spec)
    # In lines a 390 px phone shows whole.
    assert sweep["title"] == {"text": ["Peak memory as sequence length", "(tokens) grows"]}
    # The rough rule on 24 GiB (25.77 GB).
    crossing = {"axis": "sequence length (tokens)", "fits": 5632, "fails": 6144}
    assert lessons.sentence("memory", "sweep_crosses", **crossing) in [c.value for c in at.caption]
    widget(at, "sweep_axis").set_value("batch").run()
    assert json.loads(at.get("vega_lite_chart")[1].proto.spec)["title"] == {
        "text": ["Peak memory as micro-batch", "(sequences) grows"]
    }
    crossing = {"axis": "micro-batch (sequences)", "fits": 22, "fails": 23}
    assert lessons.sentence("memory", "sweep_crosses", **crossing) in [c.value for c in at.caption]


def test_detailed_controls_appear_only_for_the_detailed_estimate():
    at = _open()
    assert "memory.model" not in {s.key for s in at.selectbox}
    widget(at, "estimate").set_value("detailed").run()
    assert {"memory.model", "memory.precision", "memory.gpu"} <= {s.key for s in at.selectbox}
    sums = budget_view(at.session_state["settings"][SECTION]).assumptions
    assert [line.key for line in sums][2] == "activations"
    assert "\n".join(f"- {said(line)}" for line in sums) in [m.value for m in at.markdown]


def test_settings_survive_leaving_the_page():
    at = _open()
    widget(at, "hidden").set_value(4096)
    widget(at, "estimate").set_value("detailed")
    at.run()
    widget(at, "model").set_value("Llama-2-7B")
    widget(at, "zero_stage").set_value(2)
    at.run()
    open_page("pages/four_runs.py", at=at)
    _open(at)
    assert (widget(at, "hidden").value, widget(at, "model").value, widget(at, "zero_stage").value) == (
        4096,
        "Llama-2-7B",
        2,
    )
    assert at.session_state["settings"][SECTION]["model"] == "Llama-2-7B"
    assert_verdict_matches_core(at)


def test_both_marked_questions_lock_once_answered():
    at = _open()
    answer(at, "c3", "b")
    answer(at, "c4", "b")
    assert at.session_state["answers"] == {"c3": "b", "c4": "b"}
    assert {"marked.c3.locked", "marked.c4.locked"} <= {r.key for r in at.radio}


def assert_check_shown(at, config_id):
    view = check_view(config_id)
    assert at.table[2].value.to_dict("records") == list(view.table)
    assert view.gap_text in [m.value for m in at.markdown]
    assert view.setup_text in [c.value for c in at.caption]
    chart = json.loads(at.get("vega_lite_chart")[3].proto.spec)
    assert chart["title"] == lessons.sentence("memory", "check_chart_title")


def test_how_close_is_this_estimate_follows_the_picked_run_and_keeps_it():
    at = _open()
    assert any(lessons.text("memory", "estimate_check") in m.value for m in at.markdown)
    picker = at.selectbox(key=f"{SECTION}.measured_config")
    assert picker.options == [config_label(i) for i in measured_ids()]
    default = section(SECTION).field("measured_config").default
    assert picker.value == default
    assert_check_shown(at, default)
    assert any("-20.9%" in row["Relative error"] for row in at.table[2].value.to_dict("records"))
    assert check_view(default).summary_text in [i.value for i in at.info]
    tables = len(at.table)  # the furthest-off table waits until its expander is opened
    at.session_state["memory.worst_open"] = True
    at.run()
    assert len(at.table) == tables + 1
    worst = check_view(default).worst_table  # each term's main cause in a list below its table
    assert at.table[3].value.to_dict("records") == [
        {column: cell for column, cell in row.items() if column != "Main cause"} for row in worst
    ]
    causes = " ".join(m.value for m in at.markdown)
    assert all(f"**{row['Term']}:** {row['Main cause']}" in causes for row in worst)
    gpt2 = "gpt2-h64-l2-s128-b2-bf16-adam-none-sdpa"
    picker.set_value(gpt2).run()
    assert not at.exception
    assert_check_shown(at, gpt2)
    assert at.session_state["settings"][SECTION]["measured_config"] == gpt2
    open_page("pages/four_runs.py", at=at)
    _open(at)
    assert at.selectbox(key=f"{SECTION}.measured_config").value == gpt2
    assert_check_shown(at, gpt2)


def test_the_lessons_rule_of_thumb_and_the_gb_legend_are_on_the_page():
    at = _open()
    prose = " ".join(m.value for m in at.markdown)
    card = bytes_per_parameter()
    assert f"**{card.adam} bytes per parameter**" in prose and card.adam == 16  # FP32 Adam: 4 + 4 + 8
    assert "exp_avg_sq" in prose  # the name of Adam's second moment in PyTorch
    budget = at.get("vega_lite_chart")[0]
    assert "data('terms')" in json.dumps(
        json.loads(budget.proto.spec)["layer"][0]["encoding"]["color"]["legend"]
    )


def test_the_three_answers_default_to_the_lessons_model_and_card_and_the_page_says_why_they_differ():
    at = _open()
    rows = at.table[1].value.to_dict("records")
    assert [row["Answer"] for row in rows][:2] == [
        "The lesson's rough rule",
        "The careful count (phase model)",
    ]
    # The lesson's model, FP32 Adam, B 4 × S 1,024 on an RTX 4090 (24 GiB): the rule's 16.03 GB fits with
    # room to spare; the count's 24.39 GB peak fits with 0.46 GB left once the context is counted.
    assert (rows[0]["Peak (GB)"], rows[1]["Peak (GB)"]) == ("16.03", "24.39")
    assert rows[1]["Verdict"] == "fits, 0.46 GB spare"
    marker = "Your two guesses are graded on the careful count"
    why = [c.value.split("\n\n")[1] for c in at.success if marker in c.value]
    assert len(why) == 1 and why[0].startswith(marker)
    for figure in ("optimizer state is the largest term", "at 6,144 tokens", "saved activations (13.0 GB"):
        assert figure in why[0]
    assert "7.6 GB of optimizer state) and breaks at 1,536 tokens" in why[0]


def test_the_careful_count_shows_each_phase_and_three_answers():
    at = sketch_budget(open_page(PAGE))
    at.selectbox(key=f"{SECTION}.phase_model").set_value("GPT-2 small")
    at.selectbox(key=f"{SECTION}.phase_precision").set_value("amp")
    at.selectbox(key=f"{SECTION}.phase_optimizer").set_value("adamw")
    at.selectbox(key=f"{SECTION}.phase_gpu").set_value("H200").run()
    assert any(lessons.text("memory", "phases") in m.value for m in at.markdown)
    phases = at.table[0].value
    assert list(phases["Phase"]) == ["Forward", "loss.backward()", "optimizer.step()"]
    answers = at.table[1].value
    assert list(answers["Answer"]) == [
        "The lesson's rough rule",
        "The careful count (phase model)",
        "H200 measurement (memory.csv)",
    ]
    # GPT-2 small, 4 × 1024, autocast, SDPA: the H200 measured 7,498,999,296 bytes at the step's peak.
    assert list(answers["Peak (GB)"])[2] == "7.50"
    at.radio(key=f"{SECTION}.stack").set_value("fused").run()
    assert not at.exception
    assert list(at.table[1].value["Answer"])[2] == "H200 measurement"  # no reference for fused kernels


def test_a_sequence_longer_than_the_model_allows_is_a_sentence():
    at = sketch_budget(open_page(PAGE))
    at.selectbox(key=f"{SECTION}.phase_model").set_value("GPT-2 small")
    at.slider(key=f"{SECTION}.seq_len").set_value(4096).run()
    assert not at.exception
    assert any("learned positions" in w.value for w in at.warning)


def test_a_link_to_the_detailed_estimate_opens_it_on_the_pages_first_run():
    # The page decides which controls to draw from the estimate before its first control takes the link.
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.query_params["estimate"] = "detailed"
    at.query_params["gpus"] = "8"
    open_page(PAGE, at=at)
    assert widget(at, "estimate").value == "detailed"
    assert widget(at, "model").value == "custom"
    assert widget(at, "gpus").value == 8
    assert not [w for w in at.radio if w.key == f"{SECTION}.device_gb"]  # the lesson's own control is hidden


def test_two_failure_points_on_one_screen_each_say_which_question_they_answer():
    # Eager attention keeps the score matrix: the lesson's step no longer fits its 24 GiB card. One step's
    # largest moment is at the start of loss.backward(); a run of two iterations first fails earlier in
    # time, in iteration 2's forward pass, once Adam's state is resident. Both are true; each is named.
    at = _open()
    at.radio(key=f"{SECTION}.phase_attention").set_value("eager").run()
    [oom] = [e.value for e in at.error if e.value.startswith(says("memory", "phase_oom"))]
    # It ends by naming which question the figure answers (the sentence after its last figure).
    assert "loss.backward()" in oom and oom.endswith(
        lessons.sentences("memory")["phase_oom"].text.rsplit("}", 1)[1]
    )
    careful = at.table[1].value.to_dict("records")[1]
    assert careful["Verdict"].startswith("a run first fails in the forward pass of iteration 2")
    notes = " ".join(m.value for m in at.markdown)
    assert says("memory", "why_careful") in notes


def test_a_locked_guess_says_when_the_settings_it_was_graded_on_have_changed():
    at = sketch_budget(open_page(PAGE), term="activations", breaks="1536")
    held = next(c.value for c in at.caption if "You predicted **1,536 tokens**" in c.value)
    assert "(held)" in held and "settings now" not in held
    widget(at, "device_gb").set_value("80").run()
    # On 80 GiB the lesson's step breaks at 6,144 tokens: the guess still held on the 24 GiB it was made on.
    moved = next(c.value for c in at.caption if "You predicted **1,536 tokens**" in c.value)
    assert "(held)" in moved
    assert "with the settings now it is **6,144 tokens**" in moved and "when you locked it" in moved
