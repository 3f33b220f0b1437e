"""The Your OOM page: paste Run A's message, name the run (prefilled), read the verdict, apply a change,
paste a measurement; and a bad paste is one sentence that changes nothing."""

from __future__ import annotations

import json

import pytest

from core import lessons
from core.memory.reference import measured_steps, run_a_measurements
from core.oom import parse_oom_message
from tests.app.conftest import headings, open_page, says
from ui.prose import literal

PAGE = "pages/your_oom.py"
RUN_A_MESSAGE = next(
    r.message
    for r in run_a_measurements()
    if (r.batch, r.seq, r.attn, r.optim, r.cap_gib) == (1, 1536, "eager", "adam", 24.0)
)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 41, in <module>\n'
    "    loss.backward()\n"
    '  File "/venv/lib/python3.11/site-packages/torch/_tensor.py", line 648, in backward\n'
    "torch.OutOfMemoryError: " + RUN_A_MESSAGE
)


# Where Run A died, as the phase model names the phase (core.memory.phases' words, a figure here).
WHERE = "loss.backward() of step 1"


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _paste(text: str):
    at = open_page(PAGE)
    assert not at.exception
    at.text_area(key="your_oom.message").input(text).run()
    assert not at.exception
    return at


def test_the_page_asks_for_a_message_first():
    at = open_page(PAGE)
    assert not at.exception
    assert "Your OOM" in headings(at, 1)
    assert lessons.sentence("your_oom", "paste_first") in [i.value for i in at.info]
    assert not at.get("vega_lite_chart")


def test_run_a_message_died_in_backward_of_step_1_and_the_estimate_agrees():
    at = _paste(TRACEBACK)
    assert at.number_input(key="your_oom.cap_gib").value == 24.0  # prefilled from "24.00 GiB allowed"
    assert at.selectbox(key="your_oom.gpu").value == "H200"  # 139.80 GiB total capacity
    text = _markdown(at)
    assert lessons.sentence("your_oom", "died_traceback", where=WHERE) in text
    assert says("your_oom", "agrees", where=WHERE) in text
    assert "1 × 1,536 × 50,257 vocabulary × 4 bytes = 294.47 MiB" in text and "296.00 MiB" in text
    assert len(at.get("vega_lite_chart")) == 1
    terms = at.table[0].value
    assert "Saved activations" in list(terms["Term"])


def test_the_message_alone_is_placed_by_its_block():
    at = _paste(RUN_A_MESSAGE)
    assert says("your_oom", "died_block", where=WHERE, tried="296.00 MiB") in _markdown(at)


def test_halving_the_tokens_moves_the_failure_into_the_optimizer_step():
    at = _paste(RUN_A_MESSAGE)
    changes = at.table[1].value
    half = changes[changes["Change"].str.startswith("Half the tokens")].iloc[0]
    assert half["Then"] == lessons.sentence("your_oom", "change_fails", where="optimizer.step() of step 1")
    at.selectbox(key="your_oom.change").select(half["Change"]).run()
    at.button[1].click().run()  # Apply
    assert not at.exception
    assert at.number_input(key="your_oom.seq").value == 768
    assert any(
        "Applied: Half the tokens" in s.value and "optimizer.step() of step 1" in s.value for s in at.success
    )
    # the message is still read against the run it came from; the change is drawn as its own chart
    assert says("your_oom", "died_block", where=WHERE) in _markdown(at)
    assert len(at.get("vega_lite_chart")) == 2
    at.button[2].click().run()  # back to the run the message came from
    assert at.number_input(key="your_oom.seq").value == 1536 and not at.success


def test_a_bigger_card_is_applied_as_the_card_without_the_cap():
    at = _paste(RUN_A_MESSAGE)
    card = next(c for c in at.selectbox(key="your_oom.change").options if c.startswith("A bigger card"))
    at.selectbox(key="your_oom.change").select(card).run()
    at.button[1].click().run()
    assert at.number_input(key="your_oom.cap_gib").value == 0.0
    assert at.selectbox(key="your_oom.gpu").value == "A100 40GB SXM"
    assert any(lessons.sentence("your_oom", "change_fits") in s.value for s in at.success)


def test_a_bad_paste_is_one_sentence_and_shows_no_verdict():
    paste = "RuntimeError: shapes cannot be multiplied (**bold** <b>x</b>)"
    at = _paste(paste)
    with pytest.raises(ValueError) as refused:
        parse_oom_message(paste)
    assert len(at.error) == 1 and str(refused.value) in at.error[0].value.replace("\\", "")
    assert not at.get("vega_lite_chart")
    assert "bold" not in _markdown(at)


def test_a_measurement_pasted_back_is_compared_and_a_bad_one_refused():
    row = measured_steps()[0]  # GPT-2 small, 4 × 1024, fp32 eager foreach: the H200's steady step
    at = _paste(RUN_A_MESSAGE)
    at.selectbox(key="your_oom.model").select("GPT-2 small").run()
    for key, value in (("batch", 4), ("seq", 1024)):
        at.number_input(key=f"your_oom.{key}").set_value(value).run()
    at.selectbox(key="your_oom.optimizer").select("adamw").run()
    at.text_area(key="your_oom.measured").input(json.dumps({"step_2": row.phases})).run()
    assert not at.exception
    measured = at.table[-1].value
    assert list(measured["Step"]) == [2, 2, 2]
    assert all(abs(int(v.rstrip("%"))) < 10 for v in measured["Off by"])
    at.text_area(key="your_oom.measured").input('{"step_1": 5}').run()
    assert any(says("your_oom", "measure_refused") in e.value.replace("\\", "") for e in at.error)
    assert len(at.table) == 2  # the refused paste shows no comparison


def test_a_config_json_that_is_not_json_is_one_sentence():
    at = _paste(RUN_A_MESSAGE)
    at.selectbox(key="your_oom.model").select("My config.json").run()
    at.text_area(key="your_oom.config").input("{not json").run()
    assert not at.exception
    assert any(says("your_oom", "config_refused") in e.value.replace("\\", "") for e in at.error)


def test_a_run_the_phase_model_does_not_count_is_one_sentence_not_a_crash():
    # QLoRA under autocast: peft's 4-bit layer asks CUDA's autocast only, so it is not counted yet.
    at = _paste(TRACEBACK)
    at.selectbox(key="your_oom.precision").set_value("amp").run()
    at.session_state["your_oom.training_open"] = True
    at = at.run()
    at = at.radio(key="your_oom.method").set_value("qlora").run()
    assert not at.exception
    [error] = at.error
    reason = "QLoRA under autocast is not counted; QLoRA in BF16 is."
    assert error.value == literal(lessons.sentence("your_oom", "run_not_counted", reason=reason))
    assert not at.get("vega_lite_chart")
