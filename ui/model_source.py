"""The model the Memory budget page sizes: a preset, the custom sliders' shape, or the learner's config.json.

The config.json in use is a record of the learner's work (`core.config_record`): validated, cut to the
fields the count reads, stored with every other setting and carried by progress files, and read again
each run through `core`. After the hand-in the store keeps nothing new, so a config used then stays in
this tab only. The model read from it is kept in the session with its text, so a rerun reads the text
again only when it changed.
"""

from __future__ import annotations

import streamlit as st

from core import lessons
from core.config_record import CONFIG_RECORD, kept_config_text
from core.model_config import FAMILIES, decode_config_file, load_config_text
from core.model_spec import ModelSpec
from core.models import active_parameter_count, parameter_count, resolve_model
from ui import state

CONFIG_KEY = "model_source.config_text"  # the config used after the hand-in (None: none), this tab only
MODEL_KEY = "model_source.model"  # (text, model) of the config last read
REFUSAL_KEY = "model_source.refusal"  # why the last config was not used
PASTE_KEY = "model_source.paste"
UPLOAD_KEY = "model_source.upload"
NAME = "your config.json"


def _config_in_use() -> str | None:
    """The kept text of the config.json in use, or None while the picker's model is."""
    if CONFIG_KEY in st.session_state:
        return st.session_state[CONFIG_KEY]
    return state.record(CONFIG_RECORD)


def _keep(text: str | None) -> None:
    """Make `text` the config in use: in the learner's record, or in this tab once the lab is handed in."""
    if state.read_only():
        st.session_state[CONFIG_KEY] = text
    elif not state.store_record(CONFIG_RECORD, text):
        st.session_state[REFUSAL_KEY] = lessons.sentence("memory", "config_no_room")


def _use_config() -> None:
    """Validate what the learner pasted or uploaded; keep the previous model if it is refused."""
    upload = st.session_state.get(UPLOAD_KEY)
    try:
        text = (
            decode_config_file(upload.getvalue())
            if upload is not None
            else st.session_state.get(PASTE_KEY, "")
        )
        kept = kept_config_text(text)
    except ValueError as err:
        st.session_state[REFUSAL_KEY] = str(err)
        return
    st.session_state.pop(REFUSAL_KEY, None)
    _keep(kept)


def _stop_using() -> None:
    _keep(None)


def _config_model(text: str) -> ModelSpec:
    """The model of the config in use, read once per text and kept in this session."""
    kept = st.session_state.get(MODEL_KEY)
    if kept is None or kept[0] != text:
        kept = (text, load_config_text(text, name=NAME))
        st.session_state[MODEL_KEY] = kept
    return kept[1]


def _in_use_line(model: ModelSpec) -> str:
    family, parameters = FAMILIES[model.model_type].label, parameter_count(model)
    if not model.is_moe:
        return lessons.sentence("memory", "config_in_use", name=NAME, family=family, parameters=parameters)
    return lessons.sentence(
        "memory",
        "config_in_use_moe",
        name=NAME,
        family=family,
        parameters=parameters,
        active_parameters=active_parameter_count(model),
        active_experts=model.active_experts,
        experts=model.experts,
    )


def chosen_model(section: str) -> ModelSpec:
    """Draw the config.json box; the learner's config if one is in use, else the picked preset or shape."""
    text = _config_in_use()
    with st.expander(lessons.sentence("memory", "config_box"), expanded=text is not None):
        st.caption(lessons.sentence("memory", "config_help", model_types=", ".join(FAMILIES)))
        st.text_area(lessons.sentence("memory", "config_text"), key=PASTE_KEY, height=150)
        st.file_uploader(lessons.sentence("memory", "config_upload"), type="json", key=UPLOAD_KEY)
        st.button(lessons.sentence("memory", "config_use"), on_click=_use_config)
        refusal = st.session_state.get(REFUSAL_KEY)
        if refusal:
            st.error(lessons.sentence("memory", "config_refused"), icon=":material/error:")
            st.text(refusal)
    if text is None:
        settings = state.section_settings(section)
        return resolve_model(settings["model"], hidden=settings["hidden"], layers=settings["layers"])
    model = _config_model(text)
    st.text(_in_use_line(model))
    st.button(lessons.sentence("memory", "config_stop"), on_click=_stop_using)
    return model
