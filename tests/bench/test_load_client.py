"""The load benchmark's pure parts: reading deltas into widget states, statistics, isolation checks.

No server and no timing here: messages are built by hand as the server would send them.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.scenarios import DEFAULT_AVOID, VisitState, Waves, check_answers, check_return, next_action
from bench.stats import least_squares_slope, percentile, summarise
from tests.bench.conftest import sent_states
from tests.harness.isolation import (
    IsolationTally,
    foreign_markers,
    grid_positions,
    marker_value,
    same_value,
    text_marker,
)
from tests.harness.page_model import PageModel, ProtocolError

AVOID = re.compile(DEFAULT_AVOID, re.IGNORECASE)


# ---- messages as the server sends them ------------------------------------------------


def _new_session(page_hash: str = "page-a") -> bytes:
    msg = ForwardMsg()
    msg.new_session.page_script_hash = page_hash
    msg.new_session.config.max_cached_message_age = 2
    return msg.SerializeToString()


def _navigation() -> bytes:
    msg = ForwardMsg()
    for page_hash, path, default in (("page-a", "", True), ("page-b", "linear-layer", False)):
        page = msg.navigation.app_pages.add()
        page.page_script_hash, page.url_pathname, page.page_name, page.is_default = (
            page_hash,
            path,
            path or "Home",
            default,
        )
    return msg.SerializeToString()


def _slider(widget_id: str = "s1", *, pushed: float | None = None) -> ForwardMsg:
    msg = ForwardMsg()
    slider = msg.delta.new_element.slider
    slider.id, slider.label = widget_id, "Batch (B)"
    slider.min, slider.max, slider.step = 1, 256, 1
    slider.default[:] = [1]
    if pushed is not None:
        slider.value[:] = [pushed]
        slider.set_value = True
    return msg


def _radio(
    widget_id: str = "r1", *, form: str = "f1", disabled: bool = False, default: int | None = None
) -> bytes:
    msg = ForwardMsg()
    radio = msg.delta.new_element.radio
    radio.id, radio.label, radio.form_id, radio.disabled = widget_id, "Which term grows?", form, disabled
    radio.options[:] = ["Parameters", "Optimizer state", "Saved activations"]
    if default is not None:
        radio.default = default
    return msg.SerializeToString()


def _button(widget_id: str, label: str, *, form: str = "") -> bytes:
    msg = ForwardMsg()
    button = msg.delta.new_element.button
    button.id, button.label, button.form_id, button.is_form_submitter = widget_id, label, form, bool(form)
    return msg.SerializeToString()


def _selectbox(widget_id: str = "g1") -> bytes:
    msg = ForwardMsg()
    box = msg.delta.new_element.selectbox
    box.id, box.label, box.default = widget_id, "GPU", 0
    box.options[:] = ["A100 40GB SXM", "H100 SXM"]
    return msg.SerializeToString()


def _finished(status: ForwardMsg.ScriptFinishedStatus.ValueType = ForwardMsg.FINISHED_SUCCESSFULLY) -> bytes:
    msg = ForwardMsg()
    msg.script_finished = status
    return msg.SerializeToString()


def _page_with_form() -> PageModel:
    """A page with a loose slider, a select box and a marked question (radio + submit) in a form."""
    model = PageModel()
    submit = _button("b1", "Lock in my answer", form="f1")
    for raw in (
        _new_session(),
        _navigation(),
        _slider().SerializeToString(),
        _selectbox(),
        _radio(),
        submit,
        _finished(),
    ):
        model.apply(raw)
    return model


def _states(model: PageModel, **kwargs: Any) -> dict[str, object]:
    """widget id -> value from the rerun_script message the model builds."""
    return sent_states(model.rerun_message(**kwargs))


# ---- deltas into widget states ----------------------------------------------------------


def test_widgets_are_learned_from_deltas_and_defaults_committed() -> None:
    model = _page_with_form()
    assert {w.kind for w in model.widgets.values()} == {"slider", "selectbox", "radio", "button"}
    assert [p.url_path for p in model.pages] == ["", "linear-layer"]
    # A drawn widget sends its default, as the browser commits it; the radio has no default.
    assert _states(model) == {"s1": [1.0], "g1": "A100 40GB SXM"}


def test_a_loose_widget_reruns_but_a_form_widget_waits_for_submit() -> None:
    model = _page_with_form()
    assert model.set_value("s1", [64.0]) is True
    assert model.set_value("r1", "Saved activations") is False
    assert _states(model) == {"s1": [64.0], "g1": "A100 40GB SXM"}
    model.click("b1")
    assert _states(model) == {"s1": [64.0], "g1": "A100 40GB SXM", "r1": "Saved activations", "b1": True}
    # A pressed button is a one-shot trigger: the next rerun no longer carries it.
    assert "b1" not in _states(model)


def test_rerun_message_names_the_page_and_query() -> None:
    model = _page_with_form()
    model.query_string = "batch=64"
    first = model.rerun_message().rerun_script
    assert (first.page_script_hash, first.query_string) == ("page-a", "batch=64")
    moved = model.rerun_message(page_hash="page-b").rerun_script
    # Moving to another page drops the query string, as the browser does.
    assert (moved.page_script_hash, moved.query_string) == ("page-b", "")
    assert PageModel().rerun_message(page_name="linear-layer").rerun_script.page_name == "linear-layer"


def test_widgets_the_finished_run_did_not_draw_are_forgotten() -> None:
    model = _page_with_form()
    model.set_value("r1", "Parameters")
    for raw in (_new_session(), _slider().SerializeToString(), _finished()):
        model.apply(raw)
    assert set(model.widgets) == {"s1"}
    assert _states(model) == {"s1": [1.0]}
    assert model.pending == {}


def test_a_value_pushed_by_the_server_replaces_the_local_one() -> None:
    model = _page_with_form()
    model.set_value("s1", [64.0])
    for raw in (_new_session(), _slider(pushed=32.0).SerializeToString(), _finished()):
        model.apply(raw)
    assert model.widgets["s1"].pushed_value == [32.0]
    assert _states(model) == {"s1": [32.0]}


def test_cached_messages_are_announced_and_references_resolved() -> None:
    model = PageModel()
    model.apply(_new_session())
    big = _slider()
    big.hash, big.metadata.cacheable = "abc123", True
    big.metadata.delta_path[:] = [0, 1]
    model.apply(big.SerializeToString())
    model.apply(_finished())
    assert list(model.rerun_message().rerun_script.cached_message_hashes) == ["abc123"]
    ref = ForwardMsg(ref_hash="abc123")
    ref.metadata.delta_path[:] = [0, 4]
    model.apply(_new_session())
    resolved = model.apply(ref.SerializeToString())
    assert resolved.delta.new_element.slider.id == "s1"
    assert list(resolved.metadata.delta_path) == [0, 4]
    with pytest.raises(ProtocolError):
        model.apply(ForwardMsg(ref_hash="missing").SerializeToString())


def test_cache_entries_expire_after_unused_runs() -> None:
    model = PageModel()
    model.apply(_new_session())
    big = _slider()
    big.hash, big.metadata.cacheable = "abc123", True
    model.apply(big.SerializeToString())
    # max_cached_message_age is 2: gone after the third run that does not use it.
    for _ in range(3):
        model.apply(_new_session())
        model.apply(_finished())
    assert list(model.rerun_message().rerun_script.cached_message_hashes) == []


def test_exception_elements_and_unsupported_widgets_are_recorded() -> None:
    model = PageModel()
    model.apply(_new_session())
    error = ForwardMsg()
    error.delta.new_element.exception.type = "ValueError"
    error.delta.new_element.exception.message = "Batch must be positive."
    model.apply(error.SerializeToString())
    upload = ForwardMsg()
    upload.delta.new_element.file_uploader.id = "u1"
    model.apply(upload.SerializeToString())
    assert model.run_exceptions == ["ValueError: Batch must be positive."]
    assert model.unsupported_kinds == {"file_uploader"}


# ---- what a learner does next -----------------------------------------------------------


def test_learner_chooses_then_moves_sliders_then_answers_then_stops() -> None:
    model = _page_with_form()
    visit = VisitState(session_index=1, visit=0, marker="bench-s001-abcd")
    kinds = []
    while (action := next_action(model, visit, AVOID, click_buttons=True)) is not None:
        kinds.append(action)
    assert [a.kind for a in kinds] == ["choice", "marker", "form"]
    choice, marker, form = kinds
    # Session 1 on visit 0 picks option (1 + 0) % 2 of the select box.
    assert choice.values == (("g1", "H100 SXM"),)
    # Slider 1..256 step 1 has 256 positions; session 1 visit 0 sits at (1*7 + 0 + 1) % 256 = 8 -> value 9.
    assert marker.values == marker.expect == (("s1", [9.0]),)
    assert form.press == "b1"
    assert form.values == (("r1", "Optimizer state"),)
    assert form.answers == (("Which term grows?", "Optimizer state"),)


def test_learner_never_presses_hand_in() -> None:
    model = PageModel()
    for raw in (_new_session(), _button("h1", "Hand in my lab"), _finished()):
        model.apply(raw)
    assert next_action(model, VisitState(0, 0, "bench-s000-abcd"), AVOID, click_buttons=True) is None
    for raw in (_new_session(), _button("x1", "Share this setup"), _finished()):
        model.apply(raw)
    action = next_action(model, VisitState(0, 0, "bench-s000-abcd"), AVOID, click_buttons=True)
    assert action is not None and action.press == "x1"


# ---- isolation checks -------------------------------------------------------------------


def test_foreign_text_markers_are_found_and_own_ignored() -> None:
    own, other = text_marker(7, "k3f9"), text_marker(12, "k3f9")
    payload = f"prefix {own} and {other} and {other}".encode()
    assert foreign_markers(payload, own) == ["bench-s012-k3f9"]
    assert foreign_markers(own.encode(), own) == []
    with pytest.raises(ValueError):
        text_marker(1000, "k3f9")
    with pytest.raises(ValueError):
        text_marker(1, "K3F9")


def test_returning_values_must_be_this_sessions_own() -> None:
    model = _page_with_form()
    tally = IsolationTally()
    for raw in (_new_session(), _slider(pushed=9.0).SerializeToString(), _finished()):
        model.apply(raw)
    check_return(model, {"s1": [9.0]}, tally)
    check_return(model, {"s1": [17.0]}, tally)
    check_return(model, {"gone": [1.0]}, tally)
    assert (tally.checks, tally.mismatches, tally.unchecked) == (2, 1, 1)
    assert "came back [9.0]" in tally.examples[0]


def test_a_locked_answer_must_show_this_sessions_choice() -> None:
    model = PageModel()
    # The locked question is a disabled radio whose default index is the answer given.
    for raw in (_new_session(), _radio("r1.locked", form="", disabled=True, default=2), _finished()):
        model.apply(raw)
    tally = IsolationTally()
    check_answers(model, {"Which term grows?": "Saved activations"}, tally)
    check_answers(model, {"Which term grows?": "Parameters"}, tally)
    assert (tally.checks, tally.mismatches) == (2, 1)


def test_tallies_merge() -> None:
    a, b = IsolationTally(), IsolationTally()
    a.record(True, "")
    b.record(False, "leak")
    b.unchecked = 3
    a.merge(b)
    assert (a.checks, a.mismatches, a.unchecked, a.examples) == (2, 1, 3, ["leak"])


def test_same_value_tolerates_float_noise_only() -> None:
    assert same_value([0.1 + 0.2], [0.3])
    assert not same_value([64.0], [65.0])
    assert not same_value([1.0], [1.0, 2.0])
    assert same_value("Parameters", "Parameters")
    assert not same_value("Parameters", None)


def test_marker_value_worked_example() -> None:
    # Inputs (n): 256..8192 step 256 -> 32 positions; session 3 visit 1 -> (3*7 + 1 + 1) % 32 = 23
    # -> 256 + 23 * 256 = 6144.
    assert marker_value(session_index=3, visit=1, low=256, high=8192, step=256, default=256) == 6144
    # A position landing on the default moves one step on: session 0 visit 0 -> position 1 = default.
    assert marker_value(session_index=0, visit=0, low=0, high=10, step=1, default=1) == 2


@given(
    session=st.integers(0, 999),
    visit=st.integers(0, 50),
    low=st.integers(-100, 100),
    positions=st.integers(1, 200),
    step=st.sampled_from([0.01, 0.5, 1.0, 256.0]),
    default_position=st.integers(0, 199),
)
def test_marker_value_stays_on_the_grid_and_off_the_default(
    session, visit, low, positions, step, default_position
) -> None:
    high = low + (positions - 1) * step
    default = low + min(default_position, positions - 1) * step
    value = marker_value(session_index=session, visit=visit, low=low, high=high, step=step, default=default)
    assert grid_positions(low=low, high=high, step=step) == positions
    assert low - 1e-9 <= value <= high + 1e-9
    assert abs((value - low) / step - round((value - low) / step)) < 1e-6
    if positions > 1:
        assert not same_value(value, default)


# ---- statistics -------------------------------------------------------------------------


def test_percentiles_worked_by_hand() -> None:
    samples = [40.0, 10.0, 30.0, 20.0]
    # Sorted 10, 20, 30, 40. p50: rank 0.5 * 3 = 1.5 -> 20 + 0.5 * 10 = 25.
    assert percentile(samples, 50) == 25.0
    # p95: rank 2.85 -> 30 + 0.85 * 10 = 38.5.
    assert percentile(samples, 95) == pytest.approx(38.5)
    assert percentile(samples, 0) == 10.0
    assert percentile(samples, 100) == 40.0
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile(samples, 101)


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50), st.floats(0, 100), st.floats(0, 100))
def test_percentiles_are_ordered_and_bounded(samples, pct_a, pct_b) -> None:
    low, high = sorted((pct_a, pct_b))
    assert min(samples) <= percentile(samples, low) <= percentile(samples, high) <= max(samples)


def test_summary_and_slope() -> None:
    summary = summarise([10.0, 20.0, 30.0, 40.0])
    assert (summary.count, summary.mean_ms, summary.p50_ms, summary.max_ms) == (4, 25.0, 25.0, 40.0)
    assert summarise([]).count == 0 and summarise([]).p95_ms is None
    # Points (0, 1), (1, 3), (2, 5) lie on y = 2x + 1.
    assert least_squares_slope([0, 1, 2], [1, 3, 5]) == pytest.approx(2.0)
    assert least_squares_slope([1, 1], [2, 3]) is None


# ---- burst-mode waves -------------------------------------------------------------------


def test_waves_release_together_and_do_not_wait_for_leavers() -> None:
    async def scenario() -> list[str]:
        waves, order = Waves(3, timeout_s=5), []

        async def learner(name: str, leave: bool) -> None:
            if leave:
                waves.leave()
                return
            await waves.wait()
            order.append(name)

        await asyncio.wait_for(
            asyncio.gather(learner("a", False), learner("b", False), learner("c", True)), 2
        )
        return order

    assert sorted(asyncio.run(scenario())) == ["a", "b"]
