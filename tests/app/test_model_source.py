"""Pasting a config.json on the Memory budget page: a valid one is sized, a bad one is refused in one
sentence."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from core import lessons
from core.config_record import CONFIG_RECORD, kept_config_text
from core.datafiles import DATA_DIR
from core.model_config import FAMILIES, load_config_text
from core.model_spec import ModelSpec
from store.ids import new_learner_id
from tests.app.conftest import HOME, open_page, sketch_budget
from ui import model_source, state
from ui.database import learner_store

PAGE = "pages/memory_budget.py"
MIXTRAL = (DATA_DIR / "models" / "mixtral-8x7b-v0.1.json").read_text()


def parameters_shown(at):
    return next(m.value for m in at.metric if m.label == "Parameters")


def paste(at, text):
    at.text_area(key="model_source.paste").input(text).run()
    [button] = [b for b in at.button if b.label == lessons.sentence("memory", "config_use")]
    return button.click().run()


def detailed_page():
    at = sketch_budget(open_page(PAGE))  # the budget shows once the page's two guesses are locked
    return at.radio(key="memory.estimate").set_value("detailed").run()


def test_a_pasted_config_is_sized_and_stays_until_the_learner_stops_using_it():
    at = detailed_page()
    default_count = parameters_shown(at)
    at = paste(at, MIXTRAL)
    assert not at.exception
    assert parameters_shown(at) == "46,702,792,704"
    texts = [t.value for t in at.text]
    in_use = lessons.sentence(
        "memory",
        "config_in_use_moe",
        name=model_source.NAME,
        family=FAMILIES["mixtral"].label,
        parameters=46_702_792_704,
        active_parameters=12_879_925_248,  # 2 of 8 experts routed per token
        active_experts=2,
        experts=8,
    )
    assert in_use in texts
    # The line under the count is the lesson's MoE sentence with Mixtral's figures: 8 experts held, 2 used.
    moe = lessons.sentence(
        "memory",
        "model_moe",
        parameters=46_702_792_704,
        model=model_source.NAME,
        experts=8,
        active_parameters=12_879_925_248,
        active_experts=2,
    )
    assert any(moe in line.value for line in at.markdown)
    [stop] = [b for b in at.button if b.label == lessons.sentence("memory", "config_stop")]
    at = stop.click().run()
    assert parameters_shown(at) == default_count


def test_a_refused_config_names_the_field_and_keeps_the_previous_model():
    at = paste(detailed_page(), MIXTRAL)
    at = paste(at, json.dumps({**json.loads(MIXTRAL), "hidden_size": -1}))
    assert not at.exception
    assert [e.value for e in at.error][0] == lessons.sentence("memory", "config_refused")
    # The refusal names the field, its bounds and the value sent.
    assert any("hidden_size" in t.value and "65,536" in t.value and "-1" in t.value for t in at.text)
    assert parameters_shown(at) == "46,702,792,704"
    t5 = '{"model_type": "t5"}'
    at = paste(at, t5)
    with pytest.raises(ValueError) as refused:
        kept_config_text(t5)
    assert str(refused.value) in [t.value for t in at.text]  # core's sentence, as it said it
    assert parameters_shown(at) == "46,702,792,704"


def test_the_config_in_use_is_read_once_not_on_every_rerun(monkeypatch):
    import ui.model_source

    read: list[str] = []
    real = ui.model_source.load_config_text

    def counted(text: str, *, name: str) -> ModelSpec:
        read.append(name)
        return real(text, name=name)

    monkeypatch.setattr(ui.model_source, "load_config_text", counted)
    at = paste(detailed_page(), MIXTRAL)
    at.run()
    at.run()
    assert parameters_shown(at) == "46,702,792,704"
    assert len(read) == 1  # when the button validated it; the reruns reuse the model


def _reload(learner: str):
    """The same learner in a new session, as a reload or a new tab opens it, on the detailed budget (the
    first time, once the page's guesses are locked)."""
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.session_state[state.LEARNER_ID] = learner
    at = open_page(PAGE, at=at.run())
    if any(b.key and b.key.startswith("predict.") for b in at.button):
        at = sketch_budget(at)
    return at.radio(key="memory.estimate").set_value("detailed").run()


def test_a_pasted_config_is_still_in_use_after_a_reload_and_stopping_is_kept_too():
    learner = new_learner_id()
    at = _reload(learner)
    default_count = parameters_shown(at)
    paste(at, MIXTRAL)
    again = _reload(learner)
    assert not again.exception
    assert parameters_shown(again) == "46,702,792,704"
    # Kept as the fields the count reads: far less than the file, and the same model.
    kept = learner_store().load(learner)["records"][CONFIG_RECORD]
    assert len(kept) < len(MIXTRAL) and load_config_text(kept) == load_config_text(MIXTRAL)
    [stop] = [b for b in again.button if b.label == lessons.sentence("memory", "config_stop")]
    stop.click().run()
    assert parameters_shown(_reload(learner)) == default_count


def test_a_config_used_after_the_hand_in_sizes_the_model_in_this_tab_and_the_record_keeps_none():
    learner = new_learner_id()
    at = _reload(learner)
    at.session_state[state.HANDED_IN_AT] = "2026-11-30T14:05:09+00:00"  # as the hand-in leaves it
    paste(at.run(), MIXTRAL)
    assert not at.exception
    assert parameters_shown(at) == "46,702,792,704"  # the tool still works: only answers lock
    assert CONFIG_RECORD not in learner_store().load(learner)["records"]
