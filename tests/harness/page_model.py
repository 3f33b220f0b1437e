"""What a browser knows about one Streamlit session, rebuilt from the server's messages.

Pure protocol bookkeeping, no I/O: feed it every ForwardMsg the server sends and it keeps
the app's pages, the widgets on screen (learned from the deltas, never hard-coded), their
committed values, values typed into forms but not yet submitted, and the message cache.
It builds the `rerun_script` BackMsg the browser would send next.

Fragments (`st.fragment`) are followed as the browser follows them: each widget remembers the
fragment whose delta drew it (`Delta.fragment_id`, the innermost fragment), an interaction with
a widget inside a fragment asks the server to rerun only that fragment, and after a fragment run
only that fragment's widgets the run did not draw are forgotten.

Stateful tabs and expanders (`st.tabs` / `st.expander` with `on_change="rerun"`) are widgets too,
drawn as `add_block` deltas: a tab container's options are the labels of its child tabs, in order.
As in the browser, their state is sent only once it changed on screen (the learner opened a tab, or
the server showed another one), then with every rerun while they are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Block_pb2 import Block
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.RootContainer_pb2 import RootContainer
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED_OK = ForwardMsg.FINISHED_SUCCESSFULLY
FINISHED_COMPILE_ERROR = ForwardMsg.FINISHED_WITH_COMPILE_ERROR
FINISHED_EARLY = ForwardMsg.FINISHED_EARLY_FOR_RERUN
FINISHED_FRAGMENT_OK = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
MAIN_CONTAINER = RootContainer.MAIN  # a delta path's first index: the page's main area, not the sidebar

# Element kind -> the WidgetState field its value travels in (see register_widget's
# value_type in streamlit/elements/widgets/*.py). Kinds not listed here are counted as
# "unsupported": the client never sends a value for them, so the server uses its default.
_VALUE_FIELDS = {
    "slider": "double_array_value",
    "select_slider": "string_array_value",
    "radio": "string_value",
    "selectbox": "string_value",
    "checkbox": "bool_value",
    "number_input": "double_value",
    "text_input": "string_value",
    "text_area": "string_value",
    "multiselect": "string_array_value",
    "button": "trigger_value",
    # A `st.components.v2` component: its state, as the JSON its JavaScript sets.
    "bidi_component": "json_value",
    # Stateful blocks (see layouts.py `tabs`, `expander`): the open tab's label, whether it is expanded.
    "tabs": "string_value",
    "expander": "bool_value",
}
# Kinds drawn as blocks: the browser sends their state only after it changed on screen.
_BLOCK_KINDS = ("tabs", "expander")


class ProtocolError(Exception):
    """The server sent something a browser could not have handled either."""


@dataclass(frozen=True)
class PageRef:
    """One page of the app, as announced in the navigation message."""

    script_hash: str
    url_path: str
    title: str
    is_default: bool


@dataclass(frozen=True)
class WidgetInfo:
    """One widget as the latest delta described it."""

    id: str
    kind: str
    label: str
    form_id: str
    disabled: bool
    options: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    step: float | None = None
    max_chars: int = 0
    default: Any = None
    is_submit: bool = False
    # The server pushes a value when the script set it (session state, a reset): the
    # browser then shows exactly this value. Tabs and expanders always say what they show (the open
    # tab's label, whether expanded) in `pushed_value`; `pushed` is set when that changed since the
    # run before, which is when the browser takes it as the widget's value.
    pushed: bool = False
    pushed_value: Any = None
    # A component's data from the script (JSON text), which its JavaScript would read.
    data: str = ""
    # The fragment that drew it ("" outside any fragment); an interaction reruns only that fragment.
    fragment_id: str = ""

    @property
    def value_field(self) -> str:
        """The WidgetState field this widget's value travels in."""
        return _VALUE_FIELDS[self.kind]


def _pick(options: tuple[str, ...], index: int | None) -> str | None:
    if index is None or not 0 <= index < len(options):
        return None
    return options[index]


def _slider(proto: Slider) -> dict[str, Any]:
    if proto.type == Slider.SELECT_SLIDER:
        options = tuple(proto.options)
        return {
            "kind": "select_slider",
            "options": options,
            "default": [o for o in (_pick(options, int(i)) for i in proto.default) if o is not None],
            "pushed_value": list(proto.raw_value),
        }
    return {
        "kind": "slider",
        "low": proto.min,
        "high": proto.max,
        "step": proto.step,
        "default": list(proto.default),
        "pushed_value": list(proto.value),
    }


