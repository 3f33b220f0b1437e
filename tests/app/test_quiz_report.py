"""Quiz and report page: locking quiz answers, hand-in, restoring a file, literal learner text, signatures."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from core import lessons
from core.progress_file import export_progress
from core.questions import load_bank
from core.report.moments import readable_time
from core.run_a.experiments import FIRST_EXPERIMENTS
from core.signing import Verdict
from tests.app.conftest import HOME, answer, headings, installation_key, markdown_blocks, open_page, predict
from ui.nav import title_of

PAGE = "pages/quiz_report.py"
STRONG_KEY = "4ec95ee19181d0f48693fc19ecfb16e7ecd43bd3bdb50a7da49c23b776cc3aff"  # secrets.token_hex(32)
AT = "2026-11-30T14:05:09+00:00"
BANK = load_bank()
HOSTILE = "**bold** [click](https://evil.example) <b>tag</b>\n# not a heading"
RECORDS = {
    "run_a.decision": {"choice": "optim", "why": HOSTILE},
    "run_a.reflection": {"text": "Loader time per step; above half the step points at the input pipeline."},
}


def _page_with(**state) -> AppTest:
    at = AppTest.from_file(str(HOME), default_timeout=30)
    for name, value in state.items():
        at.session_state[name] = value
    return open_page(PAGE, at=at)


def _progress(answers, records=None, key=""):
    """A progress file signed with `key`, by default the key the app made for this installation."""
    key = installation_key() if key == "" else key
    snapshot = {"answers": answers, "settings": {}, "records": records or {}, "handed_in_at": None}
    return export_progress(snapshot, exported_at=AT, key=key)


def _upload(at, uploader_key, data):
    at.file_uploader(key=uploader_key).upload("progress.json", data, "application/json").run()
    return at


def test_answering_a_quiz_question_locks_it_and_scores_it():
    at = open_page(PAGE)
    assert not at.exception
    answer(at, "q2", "c")
    assert at.session_state["answers"] == {"q2": "c"}
    assert at.radio(key="marked.q2.locked").disabled
    assert [m.value for m in at.main.metric] == ["0/9", "1/3", "1/12", "0/6"]


def test_the_answers_table_shows_every_row_the_right_answer_and_a_link_back():
    at = open_page("pages/four_runs.py")
    answer(at, "r1", "num")  # wrong
    open_page("pages/linear_layer.py", at=at)
    predict(at, "linear.gelu", "memory-bound")
    open_page(PAGE, at=at)
    rows = at.table[0].value.to_dict("records")
    assert len(rows) == 12  # nine checks and three quiz questions, none hidden behind a scroll
    [wrong] = [row for row in rows if row["Mark"] == "wrong"]
    assert wrong["Right answer"].startswith("Resource")
    assert load_bank().question("r1").misconception("num") in wrong["What it suggests"]
    links = [(link.proto.label, link.proto.page) for link in at.get("page_link")]
    back = lessons.sentence(
        "quiz_report",
        "back_to",
        page_title=title_of("pages/four_runs.py"),
        question=load_bank().question("r1").label,
    )
    assert back in [label for label, _ in links]
    predictions = at.table[1].value.to_dict("records")
    assert [p["Mark"] for p in predictions] == ["not made", "not made", "held"] + ["not made"] * 3
    assert [m.value for m in at.main.metric][3] == "1/6"


def test_hand_in_is_blocked_while_quiz_questions_are_unanswered():
    at = open_page(PAGE)
    answer(at, "q1", "b")
    at.checkbox(key="handin.confirm").check().run()
    warning = next(w.value for w in at.warning if "quiz questions first" in w.value)
    assert BANK.question("q2").label in warning and BANK.question("q3").label in warning
    assert BANK.question("q1").label not in warning
    assert at.button(key="handin.go").disabled
    assert at.session_state["handed_in_at"] is None


def test_after_hand_in_the_answers_lock_and_the_tools_still_work_in_this_tab_only():
    at = open_page("pages/linear_layer.py")
    at.slider(key="linear.batch").set_value(64).run()
    open_page(PAGE, at=at)
    for qid in ("q1", "q2", "q3"):
        answer(at, qid, "a")
    assert at.button(key="handin.go").disabled  # not confirmed yet
    at.checkbox(key="handin.confirm").check().run()
    at.button(key="handin.go").click().run()
    assert not at.exception
    assert at.session_state["handed_in_at"] is not None
    handed_in = lessons.sentence(
        "quiz_report", "handed_in", when=readable_time(at.session_state["handed_in_at"])
    )
    assert lessons.sentence("quiz_report", "read_only_now", handed_in=handed_in) in [
        s.value for s in at.success
    ]
    assert at.file_uploader(key="restore.file").disabled
    assert not any(b.disabled for b in at.download_button)
    handed_in_layer = [m for m in markdown_blocks(at) if "batch 64" in m]
    assert handed_in_layer

    open_page("pages/linear_layer.py", at=at)
    slider = at.slider(key="linear.batch")
    assert not slider.disabled  # a calculator, not an answer
    slider.set_value(8).run()
    assert at.slider(key="linear.batch").value == 8
    assert at.session_state["settings"]["linear"]["batch"] == 64  # the work handed in is unchanged
    open_page("pages/four_runs.py", at=at)
    assert at.radio(key="marked.r1.choice").disabled  # an answer
    open_page(PAGE, at=at)
    assert [m for m in markdown_blocks(at) if "batch 64" in m] == handed_in_layer


def test_a_bad_file_is_refused_with_a_message_and_keeps_the_answers():
    at = open_page(PAGE)
    answer(at, "q1", "a")
    truncated = _progress({"q1": "b", "r1": "mem"})[:120]
    _upload(at, "restore.file", truncated)
    at.button(key="restore.go").click().run()
    refused = lessons.sentence("quiz_report", "restore_refused", reason="")
    assert any(e.value.startswith(refused) and "JSON" in e.value for e in at.error)
    assert at.session_state["answers"] == {"q1": "a"}


def test_a_good_file_restores_but_never_changes_a_locked_answer():
    at = open_page(PAGE)
    answer(at, "q1", "a")
    _upload(at, "restore.file", _progress({"q1": "b", "r1": "mem"}, RECORDS))
    at.button(key="restore.go").click().run()
    assert at.session_state["answers"] == {"q1": "a", "r1": "mem"}
    # r1 is added; q1 was locked here already, so it is kept.
    restored = " ".join(
        (
            lessons.sentence("quiz_report", "restored_one", added=1),
            lessons.sentence("quiz_report", "kept_as_they_were", labels=BANK.question("q1").label),
        )
    )
    assert restored in [s.value for s in at.success]
    assert RECORDS["run_a.reflection"]["text"] in [t.value for t in at.text]


def test_the_report_shows_learner_text_literally():
    at = _page_with(records=RECORDS)
    assert not at.exception
    texts = [t.value for t in at.text]
    assert HOSTILE in texts
    assert FIRST_EXPERIMENTS[RECORDS["run_a.decision"]["choice"]] in texts
    assert not any("evil.example" in m.value for m in at.markdown)


def test_the_layer_and_the_budget_left_on_their_pages_appear_in_the_report():
    not_done = lessons.sentence("quiz_report", "not_done")
    assert sum(block == not_done for block in markdown_blocks(open_page(PAGE))) == 2
    at = _page_with(
        settings={
            "linear": {"n_in": 4096, "m_out": 4096, "batch": 32, "dtype": "fp32"},
            "memory": {
                "hidden": 2048,
                "layers": 16,
                "dtype": "fp32",
                "optimizer": "adam",
                "batch": 4,
                "seq_len": 1024,
                "device_gb": "24",
            },
        }
    )
    shown = markdown_blocks(at)
    # 2 × 32 × 4096 × 4096 = 1,073,741,824 FLOPs.
    layer = {"article": "A", "n_in": 4096, "m_out": 4096, "batch": 32, "flops": "1.07 GFLOPs"}
    assert lessons.sentence("quiz_report", "layer", **layer) in shown
    # Lesson estimate: 12 × 2048² × 16 layers = 805,306,368 parameters; FP32 weights and gradients
    # 3.22 GB each, Adam's two FP32 values 6.44 GB, activations 4 × 1024 × 2048 × 16 × 4 tensors
    # × 4 bytes = 2.15 GB, workspace 1 GB: 16.0 GB on the 24 GiB card, as the Memory page names it.
    budget = {
        "parameters_billion": 0.81,
        "total_gb": 16.0,
        "device": "24 GiB (25.77 GB) device",
        "activations_gb": 2.1,
    }
    assert lessons.sentence("quiz_report", "budget_fits", **budget, optimizer_gb=6.4) in shown


def test_without_a_configured_key_the_export_is_signed_with_the_installation_s_own():
    at = open_page(PAGE)
    assert lessons.sentence("quiz_report", "signed") in [c.value for c in at.caption]
    assert any(u.key == "verify.file" for u in at.file_uploader)
    _upload(at, "verify.file", _progress({"q1": "b"}))
    assert any(s.value.startswith(_verdict(Verdict.INTACT)) for s in at.success)


def _verdict(verdict: Verdict) -> str:
    """How the page heads what it found in an uploaded file: core's verdict, as a bold sentence."""
    return f"**{verdict.value.capitalize()}.**"


