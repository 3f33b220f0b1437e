"""The load client follows fragments (`st.fragment`) as the browser does.

No server: messages are built by hand as Streamlit 1.67 sends them. A page "page-a" has a select
box outside any fragment (the frame), and a fragment "F" with a slider, a checkbox and a marked
question (a radio and its submit button in form "f1"); a fragment "G" nested in F draws a text input.
A fragment run's new_session names the fragments it reruns in `metadata.run.fragment_ids` and ends
with FINISHED_FRAGMENT_RUN_SUCCESSFULLY; its deltas carry `Delta.fragment_id`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.report import load_table, rerun_split
from bench.run_load import describe
from bench.scenarios import Behaviour, Learner, LearnerStats, Target, VisitState
from bench.stats import summarise
from tests.bench.conftest import finished, sent_states
from tests.harness.load_client import RunResult, Session
from tests.harness.page_model import PageModel, ProtocolError

PAGE = "page-a"


# ---- messages as the server sends them ------------------------------------------------


def _new_session(*fragments: str) -> bytes:
    msg = ForwardMsg()
    msg.new_session.page_script_hash = PAGE
    msg.new_session.config.max_cached_message_age = 2
    msg.metadata.run.script_run_id = "run"
    msg.metadata.run.fragment_ids.extend(fragments)
    return msg.SerializeToString()


def _navigation() -> bytes:
    msg = ForwardMsg()
    msg.navigation.page_script_hash = PAGE
    page = msg.navigation.app_pages.add()
    page.page_script_hash, page.url_pathname, page.page_name, page.is_default = PAGE, "", "Home", True
    return msg.SerializeToString()


def _selectbox(fragment: str = "") -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    box = msg.delta.new_element.selectbox
    box.id, box.label, box.default = "g1", "GPU", 0
    box.options[:] = ["A100 40GB SXM", "H100 SXM"]
    return msg


def _slider(fragment: str = "F", *, pushed: float | None = None) -> bytes:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    slider = msg.delta.new_element.slider
    slider.id, slider.label = "s1", "Batch (B)"
    slider.min, slider.max, slider.step = 1, 256, 1
    slider.default[:] = [1]
    if pushed is not None:
        slider.value[:] = [pushed]
        slider.set_value = True
    return msg.SerializeToString()


def _checkbox(fragment: str = "F") -> bytes:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    box = msg.delta.new_element.checkbox
    box.id, box.label, box.default = "c1", "Show the kernels", False
    return msg.SerializeToString()


def _radio(fragment: str = "F") -> bytes:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    radio = msg.delta.new_element.radio
    radio.id, radio.label, radio.form_id = "r1", "Which term grows?", "f1"
    radio.options[:] = ["Parameters", "Optimizer state", "Saved activations"]
    return msg.SerializeToString()


def _submit(fragment: str = "F") -> bytes:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    button = msg.delta.new_element.button
    button.id, button.label, button.form_id, button.is_form_submitter = "b1", "Lock in my answer", "f1", True
    return msg.SerializeToString()


def _text(fragment: str = "G") -> bytes:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    field_ = msg.delta.new_element.text_input
    field_.id, field_.label = "t1", "Your note"
    return msg.SerializeToString()


def _full_page() -> list[bytes]:
    """A whole run: the frame's select box, then fragment F (with G nested in it)."""
    return [
        _new_session(),
        _navigation(),
        _selectbox().SerializeToString(),
        _slider(),
        _checkbox(),
        _radio(),
        _submit(),
        _text(),
        finished(),
    ]


def _page() -> PageModel:
    model = PageModel()
    for raw in _full_page():
        model.apply(raw)
    return model


# ---- learning fragments and asking for fragment reruns ----------------------------------


def test_each_widget_remembers_the_innermost_fragment_that_drew_it() -> None:
    model = _page()
    assert {k: w.fragment_id for k, w in model.widgets.items()} == {
        "g1": "",
        "s1": "F",
        "c1": "F",
        "r1": "F",
        "b1": "F",
        "t1": "G",
    }


