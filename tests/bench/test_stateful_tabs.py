"""The load client treats stateful tabs and expanders (`on_change="rerun"`) as the browser does.

No server: messages are built by hand as Streamlit 1.67 sends them for the Scaling page with its
tabs made stateful (`st.tabs(labels, key="scaling.part", on_change="rerun")`), drawn inside the page's
body fragment "F": an `add_block` delta whose `tab_container.id` is the widget id and whose
`default_tab_index` is the open tab, then one child `add_block` per tab with its label, then what the
open tab holds. With `key` only, no `default_tab_label` is sent (that comes with bind="query-params").
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.scenarios import DEFAULT_AVOID, Behaviour, Learner, LearnerStats, Target, VisitState, next_action
from tests.bench.conftest import finished, sent_states
from tests.harness.load_client import RunResult
from tests.harness.page_model import PageModel

PAGE = "scaling"
BODY = "F"
TABS = "$$ID-tabs-scaling.part"
LABELS = ("A · Scaling", "B · Fit", "C · Placement", "D · Bubble", "E · Stragglers", "Synthesis")
AVOID = re.compile(DEFAULT_AVOID, re.IGNORECASE)


def _new_session(*fragments: str) -> bytes:
    msg = ForwardMsg()
    msg.new_session.page_script_hash = PAGE
    msg.metadata.run.fragment_ids.extend(fragments)
    return msg.SerializeToString()


def _block(path: tuple[int, ...]) -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.fragment_id = BODY
    msg.metadata.delta_path[:] = path
    return msg


def _tabs(open_index: int = 0, *, widget_id: str = TABS, at: tuple[int, ...] = (0, 0, 7)) -> list[bytes]:
    """The tab container and its tabs, as `st.tabs` sends them; a container without an id is stateless."""
    container = _block(at)
    container.delta.add_block.tab_container.default_tab_index = open_index
    if widget_id:
        container.delta.add_block.tab_container.id = widget_id
    tabs = []
    for index, label in enumerate(LABELS):
        tab = _block((*at, index))
        tab.delta.add_block.tab.label = label
        tabs.append(tab)
    return [msg.SerializeToString() for msg in (container, *tabs)]


def _selectbox() -> bytes:
    """A select box in the page's frame, outside the body fragment."""
    msg = _block((0, 0, 2))
    msg.delta.fragment_id = ""
    box = msg.delta.new_element.selectbox
    box.id, box.label, box.default = "g1", "Training context", 0
    box.options[:] = ["7B on 8 GPUs", "70B on 64 GPUs"]
    return msg.SerializeToString()


def _slider_in_tab(open_index: int) -> bytes:
    msg = _block((0, 0, 7, open_index, 0))
    slider = msg.delta.new_element.slider
    slider.id, slider.label = f"s{open_index}", "GPUs"
    slider.min, slider.max, slider.step = 1, 64, 1
    slider.default[:] = [8]
    return msg.SerializeToString()


def _expander(expanded: bool, *, widget_id: str = "e1") -> bytes:
    msg = _block((0, 0, 8))
    expander = msg.delta.add_block.expandable
    expander.label, expander.expanded = "How the numbers are made", expanded
    if widget_id:
        expander.id = widget_id
    return msg.SerializeToString()


def _run(open_index: int = 0, *fragments: str, expanded: bool = False) -> list[bytes]:
    """One run of the page: the frame's select box, the tabs with the open tab's slider, an expander."""
    return [
        _new_session(*fragments),
        _selectbox(),
        *_tabs(open_index),
        _slider_in_tab(open_index),
        _expander(expanded),
        finished(*fragments),
    ]


def _answer(model: PageModel, *fragments: str) -> list[bytes]:
    """The server's answer to a rerun: the tab the learner opened is built, the expander as it set it."""
    opened = LABELS.index(model.values[TABS]) if model.values.get(TABS) else 0
    return _run(opened, *fragments, expanded=bool(model.values.get("e1")))