def _metric(at, label):
    """Every tile called `label` (the sidebar's summary and the report both show the quiz)."""
    return [m.value for m in at.metric if m.label == label]


@pytest.mark.parametrize("how", ["edited", "unsigned", "signed elsewhere"])
def test_a_file_not_signed_here_raises_no_score_in_a_fresh_session(how):
    # Four answers, one of them wrong; the learner then "corrects" q1 in the file by hand.
    answers = {"q1": "a", "q2": "c", "r1": "mem", "r2": "mem"}
    if how == "edited":
        document = json.loads(_progress(answers))
        document["state"]["answers"]["q1"] = BANK.question("q1").correct
        data = json.dumps(document).encode()
    elif how == "unsigned":
        data = _progress({**answers, "q1": BANK.question("q1").correct}, key=None)
    else:
        data = _progress({**answers, "q1": BANK.question("q1").correct}, key=STRONG_KEY)
    at = open_page(PAGE)
    before = _metric(at, "Marked checks"), _metric(at, "Quiz")
    _upload(at, "restore.file", data)
    at.button(key="restore.go").click().run()
    assert not at.exception
    assert at.session_state["answers"] == {}
    assert (_metric(at, "Marked checks"), _metric(at, "Quiz")) == before
    sentence = "restored_unsigned" if how == "unsigned" else "restored_edited"
    assert lessons.sentence("quiz_report", sentence) in [w.value for w in at.warning]


