"""Every private Streamlit name the lab's server changes use, looked up here and nowhere else.

Streamlit has no public hook for what `server/changes.py` changes, so those changes reach into its
modules. A release that moves or renames one of them must not stop the server while Python imports it:
each name is looked up inside a `try`, and a name that is gone is None here. `missing` then tells, for
the names a change says it needs, which the running Streamlit lacks, so the change can refuse in one
sentence (a guard) or step aside with one warning (a speed change) before anything is replaced.

A need is written `Class.attribute` or `Class.method(param, ...)`: the attribute may be a class
attribute, a dataclass field, an annotation or an attribute `__init__` sets; a method with parameters
listed must take exactly those after `self`, or those first where the list ends in `...`.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import streamlit

VERSION: str = streamlit.__version__


def _load(module: str, name: str) -> Any:
    """`module.name`, or None where this Streamlit has no such module or name."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


Runtime = _load("streamlit.runtime", "Runtime")
SessionManager = _load("streamlit.runtime.session_manager", "SessionManager")
SessionClient = _load("streamlit.runtime.session_manager", "SessionClient")
ClientContext = _load("streamlit.runtime.session_manager", "ClientContext")
AppSession = _load("streamlit.runtime.app_session", "AppSession")
ScriptRunnerEvent = _load("streamlit.runtime.scriptrunner.script_runner", "ScriptRunnerEvent")
SessionState = _load("streamlit.runtime.state.session_state", "SessionState")
WStates = _load("streamlit.runtime.state.session_state", "WStates")
WidgetMetadata = _load("streamlit.runtime.state.common", "WidgetMetadata")
NumberInputSerde = _load("streamlit.elements.widgets.number_input", "NumberInputSerde")
NumberInputProto = _load("streamlit.proto.NumberInput_pb2", "NumberInput")
BackMsg = _load("streamlit.proto.BackMsg_pb2", "BackMsg")
MemoryUploadedFileManager = _load(
    "streamlit.runtime.memory_uploaded_file_manager", "MemoryUploadedFileManager"
)

_CLASSES: dict[str, Any] = {
    "Runtime": Runtime,
    "SessionManager": SessionManager,
    "SessionClient": SessionClient,
    "ClientContext": ClientContext,
    "AppSession": AppSession,
    "ScriptRunnerEvent": ScriptRunnerEvent,
    "SessionState": SessionState,
    "WStates": WStates,
    "WidgetMetadata": WidgetMetadata,
    "NumberInputSerde": NumberInputSerde,
    "NumberInputProto": NumberInputProto,
    "BackMsg": BackMsg,
    "MemoryUploadedFileManager": MemoryUploadedFileManager,
}
_NEED = re.compile(r"^(\w+)\.(\w+)(?:\(([\w, .]*)\))?$")


def _has_attribute(owner: Any, name: str) -> bool:
    if hasattr(owner, name):
        return True
    for klass in inspect.getmro(owner) if inspect.isclass(owner) else ():
        init = vars(klass).get("__init__")
        annotated = name in vars(klass).get("__annotations__", {})
        if annotated or (inspect.isfunction(init) and name in init.__code__.co_names):
            return True
    return False


def _takes(function: Any, params: list[str]) -> bool:
    if not inspect.isfunction(function):
        return False
    taken = list(inspect.signature(function).parameters)[1:]
    if params[-1:] == ["..."]:
        return taken[: len(params) - 1] == params[:-1]
    return taken == params


def has(need: str) -> bool:
    """Whether the running Streamlit has `need` (see the module docstring for how a need is written)."""
    match = _NEED.match(need)
    if match is None:
        raise ValueError(f"A need is written Class.attribute or Class.method(params); got {need!r}.")
    owner_name, name, params = match.groups()
    owner = _CLASSES.get(owner_name)
    if owner is None or not _has_attribute(owner, name):
        return False
    if params is None:
        return True
    wanted = [param.strip() for param in params.split(",") if param.strip()]
    return _takes(getattr(owner, name), wanted)


def missing(needs: tuple[str, ...]) -> list[str]:
    """The needs this Streamlit lacks, in the order given."""
    return [need for need in needs if not has(need)]
