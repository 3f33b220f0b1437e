"""Settings schemas: strict checks for progress files, lenient reading for URLs."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.finetune import LORA_TARGETS
from core.memory.setup import METHODS
from core.memory.sharding import SHARDINGS
from core.settings_schema import Field, load_schema, parse_field, parse_section

BATCH = Field(name="batch", kind="int", default=32, min=1, max=256, step=1)
WIDTH = Field(name="n_in", kind="int", default=4096, min=256, max=8192, step=256)
DTYPE = Field(name="dtype", kind="choice", default="fp32", choices=("fp32", "bf16"))


def test_every_schema_in_data_loads():
    schema = load_schema()
    assert "stack" in schema
    for section in schema.values():
        section.check(section.defaults())


def test_strict_check_accepts_exact_values_and_refuses_others():
    assert WIDTH.check(512) == 512
    for bad in (300, 0, 9000, "512", True, 512.5, None):
        with pytest.raises(ValueError):
            WIDTH.check(bad)
    assert DTYPE.check("bf16") == "bf16"
    with pytest.raises(ValueError, match="one of"):
        DTYPE.check("fp8")


def test_text_from_a_url_is_clamped_and_snapped():
    assert WIDTH.from_text("300") == 256  # nearest multiple of 256 from 256
    assert WIDTH.from_text("1e9") == 8192
    assert WIDTH.from_text("-5") == 256
    assert BATCH.from_text("7.4") == 7
    for bad in ("abc", "nan", "inf", ""):
        with pytest.raises(ValueError):
            BATCH.from_text(bad)


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_any_finite_number_from_a_url_becomes_a_value_the_strict_check_accepts(number):
    assert WIDTH.check(WIDTH.from_text(repr(number))) in range(256, 8193, 256)


@given(st.text(max_size=50))
def test_arbitrary_text_never_escapes_as_an_unchecked_value(text):
    try:
        value = BATCH.from_text(text)
    except ValueError:
        return
    assert BATCH.check(value) == value and 1 <= value <= 256 and not math.isnan(value)


def test_unknown_setting_names_are_refused():
    section = parse_section(
        "demo", [{"name": "batch", "kind": "int", "default": 32, "min": 1, "max": 256, "step": 1}]
    )
    with pytest.raises(ValueError, match="Unknown demo settings: colour"):
        section.check({"colour": "red"})


@pytest.mark.parametrize(
    "raw",
    [
        {"name": "x", "kind": "int", "default": 5, "min": 10, "max": 1, "step": 1},
        {"name": "x", "kind": "int", "default": 500, "min": 1, "max": 10, "step": 1},
        {"name": "x", "kind": "colour", "default": 1},
        {"name": "x", "kind": "choice", "default": "a", "choices": []},
        {"name": "x", "kind": "choice", "default": "a", "choices_from": "nowhere"},
    ],
)
def test_broken_fields_are_refused_at_load(raw):
    with pytest.raises(ValueError):
        parse_field(raw, "demo")


@pytest.mark.parametrize("page", ["memory", "your_oom"])
def test_the_training_pickers_offer_exactly_what_the_phase_model_runs(page):
    schema = load_schema()[page]
    assert schema.field("method").choices == METHODS
    assert schema.field("lora_targets").choices == LORA_TARGETS
    assert set(schema.field("sharding").choices) <= set(SHARDINGS)
    for name, bad in (("method", "dora"), ("sharding", "zero4"), ("lora_rank", 0), ("run_gpus", 2.5)):
        with pytest.raises(ValueError):
            schema.check({name: bad})
