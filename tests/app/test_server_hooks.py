"""The server hooks go in when the served process starts, before any browser can open a session."""

import asyncio

import serve
from ui import loop_wakeups, message_rate, own_key_lookup, server_hooks, theme_once, widget_types


def test_the_startup_hook_installs_the_server_hooks_before_warming_and_serving(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(server_hooks, "install", lambda: calls.append("hooks"))
    monkeypatch.setattr(serve, "warm_caches", lambda: calls.append("warm"))
    monkeypatch.setattr(serve, "freeze_loaded", lambda: calls.append("freeze"))

    async def start_then_serve() -> None:
        async with serve._warm_first(None):
            calls.append("serving")

    asyncio.run(start_then_serve())  # browser tests, whose event loop would refuse it, run last
    # The message cap and the widget-type check are in before the first browser can send anything; what
    # warming loaded is frozen before the first visitor's garbage can be.
    assert calls == ["hooks", "warm", "freeze", "serving"]


def test_install_puts_in_all_five_hooks(monkeypatch):
    calls: list[str] = []

    def recorder(name: str):
        return lambda: calls.append(name)

    for module in (message_rate, widget_types, loop_wakeups, theme_once, own_key_lookup):
        monkeypatch.setattr(module, "install", recorder(module.__name__.removeprefix("ui.")))
    server_hooks.install()
    assert sorted(calls) == ["loop_wakeups", "message_rate", "own_key_lookup", "theme_once", "widget_types"]