def test_a_change_inside_a_fragment_reruns_only_that_fragment_with_every_widget_state() -> None:
    model = _page()
    assert model.set_value("s1", [64.0]) is True
    msg = model.rerun_message()
    state = msg.rerun_script
    assert (state.fragment_id, state.is_auto_rerun, state.page_script_hash) == ("F", False, PAGE)
    # Like the browser, every widget's state goes with it, the frame's and the nested fragment's too.
    assert sent_states(msg) == {"g1": "A100 40GB SXM", "s1": [64.0], "c1": False}
    # The next rerun without an interaction ("R") is a whole-page run again.
    assert model.rerun_message().rerun_script.fragment_id == ""


def test_a_change_outside_any_fragment_or_a_page_switch_reruns_the_whole_page() -> None:
    model = _page()
    model.set_value("g1", "H100 SXM")
    assert model.rerun_message().rerun_script.fragment_id == ""
    model.set_value("s1", [64.0])
    moved = model.rerun_message(page_hash="page-b").rerun_script
    assert (moved.fragment_id, moved.page_script_hash) == ("", "page-b")
    # Naming the current page, as the workshop client does, still reruns the fragment.
    model.set_value("c1", True)
    assert model.rerun_message(page_hash=PAGE).rerun_script.fragment_id == "F"


def test_the_timer_of_a_run_every_fragment_still_sends_an_auto_rerun() -> None:
    state = _page().rerun_message(fragment_id="live").rerun_script
    assert (state.fragment_id, state.is_auto_rerun) == ("live", True)


def test_a_form_inside_a_fragment_is_submitted_with_a_fragment_rerun() -> None:
    model = _page()
    assert model.set_value("r1", "Saved activations") is False
    # Typing into a form reruns nothing, so it does not choose the fragment of a later rerun.
    assert model.rerun_message().rerun_script.fragment_id == ""
    model.click("b1")
    msg = model.rerun_message()
    assert msg.rerun_script.fragment_id == "F"
    assert sent_states(msg) == {
        "g1": "A100 40GB SXM",
        "s1": [1.0],
        "c1": False,
        "r1": "Saved activations",
        "b1": True,
    }


# ---- what a fragment run keeps and forgets ------------------------------------------------


def test_a_fragment_run_forgets_only_its_own_widgets_it_did_not_draw() -> None:
    model = _page()
    model.set_value("g1", "H100 SXM")
    model.set_value("c1", True)
    model.set_value("t1", "bench-s1-abcd")
    model.set_value("r1", "Parameters")  # pending in form f1
    # F reruns: the slider comes back with a pushed value, the checkbox and the form are gone,
    # a new number input appears. G's text input is not drawn, but G was not named as rerun.
    number = ForwardMsg()
    number.delta.fragment_id = "F"
    box = number.delta.new_element.number_input
    box.id, box.label, box.step, box.default = "n1", "Layers", 1, 32
    for raw in (_new_session("F"), _slider(pushed=32.0), number.SerializeToString(), finished("F")):
        model.apply(raw)
    assert list(model.widgets) == ["g1", "s1", "t1", "n1"]
    assert model.values == {"g1": "H100 SXM", "s1": [32.0], "t1": "bench-s1-abcd", "n1": 32}
    assert model.pending == {}
    assert model.forms() == {}


def test_a_fragment_run_forgets_the_widgets_of_a_fragment_nested_in_it_once_a_rerun_showed_the_nesting():
    model = _page()
    model.set_value("t1", "bench-s1-abcd")
    # F reruns and draws G inside it: now the model knows G lies within F.
    for raw in (_new_session("F"), _slider(), _text(), finished("F")):
        model.apply(raw)
    assert "t1" in model.widgets
    # F reruns without drawing G (a locked prediction hid it): G's text input goes with it.
    for raw in (_new_session("F"), _slider(), finished("F")):
        model.apply(raw)
    assert list(model.widgets) == ["g1", "s1"]
    assert "t1" not in model.values


def test_pending_form_values_outside_the_fragment_survive_its_run() -> None:
    model = PageModel()
    for raw in (
        _new_session(),
        _navigation(),
        _radio(fragment=""),
        _submit(fragment=""),
        _slider(),
        finished(),
    ):
        model.apply(raw)
    model.set_value("r1", "Optimizer state")
    model.set_value("s1", [8.0])
    for raw in (_new_session("F"), _slider(), finished("F")):
        model.apply(raw)
    assert model.pending == {"f1": {"r1": "Optimizer state"}}
    assert set(model.widgets) == {"r1", "b1", "s1"}


