"""Every widget on every page, changed as Chromium sends the change, is taken by the server.

Streamlit's frontend does not always send a value in the field the server registered: a whole-number
`st.number_input` registers `double_value` and the browser sends `int_value` (its NumberInput widget
picks the field by the input's data type; every other widget of the lab sends the field it registered:
radio and select box `string_value`, slider `double_array_value`, select slider and multiselect
`string_array_value`, checkbox and toggle `bool_value`, text input and area `string_value`, buttons
`trigger_value`). A test that sends what the server registered cannot see a guard that drops the
browser's values, so here each widget is changed in turn, and every rerun carries all of the page's
widget values the way Chromium would. The widget-type guard writes a line for each message it trims
(server/widget_types.py); none may appear, while one value of a wrong kind at the end must make one.

A real `streamlit run serve.py` on a free loopback port, driven by the benchmark's client; the message
cap is off for this server, since the test changes dozens of widgets a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput

from tests.harness.load_client import Session, menu_paths
from tests.harness.page_model import PageModel, WidgetInfo, widget_state
from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer

DROPPED = "widget value(s) of a kind the widget does not take"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    log = tmp_path_factory.mktemp("server") / "server.log"
    env = {"LAB_MESSAGES_PER_S": "0"}
    with StreamlitServer(
        script=REPO_ROOT / "serve.py", post_script_gc=False, log_path=log, env=env
    ) as running:
        yield running


class _ChromiumModel(PageModel):
    """The benchmark's page model, also noting which number inputs take whole numbers only."""

    def __init__(self) -> None:
        super().__init__()
        self.whole_numbers: set[str] = set()

    def _on_delta(self, msg: ForwardMsg) -> None:
        element = msg.delta.new_element
        if element.WhichOneof("type") == "number_input" and element.number_input.data_type == NumberInput.INT:
            self.whole_numbers.add(element.number_input.id)
        super()._on_delta(msg)

    def as_chromium_sends(self, msg: BackMsg) -> BackMsg:
        """`msg` with each whole-number input's value in `int_value`, where Chromium puts it."""
        for state in msg.rerun_script.widget_states.widgets:
            if state.id in self.whole_numbers and state.WhichOneof("value") == "double_value":
                state.int_value = int(state.double_value)
        return msg


def _other(options: tuple[str, ...], current: Any) -> str | None:
    return next((option for option in options if option != current), None)


def changed_value(info: WidgetInfo, current: Any) -> Any:
    """A value the browser could send for `info`, other than `current` where the widget allows one;
    None for a widget the browser sends nothing for by itself (a component, a block)."""
    if info.kind == "number_input":
        step = info.step or 1
        value = (current if current is not None else info.low) or 0
        return value + step if info.high is None or value + step <= info.high else value - step
    if info.kind == "slider":
        low, high = info.low or 0.0, info.high or 0.0
        values = list(current or info.default)
        values[0] = high if values[0] != high else low
        return sorted(values)
    if info.kind == "select_slider":
        return [_other(info.options, (current or [None])[0]) or info.options[0]] * max(1, len(current or []))
    if info.kind in ("radio", "selectbox"):
        return _other(info.options, current)
    if info.kind == "multiselect":
        return list(info.options[:1])
    if info.kind == "checkbox":
        return not current
    if info.kind in ("text_input", "text_area"):
        return "Ada" if current != "Ada" else "Grace"
    return None


async def _change_every_widget(port: int, url_path: str) -> tuple[set[str], list[str]]:
    """Change each widget the page draws in turn (a change can redraw others under new ids, so each is
    known by its kind and label), then fill and submit each form; the kinds changed and the exceptions
    the runs showed."""
    model = _ChromiumModel()
    session = Session(port=port, marker="bench-s950-chrome", timeout_s=60, model=model)
    done: set[tuple[str, str, str]] = set()
    changed: set[str] = set()
    exceptions: list[str] = []

    def kind_of(info: WidgetInfo) -> str:
        return "whole_number" if info.id in model.whole_numbers else info.kind

    def next_widget() -> WidgetInfo | None:
        for info in model.widgets.values():
            if (info.kind, info.label, info.form_id) not in done and not info.disabled:
                return info
        return None

    try:
        exceptions += (await session.connect(url_path)).exceptions
        while (info := next_widget()) is not None:
            done.add((info.kind, info.label, info.form_id))
            if info.form_id:
                form = [w for w in model.widgets.values() if w.form_id == info.form_id]
                for widget in form:
                    done.add((widget.kind, widget.label, widget.form_id))
                    if (value := changed_value(widget, model.values.get(widget.id))) is not None:
                        model.set_value(widget.id, value)
                        changed.add(kind_of(widget))
                submit = next((w for w in form if w.is_submit and not w.disabled), None)
                if submit is None:
                    continue
                model.click(submit.id)
            elif info.kind == "button":
                model.click(info.id)
            elif (value := changed_value(info, model.values.get(info.id))) is not None:
                model.set_value(info.id, value)
            else:
                continue
            changed.add(kind_of(info))
            message = model.as_chromium_sends(model.rerun_message())
            exceptions += (await session._request(message, 0.0)).exceptions
    finally:
        await session.close()
    return changed, exceptions


async def _send_a_wrong_kind(port: int) -> None:
    model = _ChromiumModel()
    session = Session(port=port, marker="bench-s951-chrome", timeout_s=60, model=model)
    try:
        await session.connect("your-run")
        whole = sorted(model.whole_numbers)[0]
        message = model.rerun_message()
        message.rerun_script.widget_states.widgets.append(widget_state(whole, "string_value", "eight"))
        await session._request(message, 0.0)
    finally:
        await session.close()


def _dropped_lines(server: StreamlitServer) -> int:
    return sum(DROPPED in line for line in server.log_path.read_text(errors="replace").splitlines())


def test_every_widget_on_every_page_is_taken_as_chromium_sends_it(server):
    kinds: set[str] = set()
    for url_path in menu_paths(server.port, "bench-s952-chrome"):
        changed, exceptions = asyncio.run(_change_every_widget(server.port, url_path))
        assert exceptions == [], url_path
        kinds |= changed
    # The lab's widget kinds, the whole-number inputs among them, all went through.
    assert {
        "whole_number",
        "radio",
        "selectbox",
        "slider",
        "checkbox",
        "text_area",
        "button",
    } <= kinds
    assert _dropped_lines(server) == 0
    assert server.log_problems() == 0
    # The guard still drops a value of the wrong kind, and says so: the count above can fail.
    asyncio.run(_send_a_wrong_kind(server.port))
    assert _dropped_lines(server) == 1