def _choice(proto: Any) -> dict[str, Any]:
    options = tuple(proto.options)
    default = _pick(options, proto.default) if proto.HasField("default") else None
    pushed = proto.raw_value if proto.HasField("raw_value") else None
    return {"options": options, "default": default, "pushed_value": pushed}


def _optional(proto: Any, name: str) -> Any:
    return getattr(proto, name) if proto.HasField(name) else None


def widget_from_element(element: Element) -> WidgetInfo | None:
    """Describe the widget in a new_element delta, or None if the element is not a widget."""
    kind: str | None = element.WhichOneof("type")
    if kind is None:
        return None
    proto = getattr(element, kind)
    if "id" not in proto.DESCRIPTOR.fields_by_name or not proto.id:
        return None
    extra: dict[str, Any]
    if kind == "slider":
        extra = _slider(proto)
        kind = extra.pop("kind")
    elif kind in ("radio", "selectbox"):
        extra = _choice(proto)
    elif kind == "checkbox":
        extra = {"default": proto.default, "pushed_value": proto.value}
    elif kind == "number_input":
        extra = {
            "low": proto.min if proto.has_min else None,
            "high": proto.max if proto.has_max else None,
            "step": proto.step,
            "default": _optional(proto, "default"),
            "pushed_value": _optional(proto, "value"),
        }
    elif kind in ("text_input", "text_area"):
        extra = {
            "max_chars": proto.max_chars,
            "default": _optional(proto, "default"),
            "pushed_value": _optional(proto, "value"),
        }
    elif kind == "multiselect":
        options = tuple(proto.options)
        extra = {
            "options": options,
            "default": [options[i] for i in proto.default if 0 <= i < len(options)],
            "pushed_value": list(proto.raw_values),
        }
    elif kind == "button":
        extra = {"is_submit": proto.is_form_submitter}
    elif kind == "bidi_component":
        extra = {"label": proto.component_name, "data": proto.json}
    else:
        kind = f"unsupported:{kind}"
        extra = {}
    pushed = bool(getattr(proto, "set_value", False))
    if not pushed:
        extra["pushed_value"] = None
    extra.setdefault("label", getattr(proto, "label", ""))
    return WidgetInfo(
        id=proto.id,
        kind=kind,
        form_id=getattr(proto, "form_id", ""),
        disabled=getattr(proto, "disabled", False),
        pushed=pushed,
        **extra,
    )


def widget_from_block(block: Block) -> WidgetInfo | None:
    """Describe the stateful tab container or expander in an add_block delta, or None if it is not one.

    A tab container's options (its tabs' labels) come with its children's deltas; `default` is None
    because the browser commits nothing when it draws one.
    """
    kind = block.WhichOneof("type")
    if kind == "tab_container" and block.tab_container.id:
        return WidgetInfo(id=block.tab_container.id, kind="tabs", label="", form_id="", disabled=False)
    if kind == "expandable" and block.expandable.id:
        expander = block.expandable
        return WidgetInfo(
            id=expander.id,
            kind="expander",
            label=expander.label,
            form_id="",
            disabled=False,
            pushed_value=expander.expanded,
        )
    return None


def widget_state(widget_id: str, value_field: str, value: Any) -> WidgetState:
    """The WidgetState proto carrying one widget's value."""
    state = WidgetState(id=widget_id)
    if value_field in ("double_array_value", "string_array_value"):
        getattr(state, value_field).data.extend(value)
    else:
        setattr(state, value_field, value)
    return state


