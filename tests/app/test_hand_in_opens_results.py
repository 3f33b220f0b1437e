"""After the hand-in, a prediction never locked opens the result it gated, ungraded: the hand-in locks
answers, not the tools behind them (the roofline, the memory budget, Run A's pairs, each Scaling part)."""

import json

from core import lessons
from core.questions import load_bank
from core.run_a import PAIR_PREDICTION
from core.scaling.evidence import PREDICTIONS
from core.scaling.scenarios import load_scaling
from tests.app.conftest import open_page, open_tab, predict

HANDED_IN_AT = "2026-11-30T10:00:00+00:00"
LINEAR = ("linear.layer", "linear.matmul", "linear.gelu")


def _handed_in(page: str, at=None):
    """A learner who hands in first, then opens `page` (after whatever `at` did before)."""
    at = open_page(at=at)
    at.session_state["handed_in_at"] = HANDED_IN_AT
    return open_page(page, at=at)


def _ungraded(prediction_id: str) -> str:
    """The start of the caption a prediction never locked shows after the hand-in."""
    label = load_bank().prediction(prediction_id).label
    return lessons.sentence("marked", "not_predicted", label=label, answer="").split(" **")[0]


def _captions(at) -> list[str]:
    return [c.value for c in at.caption]


def _prediction_forms(at) -> list[str]:
    return [
        w.key for kind in (at.radio, at.selectbox) for w in kind if w.key and w.key.startswith("predict.")
    ]


def _stored_predictions(at) -> list[str]:
    return [
        name for name in at.session_state["records"] if name.startswith("predict.") or name == PREDICTIONS
    ]


def test_the_roofline_opens_ungraded_for_placements_never_locked_and_a_locked_one_keeps_its_grade():
    at = open_page("pages/linear_layer.py")
    predict(at, "linear.layer", "memory-bound")  # one placement locked before the hand-in
    at = _handed_in("pages/linear_layer.py", at=at)
    assert not at.exception
    assert json.loads(at.get("vega_lite_chart")[0].proto.spec)["title"]["text"].startswith("Roofline")
    assert lessons.sentence("linear", "locked") not in [i.value for i in at.info]
    assert not _prediction_forms(at)
    captions = _captions(at)
    assert [any(c.startswith(_ungraded(p)) for c in captions) for p in LINEAR] == [False, True, True]
    guess = load_bank().prediction("linear.layer").option_text("memory-bound")
    assert any(f"You predicted **{guess}**" in c for c in captions)  # still graded
    assert _stored_predictions(at) == ["predict.linear.layer"]  # nothing new is stored


def test_the_memory_budget_and_sweep_open_ungraded_with_no_guess_drawn():
    at = _handed_in("pages/memory_budget.py")
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 4  # budget, sweep, the phases, and the estimate check
    assert lessons.sentence("memory", "locked") not in [i.value for i in at.info]
    assert "guess" not in [d.name for d in at.get("vega_lite_chart")[1].proto.datasets]  # none to draw
    captions = _captions(at)
    assert all(
        any(c.startswith(_ungraded(p)) for c in captions) for p in ("memory.dominant", "memory.breaks")
    )
    assert not _prediction_forms(at) and not _stored_predictions(at)


def test_run_a_s_pairs_open_ungraded():
    at = open_page("pages/run_a.py")
    at.radio(key="run_a.decision.choice").set_value("batch")  # the experiments wait for a decision
    at.text_area(key="run_a.decision.why").input("Activations scale with the tokens.")
    at.button[[b.label for b in at.button].index("Save my decision")].click().run()
    at = _handed_in("pages/run_a.py", at=at)
    assert not at.exception
    assert [s.key for s in at.selectbox if s.key == "run_a.pair"] == ["run_a.pair"]
    assert any(c.startswith(_ungraded(PAIR_PREDICTION)) for c in _captions(at))
    assert not _prediction_forms(at) and not _stored_predictions(at)


def test_run_a_s_experiments_open_for_a_learner_who_handed_in_without_a_decision():
    at = _handed_in("pages/run_a.py")
    assert not at.exception
    assert lessons.sentence("run_a", "no_decision_handed_in") in [i.value for i in at.info]
    assert [r.key for r in at.radio if r.key == "run_a.experiment"] == ["run_a.experiment"]
    assert [s.key for s in at.selectbox if s.key == "run_a.pair"] == ["run_a.pair"]
    assert "run_a.decision" not in at.session_state["records"]  # nothing is stored for it


def test_every_scaling_part_opens_ungraded_with_no_verdict_and_nothing_stored():
    at = _handed_in("pages/scaling.py")
    for part, text in load_scaling().parts.items():
        open_tab(at, "scaling.part", text.tab)
        assert not at.exception
        assert len(at.get("vega_lite_chart")) == 1, part
        assert lessons.sentence("scaling", "not_predicted") in _captions(at)
        assert lessons.sentence("scaling", "result_hidden") not in _captions(at)
        verdicts = [m.value for m in [*at.success, *at.warning]]
        assert not [v for v in verdicts if "predict" in v.lower()], part  # ungraded: no held or missed
        assert at.button(key=f"scaling.capture.{part}").disabled  # and no snapshot after the hand-in
    assert PREDICTIONS not in at.session_state["records"]
