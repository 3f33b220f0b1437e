"""How a browser test knows its clicks were answered (`RunWatch`), on the protobuf messages a page's
websocket carries. No browser needed: these run in the e2e folder beside the helper they check."""

from __future__ import annotations

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.e2e.conftest import RunWatch


def _rerun_request(fragment_id: str = "", *, pressed: bool = False, reported: bool = False) -> bytes:
    message = BackMsg()
    message.rerun_script.fragment_id = fragment_id
    if pressed:  # a button's press: what a form's submit sends
        button = message.rerun_script.widget_states.widgets.add(id="$$ID-lock")
        button.trigger_value = True
    if reported:  # a component's state: what the learner-identity report sends
        report = message.rerun_script.widget_states.widgets.add(id="$$ID-identity")
        report.json_value = '{"learner_id": "a"}'
    return message.SerializeToString()


def _heartbeat() -> bytes:
    message = BackMsg()
    message.app_heartbeat = True
    return message.SerializeToString()


def _finished(status: ForwardMsg.ScriptFinishedStatus.ValueType) -> bytes:
    message = ForwardMsg()
    message.script_finished = status
    return message.SerializeToString()


def _session_status() -> bytes:
    message = ForwardMsg()
    message.session_status_changed.script_is_running = False
    return message.SerializeToString()


def test_a_request_is_answered_by_the_end_of_a_later_run():
    watch = RunWatch()
    assert watch.answered  # nothing asked yet
    watch.sent(_rerun_request("body"))
    assert not watch.answered
    assert watch.fragments == ["body"]
    watch.received(_session_status())
    assert not watch.answered
    watch.received(_finished(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY))
    assert watch.answered


def test_a_run_cut_short_by_a_newer_request_answers_nothing():
    watch = RunWatch()
    watch.sent(_rerun_request())
    watch.sent(_rerun_request())
    assert watch.fragments == ["", ""]  # the whole app, twice
    watch.received(_finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN))
    assert not watch.answered
    watch.received(_finished(ForwardMsg.FINISHED_SUCCESSFULLY))
    assert watch.answered  # one run answers both requests the server merged


def test_an_end_before_a_request_does_not_answer_it():
    watch = RunWatch()
    watch.received(_finished(ForwardMsg.FINISHED_SUCCESSFULLY))
    watch.sent(_rerun_request())
    assert not watch.answered


def test_every_binary_frame_the_page_is_sent_is_counted():
    watch = RunWatch()
    watch.received(_session_status())
    watch.received(_finished(ForwardMsg.FINISHED_SUCCESSFULLY))
    watch.received("not a protobuf")
    assert watch.frames == 2


def test_only_a_request_that_carries_a_press_counts_as_one():
    watch = RunWatch()
    watch.sent(_rerun_request("identity", reported=True))
    watch.sent(_rerun_request())
    assert watch.presses == 0 and watch.asked == 2
    watch.sent(_rerun_request("section", pressed=True, reported=True))
    assert watch.presses == 1


def test_messages_that_ask_for_no_run_and_text_frames_are_ignored():
    watch = RunWatch()
    watch.sent(_heartbeat())
    watch.sent("not a protobuf")
    assert watch.answered and watch.fragments == []
