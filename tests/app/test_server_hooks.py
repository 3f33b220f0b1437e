"""The server hooks go in when the served process starts, before any browser can open a session."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import serve
from ui import loop_wakeups, message_rate, server_hooks, widget_types


def test_the_startup_hook_installs_the_server_hooks_before_warming_and_serving(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(server_hooks, "install", lambda: calls.append("hooks"))
    monkeypatch.setattr(serve, "warm_caches", lambda: calls.append("warm"))

    async def start_then_serve() -> None:
        async with serve._warm_first(None):
            calls.append("serving")

    # In a thread of its own: a browser test earlier in the session may leave an event loop running here.
    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(asyncio.run, start_then_serve()).result()
    # A session opened before `loop_wakeups` is installed would keep Streamlit's wake-up per element.
    assert calls == ["hooks", "warm", "serving"]


def test_install_puts_in_all_three_hooks(monkeypatch):
    calls: list[str] = []

    def recorder(name: str):
        return lambda: calls.append(name)

    for module in (message_rate, widget_types, loop_wakeups):
        monkeypatch.setattr(module, "install", recorder(module.__name__.removeprefix("ui.")))
    server_hooks.install()
    assert sorted(calls) == ["loop_wakeups", "message_rate", "widget_types"]
