"""The one schema for what a client stores: the same checks for widget callbacks and progress files."""

import pytest

from core.client_values import (
    MAX_STATE_BYTES,
    check_answer,
    check_record,
    check_setting,
    check_size,
)
from core.questions import load_bank
from core.scaling.scenarios import load_scaling
from core.settings_schema import load_schema

BANK, SCHEMA = load_bank(), load_schema()
SYNTHESIS = load_scaling().synthesis
PART_A = load_scaling().parts["A"]


def _record(name, value):
    return check_record(name, value, bank=BANK, schema=SCHEMA)


def test_what_the_pages_store_is_accepted():
    plan = next(iter(SYNTHESIS.plans))
    assert _record("scaling.synthesis", {"plan": plan, "rejected": None, "rationale": "32 GPUs"})
    assert _record("scaling.predictions", {"A": next(iter(PART_A.options))})
    assert _record("run_a.decision", {"choice": "batch", "why": "Activations scale with batch."})
    assert check_answer("r1", "mem", bank=BANK) == "mem"
    assert check_setting("linear", "batch", 64, schema=SCHEMA) == 64


@pytest.mark.parametrize(
    "value",
    [
        "x" * 25_000_000,  # the memory-pinning repro: any string the client sends as a radio value
        "not-a-plan",
        ["a"],
        {"a": 1},
        17,
    ],
)
def test_a_synthesis_choice_must_be_one_of_the_options(value):
    with pytest.raises(ValueError):
        _record("scaling.synthesis", {"plan": value})


@pytest.mark.parametrize(
    ("question", "option"), [("r1", "banana"), ("r1", ["mem"]), ("r1", None), ("zz", "mem"), (["r1"], "mem")]
)
def test_an_answer_must_be_an_option_of_a_known_question(question, option):
    with pytest.raises(ValueError):
        check_answer(question, option, bank=BANK)


@pytest.mark.parametrize("value", [10**400, 10**20, "64", True, None, [64], 64.5, float("inf")])
def test_a_whole_number_setting_refuses_anything_else(value):
    with pytest.raises(ValueError):
        check_setting("linear", "batch", value, schema=SCHEMA)


def test_unknown_records_and_settings_are_refused():
    with pytest.raises(ValueError):
        _record("run_z.notes", "hi")
    with pytest.raises(ValueError):
        check_setting("linear", "warp", 1, schema=SCHEMA)


def test_the_size_limit_applies_to_the_whole_state_at_write_time():
    check_size({"records": {"a": "x" * (MAX_STATE_BYTES // 2)}})
    with pytest.raises(ValueError, match="larger than 200 kB"):
        check_size({"records": {f"r{i}": "x" * 2_000 for i in range(MAX_STATE_BYTES // 2_000)}})