def test_a_whole_run_after_fragment_runs_still_forgets_everything_it_did_not_draw() -> None:
    model = _page()
    for raw in (
        _new_session("F"),
        _slider(),
        finished("F"),
        _new_session(),
        _selectbox().SerializeToString(),
        finished(),
    ):
        model.apply(raw)
    assert set(model.widgets) == {"g1"}
    assert set(model.values) == {"g1"}


def test_a_server_that_does_not_name_the_fragments_ran_the_one_asked_for() -> None:
    model = _page()
    model.set_value("c1", True)
    assert model.rerun_message().rerun_script.fragment_id == "F"
    plain_end = ForwardMsg(script_finished=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    for raw in (_new_session(), _checkbox(), plain_end.SerializeToString()):
        model.apply(raw)
    # F's widgets the run did not draw are gone; the frame's and G's stay.
    assert list(model.widgets) == ["g1", "c1", "t1"]
    assert model.values == {"g1": "A100 40GB SXM", "c1": True, "t1": None}


# ---- the message cache across fragment runs -----------------------------------------------


def _cached(message: ForwardMsg, digest: str) -> bytes:
    message.hash, message.metadata.cacheable = digest, True
    return message.SerializeToString()


def test_fragment_runs_keep_the_cache_entries_drawn_outside_them() -> None:
    model = PageModel()
    model.apply(_new_session())
    model.apply(_cached(_selectbox(), "outside"))
    model.apply(_cached(ForwardMsg.FromString(_slider()), "inside"))
    model.apply(finished())
    # Three fragment runs that never use either entry: only F's own entry expires (max age 2).
    for _ in range(3):
        model.apply(_new_session("F"))
        model.apply(finished("F"))
    hashes = list(model.rerun_message().rerun_script.cached_message_hashes)
    assert hashes == ["outside"]
    # The next whole run may refer to the frame's message, and the reference resolves.
    model.apply(_new_session())
    resolved = model.apply(ForwardMsg(ref_hash="outside").SerializeToString())
    assert resolved.delta.new_element.selectbox.id == "g1"
    with pytest.raises(ProtocolError):
        model.apply(ForwardMsg(ref_hash="inside").SerializeToString())


def test_a_fragment_runs_references_resolve_and_refresh_their_entries() -> None:
    model = PageModel()
    model.apply(_new_session())
    model.apply(_cached(ForwardMsg.FromString(_slider()), "inside"))
    model.apply(finished())
    for _ in range(4):
        model.apply(_new_session("F"))
        resolved = model.apply(ForwardMsg(ref_hash="inside").SerializeToString())
        assert resolved.delta.fragment_id == "F"
        model.apply(finished("F"))
    assert list(model.rerun_message().rerun_script.cached_message_hashes) == ["inside"]
    assert model.widgets["s1"].fragment_id == "F"


# ---- the session, the learner and the figures ------------------------------------------------


@dataclass
class FakeSocket:
    """Answers every BackMsg with a canned run, the way the server would, and records what was sent."""

    session: Session
    sent: list[BackMsg] = field(default_factory=list)

    async def send(self, raw: bytes) -> None:
        msg = BackMsg.FromString(raw)
        self.sent.append(msg)
        fragment = msg.rerun_script.fragment_id
        run = [_new_session(fragment), _slider(), finished(fragment)] if fragment else _full_page()
        for message in run:
            self.session._receive(message)


def test_the_session_reports_which_fragment_a_rerun_asked_for() -> None:
    async def scenario() -> tuple[RunResult, RunResult]:
        session = Session(port=0, marker="bench-s1-abcd")
        session._ws = FakeSocket(session)  # type: ignore[assignment]
        whole = await session._request(session.model.rerun_message(), time.perf_counter())
        session.model.set_value("s1", [16.0])
        return whole, await session.rerun()

    whole, fragment = asyncio.run(scenario())
    assert (whole.fragment_id, fragment.fragment_id) == ("", "F")
    assert fragment.status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY


def _early_end(fragment: str) -> bytes:
    msg = ForwardMsg(script_finished=ForwardMsg.FINISHED_EARLY_FOR_RERUN)
    msg.metadata.run.fragment_ids.append(fragment)
    return msg.SerializeToString()


@dataclass
class FakeSession:
    """A session on `_page()` whose reruns are answered as FakeSocket answers them; with `hand_over`,
    a fragment calls st.rerun() and a whole run follows, as the app's lesson body does after storing
    defaults."""

    hand_over: bool = False
    model: PageModel = field(default_factory=_page)
    fragments_asked: list[str] = field(default_factory=list)

    async def rerun(self, *, page_hash: str | None = None, fragment_id: str = "") -> RunResult:
        msg = self.model.rerun_message(page_hash=page_hash, fragment_id=fragment_id)
        fragment = msg.rerun_script.fragment_id
        self.fragments_asked.append(fragment)
        if fragment and self.hand_over:
            run = [_new_session(fragment), _early_end(fragment), *_full_page()]
        elif fragment:
            run = [_new_session(fragment), _slider(), finished(fragment)]
        else:
            run = _full_page()
        for raw in run:
            self.model.apply(raw)
        last = ForwardMsg.FromString(run[-1]).script_finished
        return RunResult(1.0 if fragment else 2.0, last, 1, PAGE, (), fragment_id=fragment)


def _visit(session: FakeSession) -> LearnerStats:
    learner = Learner(
        index=1,
        port=0,
        target=Target("fake", script=None, load_pages=None),  # type: ignore[arg-type]
        behaviour=Behaviour(think_min_s=0, think_max_s=0, actions_per_visit=3),
        run_token="abcd",
    )
    visit = VisitState(1, 0, learner.marker)
    deadline = time.monotonic() + 60
    assert asyncio.run(learner._visit(session, visit, {}, {}, deadline))  # type: ignore[arg-type]
    return learner.stats


def test_a_learner_counts_fragment_reruns_apart_from_whole_page_reruns() -> None:
    session = FakeSession()
    stats = _visit(session)
    # The choice is the frame's select box (whole page), then the slider (F), then the text input (G,
    # nested). F's run drew only the slider, so F's checkbox and form were forgotten; G's field was not.
    assert session.fragments_asked == ["", "F", "G"]
    assert (stats.rerun_page_ms, stats.rerun_fragment_ms, stats.rerun_ms) == (
        [2.0],
        [1.0, 1.0],
        [2.0, 1.0, 1.0],
    )
    total = LearnerStats()
    total.merge(stats)
    total.merge(stats)
    assert (len(total.rerun_fragment_ms), len(total.rerun_page_ms)) == (4, 2)


def test_a_fragment_rerun_that_hands_over_to_a_whole_run_counts_as_a_whole_page_rerun() -> None:
    session = FakeSession(hand_over=True)
    stats = _visit(session)
    # Each fragment rerun asked for (F, then G) was answered by a whole run, and is counted as one.
    assert session.fragments_asked == ["", "F", "G"]
    assert (len(stats.rerun_page_ms), len(stats.rerun_fragment_ms)) == (3, 0)


def _run(with_split: bool) -> dict[str, Any]:
    lat = summarise([10.0, 20.0]).as_dict()
    run: dict[str, Any] = {
        "config": {"target": "app", "post_script_gc": False, "mode": "burst", "sessions": 5},
        "label": "load-app",
        "elapsed_s": 20.0,
        "sessions_started": 5,
        "initial_load": lat,
        "rerun": lat,
        "navigate": lat,
        "errors": {},
        "error_count": 0,
        "exception_count": 0,
        "isolation": {"text_markers": {"checks": 3, "mismatches": 0, "unchecked": 0}, "mismatches": 0},
        "server": {
            "rss_per_session_mb": 0.5,
            "peak_rss_mb": 200.0,
            "cpu_mean_pct": 50.0,
        },
    }
    if with_split:
        run["rerun_fragment"] = summarise([10.0, 12.0, 14.0]).as_dict()
        run["rerun_page"] = summarise([]).as_dict()
    return run


def test_reports_show_the_split_and_still_read_older_results() -> None:
    assert rerun_split(_run(False)) == "-"
    assert rerun_split(_run(True)) == "3 (p95 14) / 0 (p95 -)"
    table = load_table([_run(False), _run(True)]).splitlines()
    assert table[2].count("| - |") == 1 and "| 3 (p95 14) / 0 (p95 -) |" in table[3]


def test_the_printed_summary_lists_both_kinds_of_rerun_when_measured() -> None:
    for with_split in (False, True):
        run = _run(with_split)
        run["isolation"]["widget_echo"] = {"checks": 0, "mismatches": 0, "unchecked": 0}
        run["server"].update(
            baseline_rss_mb=190.0,
            after_disconnect_rss_mb=195.0,
            cpu_s=4.0,
            cpu_peak_pct=90.0,
            rss_slope_mb_per_min=None,
        )
        run.update(server_log_problems=0, client_cpu_s=1.0, unsupported_widget_kinds=[])
        lines = describe(run).splitlines()
        names = [line.split()[0] for line in lines[1:6] if "n=" in line]
        expected = ["initial_load", "rerun", "rerun_fragment", "rerun_page", "navigate"]
        assert names == (expected if with_split else ["initial_load", "rerun", "navigate"])


# ---- the page's body fragment (a click in it reruns the body alone) -------------------------


def _in(root: int, raw: bytes) -> bytes:
    msg = ForwardMsg.FromString(raw)
    msg.metadata.delta_path[:] = [root, 0]
    return msg.SerializeToString()


def test_the_body_fragment_is_the_one_that_drew_the_main_area_first_in_a_whole_run() -> None:
    model = PageModel()
    sidebar, main = 1, 0
    for raw in (_new_session(), _navigation(), _in(sidebar, _checkbox("box")), _in(main, _slider("F"))):
        model.apply(raw)
    model.apply(_in(main, _text("G")))
    model.apply(finished())
    assert model.body_fragment == "F"
    model.click_in_body()
    assert model.rerun_message().rerun_script.fragment_id == "F"
    # A fragment run leaves it as it is; the next whole run learns it again.
    for raw in (_new_session("F"), _in(main, _slider("F")), finished("F")):
        model.apply(raw)
    assert model.body_fragment == "F"
    for raw in (_new_session(), _in(main, _selectbox().SerializeToString()), finished()):
        model.apply(raw)
    assert model.body_fragment == ""
    model.click_in_body()
    assert model.rerun_message().rerun_script.fragment_id == ""


def test_the_sections_are_the_other_fragments_that_drew_the_main_area_in_a_whole_run() -> None:
    model = PageModel()
    sidebar, main = 1, 0
    whole_run = [_new_session(), _navigation(), _in(sidebar, _checkbox("box")), _in(main, _slider("F"))]
    whole_run += [_in(main, _text("G")), _in(main, _text("")), _in(main, _text("G")), _in(main, _radio("H"))]
    for raw in [*whole_run, finished()]:
        model.apply(raw)
    assert model.section_fragments == ["G", "H"]
    model.click_in_section()
    assert model.rerun_message().rerun_script.fragment_id == "G"
    # A section's own rerun leaves them as they are; a whole run that draws none has none.
    for raw in (_new_session("G"), _in(main, _text("G")), finished("G")):
        model.apply(raw)
    assert model.section_fragments == ["G", "H"]
    for raw in (_new_session(), _in(main, _slider("F")), finished()):
        model.apply(raw)
    assert model.section_fragments == []
    with pytest.raises(ValueError, match="besides its body"):
        model.click_in_section()


def test_a_click_in_a_section_passes_over_a_part_whose_controls_are_all_in_forms() -> None:
    # The marked questions a page draws together rerun alone, but only on a lock (`run_load --mode locks`).
    model = PageModel()
    main = 0
    whole_run = [_new_session(), _navigation(), _in(main, _slider("F")), _in(main, _radio("H"))]
    whole_run += [_in(main, _submit("H")), _in(main, _text("G"))]
    for raw in [*whole_run, finished()]:
        model.apply(raw)
    assert model.section_fragments == ["H", "G"]
    model.click_in_section()
    assert model.rerun_message().rerun_script.fragment_id == "G"