class PageModel:
    """The browser's view of one session: pages, widgets, values, forms and the message cache."""

    def __init__(self) -> None:
        self.pages: list[PageRef] = []
        self.page_hash = ""
        # The server's id for this session, which a request outside a run (a download) must name.
        self.session_id = ""
        self.current_page = ""
        self.query_string = ""
        self.widgets: dict[str, WidgetInfo] = {}
        self.values: dict[str, Any] = {}
        self.pending: dict[str, dict[str, Any]] = {}
        self.triggers: dict[str, bool] = {}
        self.run_widgets: dict[str, WidgetInfo] = {}
        # Delta path of each stateful tab container the run drew -> (its widget id, the open tab's index).
        self._run_tab_containers: dict[tuple[int, ...], tuple[str, int]] = {}
        self.run_exceptions: list[str] = []
        # Markdown, caption and alert texts the latest run drew.
        self.run_texts: list[str] = []
        # The fragment the server asked to rerun on its own (`st.fragment(run_every=...)`), if any.
        self.auto_rerun_fragment = ""
        # The fragments the latest run reruns (metadata.run of its new_session); empty for a whole run.
        self.run_fragments: tuple[str, ...] = ()
        # The fragment of the widget the learner last changed or pressed: the next rerun of this page
        # reruns only it, as the browser asks ("" reruns the whole page).
        self.interaction_fragment = ""
        self._requested_fragment = ""
        # The fragment that drew the page's main area in the latest whole run: that of its first
        # element there (None until the run draws one, "" when outside any fragment).
        self.body_fragment: str | None = None
        # The other fragments that drew in the main area in the latest whole run, in the order they
        # first drew: parts of the body that rerun alone (the app's lesson sections).
        self.section_fragments: list[str] = []
        self.page_not_found = ""
        self.unsupported_kinds: set[str] = set()
        # Widgets whose values the model does not make (a file uploader), by id, as last drawn: a caller
        # sends their values itself (Session.rerun_with).
        self.unsupported_widgets: dict[str, WidgetInfo] = {}
        # hash -> (message, run that last used it, fragment that drew it).
        self._cache: dict[str, tuple[bytes, int, str]] = {}
        # Fragment -> the fragment it was drawn in (a nested fragment), learnt from fragment reruns.
        self._enclosing: dict[str, str] = {}
        self._run_count = 0
        self._max_cache_age = 2

    # ---- incoming messages -------------------------------------------------------------

    def apply(self, raw: bytes) -> ForwardMsg:
        """Decode one ForwardMsg, resolve cache references, update the model, return the message."""
        msg = ForwardMsg.FromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            msg = self._dereference(msg)
            kind = msg.WhichOneof("type")
        elif msg.metadata.cacheable and msg.hash:
            self._cache[msg.hash] = (raw, self._run_count, msg.delta.fragment_id)
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(msg)
        return msg

    def _dereference(self, ref: ForwardMsg) -> ForwardMsg:
        entry = self._cache.get(ref.ref_hash)
        if entry is None:
            raise ProtocolError(f"cache miss for referenced message {ref.ref_hash}")
        self._cache[ref.ref_hash] = (entry[0], self._run_count, entry[2])
        msg = ForwardMsg.FromString(entry[0])
        msg.metadata.CopyFrom(ref.metadata)
        return msg

    def _on_new_session(self, msg: ForwardMsg) -> None:
        self.page_hash = msg.new_session.page_script_hash
        if msg.new_session.initialize.session_id:
            self.session_id = msg.new_session.initialize.session_id
        if msg.new_session.config.max_cached_message_age:
            self._max_cache_age = msg.new_session.config.max_cached_message_age
        self.run_fragments = tuple(msg.metadata.run.fragment_ids)
        if not self.run_fragments:
            self.body_fragment = None
            self.section_fragments = []
        self.run_widgets = {}
        self._run_tab_containers = {}
        self.run_exceptions = []
        self.run_texts = []
        self.page_not_found = ""

    def _on_auto_rerun(self, msg: ForwardMsg) -> None:
        self.auto_rerun_fragment = msg.auto_rerun.fragment_id

    def _on_navigation(self, msg: ForwardMsg) -> None:
        # With `st.navigation` the page that ran is named here. `page_hash` (from new_session) is the
        # main script's, and a rerun naming the main script runs the default page.
        self.current_page = msg.navigation.page_script_hash
        self.pages = [
            PageRef(
                script_hash=p.page_script_hash,
                url_path=p.url_pathname,
                title=p.page_name,
                is_default=p.is_default,
            )
            for p in msg.navigation.app_pages
        ]

    def _on_page_info_changed(self, msg: ForwardMsg) -> None:
        self.query_string = msg.page_info_changed.query_string

    def _on_page_not_found(self, msg: ForwardMsg) -> None:
        self.page_not_found = msg.page_not_found.page_name or "(unnamed)"

    def _on_session_event(self, msg: ForwardMsg) -> None:
        if msg.session_event.WhichOneof("type") == "script_compilation_exception":
            error = msg.session_event.script_compilation_exception
            self.run_exceptions.append(f"{error.type}: {error.message}")

    def _on_delta(self, msg: ForwardMsg) -> None:
        path = msg.metadata.delta_path
        drawn_in = msg.delta.fragment_id
        if self.run_fragments and drawn_in and drawn_in not in self.run_fragments:
            self._enclosing[drawn_in] = self.run_fragments[0]
        if not self.run_fragments and path and path[0] == MAIN_CONTAINER:
            if self.body_fragment is None:
                self.body_fragment = drawn_in
            elif drawn_in and drawn_in != self.body_fragment and drawn_in not in self.section_fragments:
                self.section_fragments.append(drawn_in)
        if msg.delta.WhichOneof("type") == "add_block":
            self._on_block(msg.delta.add_block, tuple(path), msg.delta.fragment_id)
            return
        if msg.delta.WhichOneof("type") != "new_element":
            return
        element = msg.delta.new_element
        if element.WhichOneof("type") == "exception":
            self.run_exceptions.append(f"{element.exception.type}: {element.exception.message}")
            return
        if element.WhichOneof("type") == "markdown":
            self.run_texts.append(element.markdown.body)
            return
        if element.WhichOneof("type") == "alert":
            self.run_texts.append(element.alert.body)
            return
        info = widget_from_element(element)
        if info is None:
            return
        info = replace(info, fragment_id=msg.delta.fragment_id)
        if info.kind.startswith("unsupported:"):
            self.unsupported_kinds.add(info.kind.split(":", 1)[1])
            self.unsupported_widgets[info.id] = info
            return
        self._learn(info)

    def _on_block(self, block: Block, path: tuple[int, ...], fragment_id: str) -> None:
        parent = self._run_tab_containers.get(path[:-1])
        if block.WhichOneof("type") == "tab" and parent is not None:
            widget_id, open_index = parent
            tabs = self.run_widgets[widget_id]
            shown = block.tab.label if path[-1] == open_index else tabs.pushed_value
            self._learn(replace(tabs, options=(*tabs.options, block.tab.label), pushed_value=shown))
            return
        info = widget_from_block(block)
        if info is None:
            return
        if info.kind == "tabs":
            self._run_tab_containers[path] = (info.id, block.tab_container.default_tab_index)
        self._learn(replace(info, fragment_id=fragment_id))

    def _learn(self, info: WidgetInfo) -> None:
        """Add a widget the run drew, committing its value as the browser does."""
        if info.kind in _BLOCK_KINDS:
            # The browser takes what the server shows as the value only when it changed since the run
            # before (the tabs' `defaultTabIndex`, the expander's `expanded`), not on the first draw.
            before = self.widgets.get(info.id)
            changed = before is not None and before.pushed_value != info.pushed_value
            info = replace(info, pushed=changed and info.pushed_value is not None)
        self.run_widgets[info.id] = info
        if info.kind == "button":
            return
        if info.pushed:
            self.values[info.id] = info.pushed_value
            self.pending.get(info.form_id, {}).pop(info.id, None)
        elif info.id not in self.values:
            # The browser commits a widget's default as soon as it is drawn.
            self.values[info.id] = info.default

    def _on_script_finished(self, msg: ForwardMsg) -> None:
        if msg.script_finished not in (FINISHED_OK, FINISHED_FRAGMENT_OK):
            return
        ran: set[str] = set()
        if msg.script_finished == FINISHED_FRAGMENT_OK:
            # A server that does not name the run's fragments ran the one asked for.
            ran = self._with_nested(set(self.run_fragments) or {self._requested_fragment})
        if ran:
            # Like the browser and the server: a fragment run forgets only its own widgets it did not
            # draw; everything outside the fragment stays on screen with its values.
            drawn = self.run_widgets
            kept = {k: w for k, w in self.widgets.items() if w.fragment_id not in ran or k in drawn}
            self.widgets = {**kept, **drawn}
        else:
            # Like the browser: forget widgets the finished run did not draw.
            self.widgets = dict(self.run_widgets)
        self.values = {k: v for k, v in self.values.items() if k in self.widgets}
        self.pending = {
            form: kept
            for form, entries in self.pending.items()
            if (kept := {k: v for k, v in entries.items() if k in self.widgets})
        }
        self._run_count += 1
        # A fragment run expires only entries its fragments drew, as the browser's cache does: the rest
        # are still on screen, and the next whole run can still refer to them.
        self._cache = {
            h: e
            for h, e in self._cache.items()
            if self._run_count - e[1] <= self._max_cache_age or (ran and e[2] not in ran)
        }

    def _with_nested(self, fragments: set[str]) -> set[str]:
        """`fragments` and every fragment drawn inside them, as far as reruns have shown: a rerun of a
        fragment redraws the fragments within it too."""
        ran = set(fragments)
        grew = True
        while grew:
            inner = {child for child, parent in self._enclosing.items() if parent in ran}
            grew = not inner <= ran
            ran |= inner
        return ran

    # ---- learner actions ---------------------------------------------------------------

    def click_in_body(self) -> None:
        """Make the next rerun of this page the one a click inside the page's body fragment asks for
        (the whole page when the body is not a fragment)."""
        self.interaction_fragment = self.body_fragment or ""

    @property
    def clickable_sections(self) -> list[str]:
        """The parts of the body that rerun alone, in order, passing over parts whose controls are all in
        forms (the marked questions: a click there is a lock, which `run_load --mode locks` times)."""
        return [f for f in self.section_fragments if self._reruns_on_a_click(f)]

    def _reruns_on_a_click(self, fragment: str) -> bool:
        controls = [w for w in self.widgets.values() if w.fragment_id == fragment]
        return not controls or any(not w.form_id for w in controls)

    def click_in_section(self) -> None:
        """Make the next rerun the one a click inside the first of `clickable_sections` asks for;
        ValueError if the latest whole run drew none."""
        if not self.clickable_sections:
            raise ValueError("The page drew no fragment in its main area besides its body.")
        self.interaction_fragment = self.clickable_sections[0]

    def set_value(self, widget_id: str, value: Any) -> bool:
        """Change a widget's value; returns True if that triggers a rerun (not inside a form)."""
        info = self.widgets[widget_id]
        if info.form_id:
            self.pending.setdefault(info.form_id, {})[widget_id] = value
            return False
        self.values[widget_id] = value
        self.interaction_fragment = info.fragment_id
        return True

    def click(self, widget_id: str) -> None:
        """Press a button (a submit button also commits its form's pending values)."""
        info = self.widgets[widget_id]
        if info.is_submit:
            self.values.update(self.pending.pop(info.form_id, {}))
        self.triggers[widget_id] = True
        self.interaction_fragment = info.fragment_id

    def forms(self) -> dict[str, list[WidgetInfo]]:
        """Form id -> the widgets inside it, in the order they were drawn."""
        grouped: dict[str, list[WidgetInfo]] = {}
        for info in self.widgets.values():
            if info.form_id:
                grouped.setdefault(info.form_id, []).append(info)
        return grouped

    def page(self, url_path: str) -> PageRef:
        """The page with this URL path ("" is the default page)."""
        for page in self.pages:
            if page.url_path == url_path or (url_path == "" and page.is_default):
                return page
        raise KeyError(url_path)

    # ---- outgoing messages -------------------------------------------------------------

    def rerun_message(
        self, *, page_hash: str | None = None, page_name: str = "", fragment_id: str = ""
    ) -> BackMsg:
        """The rerun_script BackMsg the browser sends next; one-shot triggers are used up.

        Without `page_hash` the current page reruns (on the first load, `page_name` is the
        URL path). Moving to another page drops the query string, as the browser does. With
        `fragment_id` only that fragment reruns, as the browser's timer for `run_every` asks.
        A rerun of the current page after a change or a press inside a fragment reruns only
        that fragment (not an auto rerun), as the browser does; every widget state is sent.
        """
        msg = BackMsg()
        state = msg.rerun_script
        # `page_hash` (from new_session) names the router script; rerunning it would run Home.
        current = self.current_page or self.page_hash
        if fragment_id:
            state.fragment_id = fragment_id
            state.is_auto_rerun = True
        elif page_hash is None or page_hash == current:
            state.fragment_id = self.interaction_fragment
        self.interaction_fragment = ""
        self._requested_fragment = state.fragment_id
        if page_hash is not None and page_hash != self.page_hash:
            self.query_string = ""
        state.page_script_hash = current if page_hash is None else page_hash
        state.page_name = page_name
        state.query_string = self.query_string
        state.cached_message_hashes.extend(self._cache)
        for widget_id, value in self.values.items():
            info = self.widgets.get(widget_id) or self.run_widgets.get(widget_id)
            if info is not None and value is not None:
                state.widget_states.widgets.append(widget_state(widget_id, info.value_field, value))
        for widget_id in self.triggers:
            state.widget_states.widgets.append(widget_state(widget_id, "trigger_value", True))
        self.triggers = {}
        return msg