def _page(open_index: int = 0) -> PageModel:
    model = PageModel()
    for raw in _run(open_index):
        model.apply(raw)
    return model


# ---- learning them ---------------------------------------------------------------------------


def test_a_stateful_tab_container_is_learned_with_its_tabs_in_order_and_its_fragment() -> None:
    model = PageModel()
    # Before the page's own: a stateless tab container (no widget id) and a stateless expander, which
    # are layout, not widgets.
    stateless = [*_tabs(widget_id="", at=(0, 0, 3)), _expander(False, widget_id="")]
    new_session, *page = _run(2)
    for raw in (new_session, *stateless, *page):
        model.apply(raw)
    tabs = model.widgets[TABS]
    assert (tabs.kind, tabs.options, tabs.fragment_id) == ("tabs", LABELS, BODY)
    assert tabs.value_field == "string_value"
    # What the server shows (default_tab_index 2), which the browser does not commit on the first draw.
    assert (tabs.pushed_value, tabs.default, model.values[TABS]) == ("C · Placement", None, None)
    expander = model.widgets["e1"]
    assert (expander.kind, expander.label, expander.value_field) == (
        "expander",
        "How the numbers are made",
        "bool_value",
    )
    assert list(model.widgets) == ["g1", TABS, "s2", "e1"]


def test_no_tab_state_is_sent_until_a_tab_is_opened_then_with_every_rerun() -> None:
    model = _page()
    assert set(sent_states(model.rerun_message())) == {"g1", "s0"}
    assert model.set_value(TABS, "Synthesis") is True
    msg = model.rerun_message()
    # Like the browser: a rerun of the body fragment, the chosen tab's label as a string_value.
    assert msg.rerun_script.fragment_id == BODY
    (state,) = [s for s in msg.rerun_script.widget_states.widgets if s.id == TABS]
    assert (state.WhichOneof("value"), state.string_value) == ("string_value", "Synthesis")
    # The server builds the open tab only: the fragment's run shows Synthesis (index 5) and no slider.
    for raw in (_new_session(BODY), *_tabs(5), _expander(False), finished(BODY)):
        model.apply(raw)
    assert sent_states(model.rerun_message()) == {"g1": "7B on 8 GPUs", TABS: "Synthesis"}
    # And again after a whole run that shows it.
    for raw in _run(5):
        model.apply(raw)
    assert sent_states(model.rerun_message())[TABS] == "Synthesis"


def test_a_tab_the_server_opens_becomes_the_value_the_browser_sends() -> None:
    model = _page(0)
    for raw in _run(3):  # the script opened D (session state): defaultTabIndex moved from 0 to 3
        model.apply(raw)
    assert sent_states(model.rerun_message())[TABS] == "D · Bubble"
    model = _page(3)  # first drawn with D open: nothing committed yet
    assert TABS not in sent_states(model.rerun_message())


def test_a_run_that_no_longer_draws_the_tabs_forgets_them() -> None:
    model = _page()
    model.set_value(TABS, "B · Fit")
    # In its place, tabs that are layout only (no widget id): their tabs are not options of anything.
    for raw in (_new_session(), _selectbox(), *_tabs(widget_id=""), finished()):
        model.apply(raw)
    assert TABS not in model.widgets
    assert sent_states(model.rerun_message()) == {"g1": "7B on 8 GPUs"}
    # Drawn again later, it starts over like a new tab strip in the browser: nothing sent.
    for raw in _run(0):
        model.apply(raw)
    assert TABS not in sent_states(model.rerun_message())


def test_opening_an_expander_sends_true_with_its_fragment() -> None:
    model = _page()
    assert "e1" not in sent_states(model.rerun_message())
    model.set_value("e1", True)
    msg = model.rerun_message()
    assert msg.rerun_script.fragment_id == BODY
    assert sent_states(msg)["e1"] is True


# ---- the learner opens tabs ------------------------------------------------------------------


