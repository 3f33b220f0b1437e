"""Widget values of a kind the widget does not take are dropped before Streamlit's deserialisers see
them; a whole-number input's `int_value`, as the browser sends it, is taken within its bounds."""

import math

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime import Runtime
from streamlit.testing.v1 import AppTest

from server import widget_types
from server.widget_types import Registered, registered_widget


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
    dropped = widget_types.drop_mistyped(
        msg, {"classes": Registered("int_value"), "name": Registered("string_value")}
    )
    assert dropped == 1
    kept = [(s.id, s.WhichOneof("value")) for s in msg.rerun_script.widget_states.widgets]
    assert kept == [("name", "string_value"), ("never", "int_value")]  # unknown ids are Streamlit's


def test_nan_and_infinite_numbers_are_dropped():
    msg = _rerun(("classes", "double_value", math.nan), ("batch", "double_value", 8.0))
    msg.rerun_script.widget_states.widgets.add(id="range").double_array_value.data.extend([1.0, math.inf])
    registered = {
        "classes": Registered("double_value"),
        "batch": Registered("double_value"),
        "range": Registered("double_array_value"),
    }
    assert widget_types.drop_mistyped(msg, registered) == 2
    assert [s.id for s in msg.rerun_script.widget_states.widgets] == ["batch"]


def test_other_messages_pass_untouched():
    msg = BackMsg()
    msg.load_git_info = True
    assert widget_types.drop_mistyped(msg, {"classes": Registered("int_value")}) == 0


def test_install_wraps_the_handler_once():
    widget_types.install()
    wrapped = Runtime.handle_backmsg
    widget_types.install()
    assert Runtime.handle_backmsg is wrapped
    assert getattr(wrapped, "type_checked", False)


WHOLE = Registered("double_value", whole_bounds=(1, 512))


@pytest.mark.parametrize(
    ("value", "kept"), [(1, True), (8, True), (512, True), (0, False), (513, False), (-(2**63), False)]
)
def test_a_whole_number_inputs_int_value_is_taken_within_its_bounds(value, kept):
    msg = _rerun(("gpus", "int_value", value))
    assert widget_types.drop_mistyped(msg, {"gpus": WHOLE}) == (0 if kept else 1)


def test_an_int_value_for_a_decimal_input_or_another_widget_is_dropped():
    msg = _rerun(("learning_rate", "int_value", 3), ("name", "int_value", 3))
    registered = {"learning_rate": Registered("double_value"), "name": Registered("string_value")}
    assert widget_types.drop_mistyped(msg, registered) == 2


def test_a_whole_number_input_still_takes_a_finite_double_value():
    msg = _rerun(("gpus", "double_value", 4.0), ("other", "double_value", math.inf))
    assert widget_types.drop_mistyped(msg, {"gpus": WHOLE, "other": WHOLE}) == 1


def test_streamlits_number_inputs_register_as_the_guard_reads_them():
    """The canary for the fix: a whole-number input's bounds, and none for a decimal one."""

    def script() -> None:
        import streamlit as st

        st.number_input("GPUs", min_value=1, max_value=512, value=1, step=1, key="gpus")
        st.number_input("Learning rate", min_value=0.0, max_value=1.0, value=0.001, key="lr")

    app = AppTest.from_function(script).run()
    widgets = (
        app.session_state._state._state._new_widget_state.widget_metadata
    )  # SafeSessionState, SessionState
    found = {meta.id.rsplit("-", 1)[-1]: registered_widget(meta) for meta in widgets.values()}
    assert found == {"gpus": Registered("double_value", (1, 512)), "lr": Registered("double_value")}
