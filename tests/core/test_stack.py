"""The execution stack's data: five layers, and symptoms that point only at real layers."""

import copy

import pytest

from core.datafiles import read_json
from core.stack import load_stack, parse_stack, symptom_ids


def test_layers_run_from_model_to_hardware():
    assert [layer.id for layer in load_stack().layers] == [
        "model",
        "operations",
        "tensors",
        "kernels",
        "hardware",
    ]


def test_every_symptom_has_causes_and_a_first_measurement():
    stack = load_stack()
    assert symptom_ids() == ("oom", "slow", "nan", "flat", "low_util")
    for symptom in stack.symptoms:
        assert symptom.layer_ids() and symptom.first_measurement


def test_out_of_memory_can_start_above_the_hardware():
    # The lesson's point: the allocator reports it, the cause can be in the model, operations or tensors.
    assert {"model", "operations", "tensors"} <= set(load_stack().symptom("oom").layer_ids())


def test_a_cause_naming_an_unknown_layer_is_refused():
    raw = copy.deepcopy(read_json("stack.json"))
    raw["symptoms"][0]["causes"][0]["layer"] = "compiler"
    with pytest.raises(ValueError, match="unknown layers: compiler"):
        parse_stack(raw)


def test_unknown_symptom_is_a_readable_error():
    with pytest.raises(ValueError, match="no symptom"):
        load_stack().symptom("sad")