def _actions(
    model: PageModel, session_index: int, visit: int = 0, lap: int = 0
) -> list[tuple[str, tuple[Any, ...]]]:
    state = VisitState(session_index, visit, f"bench-s{session_index}-abcd", lap=lap)
    actions = []
    for _ in range(10):  # more than the page offers: a learner that repeats itself shows here
        action = next_action(model, state, AVOID, click_buttons=False)
        if action is None:
            break
        actions.append((action.kind, action.values))
    return actions


def test_after_the_choice_a_learner_opens_a_tab_not_shown_and_leaves_the_expander_closed() -> None:
    actions = _actions(_page(0), session_index=1)
    assert [(kind, values[0][0]) for kind, values in actions] == [
        ("choice", "g1"),
        ("open", TABS),
        ("marker", "s0"),
    ]
    # Learner 1 on visit 0 opens the second of the tabs not shown ("A" is open): C.
    assert actions[1][1][0][1] == "C · Placement"


def test_learners_and_laps_take_turns_over_the_tabs_never_the_open_one() -> None:
    def opened(session_index: int, visit: int, lap: int = 0, open_index: int = 0) -> str:
        actions = _actions(_page(open_index), session_index, visit, lap)
        return str(next(values for kind, values in actions if kind == "open")[0][1])

    # Learner i walks the pages from page i, so at visit 7 - i every learner is on the same page: on
    # their first lap, each opens another tab (a turn by session and visit would give them all one).
    assert [opened(i, 7 - i) for i in range(6)] == [*LABELS[1:], LABELS[1]]
    assert [opened(0, 10 * lap, lap) for lap in range(3)] == list(LABELS[1:4])
    # With D open on screen, D is never the one opened.
    assert [opened(i, 0, open_index=3) for i in range(5)] == [LABELS[i] for i in (0, 1, 2, 4, 5)]


def test_a_tab_container_opened_on_this_visit_is_not_opened_again() -> None:
    model = _page(0)
    state = VisitState(0, 0, "bench-s0-abcd")
    kinds = []
    for _ in range(10):
        action = next_action(model, state, AVOID, click_buttons=False)
        if action is None:
            break
        kinds.append(action.kind)
        for widget_id, value in action.values:
            model.set_value(widget_id, value)
        for raw in _answer(model):  # the opened tab is built: its own slider appears
            model.apply(raw)
    # The opened tab's slider gets this learner's marker, and the tabs are opened once.
    assert kinds == ["choice", "open", "marker"]
    assert set(model.widgets) == {"g1", TABS, "s1", "e1"}
    assert model.values[TABS] == "B · Fit"


@dataclass
class FakeSession:
    """A session on the page whose reruns are answered with the tab the learner opened built."""

    model: PageModel = field(default_factory=_page)

    async def rerun(self, *, page_hash: str | None = None, fragment_id: str = "") -> RunResult:
        msg = self.model.rerun_message(page_hash=page_hash, fragment_id=fragment_id)
        fragment = msg.rerun_script.fragment_id
        for raw in _answer(self.model, *([fragment] if fragment else [])):
            self.model.apply(raw)
        return RunResult(1.0, ForwardMsg.FINISHED_SUCCESSFULLY, 1, PAGE, (), fragment_id=fragment)


def test_a_learner_counts_what_it_opened_by_name() -> None:
    stats = LearnerStats()
    for index in (0, 1):
        learner = Learner(
            index=index,
            port=0,
            target=Target("fake", script=None, load_pages=None),  # type: ignore[arg-type]
            behaviour=Behaviour(think_min_s=0, think_max_s=0, actions_per_visit=6, click_buttons=False),
            run_token="abcd",
        )
        visit = VisitState(index, 0, learner.marker)
        session = FakeSession()
        assert asyncio.run(learner._visit(session, visit, {}, {}, time.monotonic() + 60))  # type: ignore[arg-type]
        stats.merge(learner.stats)
    assert stats.opened == {"B · Fit": 1, "C · Placement": 1}
