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


def test_training_is_slow_follows_the_lessons_fork():
    slow = load_stack().symptom("slow")
    # Tensors (dtype, placement, layout) is a classic cause; the input pipeline is the host's, not the
    # hardware's.
    assert "tensors" in slow.layer_ids() and "host" in slow.layer_ids() and "hardware" not in slow.layer_ids()
    assert slow.fork is not None
    assert "upward" in slow.fork.idle and "overhead" in slow.fork.busy


def test_the_input_pipeline_is_never_blamed_on_the_hardware():
    for symptom in load_stack().symptoms:
        for cause in symptom.causes:
            if cause.layer_id == "hardware":
                assert "loader" not in cause.how and "input pipeline" not in cause.how


def test_what_feeds_the_stack_is_read_before_the_stack():
    stack = load_stack()
    assert [place.id for place in stack.places()][:2] == ["host", "model"]
    assert len(stack.layers) == 5


def test_a_fork_missing_a_branch_is_refused():
    raw = copy.deepcopy(read_json("stack.json"))
    del raw["symptoms"][1]["fork"]["busy"]
    with pytest.raises(ValueError, match="both an idle and a busy GPU"):
        parse_stack(raw)
