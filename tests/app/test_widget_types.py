"""Widget values of the wrong type are dropped before Streamlit's deserialisers see them."""

import math

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime import Runtime

from ui import widget_types


def _rerun(*states: tuple[str, str, object]) -> BackMsg:
    msg = BackMsg()
    for widget_id, field, value in states:
        state = msg.rerun_script.widget_states.widgets.add()
        state.id = widget_id
        setattr(state, field, value)
    return msg


def test_a_value_of_another_type_is_dropped_and_the_rest_kept():
    msg = _rerun(
        ("classes", "string_value", "ten"), ("name", "string_value", "Ada"), ("never", "int_value", 3)
    )
    dropped = widget_types.drop_mistyped(msg, {"classes": "int_value", "name": "string_value"})
    assert dropped == 1
    kept = [(s.id, s.WhichOneof("value")) for s in msg.rerun_script.widget_states.widgets]
    assert kept == [("name", "string_value"), ("never", "int_value")]  # unknown ids are Streamlit's


def test_nan_and_infinite_numbers_are_dropped():
    msg = _rerun(("classes", "double_value", math.nan), ("batch", "double_value", 8.0))
    msg.rerun_script.widget_states.widgets.add(id="range").double_array_value.data.extend([1.0, math.inf])
    registered = {"classes": "double_value", "batch": "double_value", "range": "double_array_value"}
    assert widget_types.drop_mistyped(msg, registered) == 2
    assert [s.id for s in msg.rerun_script.widget_states.widgets] == ["batch"]


def test_other_messages_pass_untouched():
    msg = BackMsg()
    msg.load_git_info = True
    assert widget_types.drop_mistyped(msg, {"classes": "int_value"}) == 0


def test_install_wraps_the_handler_once():
    widget_types.install()
    wrapped = Runtime.handle_backmsg
    widget_types.install()
    assert Runtime.handle_backmsg is wrapped
    assert getattr(wrapped, "type_checked", False)
