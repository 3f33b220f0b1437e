"""The pickers for how a run trains: the method (with LoRA's rank and targets when adapters train), the
number of GPUs and how they share model state. Their values live in the learner's settings of the page's
section (`data/settings/<section>.json`), like every other picker."""

from __future__ import annotations

import streamlit as st

from core.memory.settings import LoraTarget, Method, Sharding
from core.memory.setup import ADAPTED, TrainingMethod
from core.settings_schema import section as schema_section
from ui import state
from ui.prose import literal
from ui.settings import persistent


def training_pickers(section: str, *, disabled: bool = False) -> None:
    """Draw the method, LoRA, GPU-count and sharding pickers of `section`."""
    fields = schema_section(section)
    st.radio(
        "Training method",
        fields.field("method").choices,
        format_func=Method.label_of,
        horizontal=True,
        disabled=disabled,
        **persistent(section, "method"),
    )
    left, right = st.columns(2)
    if state.section_settings(section)["method"] in ADAPTED:
        rank = fields.field("lora_rank")
        left.number_input(
            "LoRA rank",
            rank.min,
            rank.max,
            step=rank.step,
            disabled=disabled,
            **persistent(section, "lora_rank"),
        )
        right.selectbox(
            "LoRA targets",
            fields.field("lora_targets").choices,
            format_func=LoraTarget.label_of,
            disabled=disabled,
            **persistent(section, "lora_targets"),
        )
    gpus = fields.field("run_gpus")
    left.number_input(
        "GPUs", gpus.min, gpus.max, step=gpus.step, disabled=disabled, **persistent(section, "run_gpus")
    )
    right.selectbox(
        "Sharding over the GPUs",
        fields.field("sharding").choices,
        format_func=Sharding.label_of,
        disabled=disabled,
        **persistent(section, "sharding"),
    )


def training_method(section: str) -> TrainingMethod:
    """The training `section`'s pickers describe; ValueError with a sentence if it cannot run (many GPUs
    with no sharding, say)."""
    chosen = state.section_settings(section)
    return TrainingMethod(
        method=chosen["method"],
        lora_rank=chosen["lora_rank"],
        lora_targets=chosen["lora_targets"],
        gpus=chosen["run_gpus"],
        sharding=chosen["sharding"],
    )


def training_box(section: str, label: str, *, disabled: bool = False) -> None:
    """The pickers in an expander called `label`, built only while open: most runs a learner names train
    every parameter on one GPU, and a page pays for every element it draws. The label stays the same
    whatever is picked: Streamlit counts a relabelled expander as a new one, and closes it."""
    box = st.expander(label, key=f"{section}.training_open", on_change="rerun")
    if box.open:
        with box:
            training_pickers(section, disabled=disabled)


def checked_training(section: str) -> TrainingMethod | None:
    """The training `section`'s pickers describe, or None after saying in core's sentence why it cannot
    run."""
    try:
        return training_method(section)
    except ValueError as err:
        st.error(literal(str(err)), icon=":material/error:")
        return None