def test_a_file_not_signed_here_still_brings_back_written_work():
    at = open_page(PAGE)
    _upload(at, "restore.file", _progress({"q1": "b"}, RECORDS, key=None))
    at.button(key="restore.go").click().run()
    assert at.session_state["answers"] == {}
    assert RECORDS["run_a.reflection"]["text"] in [t.value for t in at.text]


def test_with_a_key_an_instructor_can_tell_intact_from_edited():
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.secrets["report_signing_key"] = STRONG_KEY
    open_page(PAGE, at=at)
    assert lessons.sentence("quiz_report", "signed") in [c.value for c in at.caption]
    signed = _progress({"q1": "b"}, key=STRONG_KEY)
    _upload(at, "verify.file", signed)
    assert any(s.value.startswith(_verdict(Verdict.INTACT)) and "quiz 1/3" in s.value for s in at.success)
    edited = json.loads(signed)
    edited["state"]["answers"]["q2"] = "c"
    at.file_uploader(key="verify.file").set_value(
        ("progress.json", json.dumps(edited).encode(), "application/json")
    ).run()
    assert any(e.value.startswith(_verdict(Verdict.EDITED)) for e in at.error)


def test_a_weak_signing_key_stops_the_app_and_says_how_to_make_one():
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.secrets["report_signing_key"] = "workshop2026"
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "secrets.token_hex(32)" in at.error[0].value
    assert not headings(at, 1)  # no page ran


def test_the_report_shows_the_scaling_plan_and_its_rationale_as_plain_text():
    from core.scaling.scenarios import load_scaling

    plans = list(load_scaling().synthesis.plans)
    at = open_page("pages/quiz_report.py")
    at.session_state["records"] = {"scaling.synthesis": {"plan": plans[0], "rationale": "**25%** at 32 GPUs"}}
    at.run()
    assert not at.exception
    assert any(t.value == "**25%** at 32 GPUs" for t in at.text)
    progress = lessons.sentence("quiz_report", "scaling_not_ready", parts_current=0, parts_total=5)
    assert progress in markdown_blocks(at)
