"""Typed ids with their labels (core.validate.Labelled), as the phase model's settings use them."""

import json
import pickle

import pytest

from core.memory.settings import Optimizer, Recompute
from core.settings_schema import section


def test_a_member_is_the_id_string_and_carries_its_label():
    assert Optimizer.SGD == "sgd" and f"{Optimizer.SGD}" == "sgd"
    assert Optimizer.SGD.label == "SGD without momentum (no state)"
    assert json.dumps({"optimizer": Optimizer.ADAMW}) == '{"optimizer": "adamw"}'
    assert {"adamw": 2}[Optimizer.ADAMW] == 2


def test_ids_are_plain_strings_in_declaration_order():
    assert Optimizer.ids() == ("adamw", "adam", "sgd_momentum", "sgd", "adamw8bit")
    assert all(type(i) is str for i in Optimizer.ids())


def test_the_schema_offers_the_ids_the_code_declares():
    assert section("memory").field("phase_optimizer").choices == Optimizer.ids()
    assert section("memory").field("phase_recompute").choices == ("none", "full")


def test_an_unknown_id_is_a_readable_error():
    with pytest.raises(ValueError, match=r"recomputation must be one of: none, full; got 'selective'"):
        Recompute.of("selective", "recomputation")


def test_the_label_function_survives_pickling_as_a_widget_format_function():
    label_of = pickle.loads(pickle.dumps(Optimizer.label_of))
    assert label_of("sgd_momentum") == "SGD with momentum (one buffer per parameter)"
