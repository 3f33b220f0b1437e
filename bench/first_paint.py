"""First paint of every page in headless Chromium, on a cold and on a warm server.

    python -m bench.first_paint --targets app,hello --out bench/results/first_paint.json

For each page: *cold* is the first visit to a freshly started server (a new server per page, so
no page has warmed another's imports and caches); *warm* is a visit in a new browser context
(no browser cache, a new Streamlit session) after every page has been visited once. Two figures
per visit, from the start of navigation: the page's title drawn (its first heading in the main
area) and the page complete (the script run over). Debian's Chromium, as tests/e2e uses it.
Reports figures; nothing is asserted.

Both are read off the page's own clock (`performance.now()`, which starts with the navigation), by
a script the context runs before the page's own: the title at the animation frame that first shows
it, the run's end when the app says it is no longer running. Timing Playwright's waits instead adds
their polling: a wait for an element checks again after 20, 50, 100 and 100 ms, then every 500 ms,
so a title drawn a second into the visit was reported up to half a second late.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from bench.paths import RESULTS_DIR
from bench.scenarios import TARGETS, Target
from bench.stats import summarise
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.harness.load_client import LOOPBACK, Session
from tests.harness.server import StreamlitServer, throwaway_store

TITLE = '[data-testid="stMain"] h1'
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
# Runs in the page before its own scripts: notes, on the page's clock, the frame that first shows the
# title and the moment the app's first run is over.
RECORDER = f"""
window.__labPaint = {{}};
const seen = window.__labPaint;
new MutationObserver(() => {{
    const now = performance.now();
    if (!seen.titleSeen && document.querySelector('{TITLE}')) {{
        seen.titleSeen = true;
        requestAnimationFrame(() => {{ seen.title = performance.now(); }});
    }}
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    if (state === 'running') seen.ran = true;
    if (seen.ran && state === 'notRunning' && seen.done === undefined) seen.done = now;
}}).observe(document, {{subtree: true, childList: true, attributes: true,
                        attributeFilter: ['data-test-script-state']}});
"""
TIMEOUT_MS = 60_000


def _page_paths(port: int) -> list[str]:
    async def read() -> list[str]:
        session = Session(port=port, marker="bench-s000-fp", timeout_s=120)
        try:
            await session.connect("")
            return [page.url_path for page in session.model.pages]
        finally:
            await session.close()

    # Playwright's sync API runs an event loop in this thread; the protocol client gets its own.
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, read()).result()


def visit(browser: Browser, url: str) -> dict[str, float]:
    """Open `url` in a fresh context; milliseconds until the title is drawn and until the run is over."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.add_init_script(RECORDER)
        page = context.new_page()
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => window.__labPaint.title !== undefined", timeout=TIMEOUT_MS)
        page.wait_for_selector(DONE, timeout=TIMEOUT_MS)
        seen = page.evaluate("window.__labPaint")
        if "done" not in seen:
            raise RuntimeError(f"{url}: the page never said its first run was over")
        # A short run can end before the browser shows what it sent: the page is complete at the later.
        return {"title_ms": seen["title"], "complete_ms": max(seen["done"], seen["title"])}
    finally:
        context.close()


def _server(target: Target, results_dir: Path, name: str) -> StreamlitServer:
    return StreamlitServer(
        script=target.script, post_script_gc=False, log_path=results_dir / f"first_paint-{name}.server.log"
    )


def measure(browser: Browser, target: Target, warm_visits: int, results_dir: Path) -> dict[str, Any]:
    """Cold and warm first paint of every page of one target."""
    with _server(target, results_dir, f"{target.name}-warm") as server:
        base = f"http://{LOOPBACK}:{server.port}"
        # The pages learners visit: the hello demo's Hello page only, every page of the app.
        paths = list(target.load_pages) if target.load_pages is not None else _page_paths(server.port)
        for path in paths:  # every page once, so imports and per-process caches are loaded
            visit(browser, f"{base}/{path}")
        warm = {path: [visit(browser, f"{base}/{path}") for _ in range(warm_visits)] for path in paths}
    figures: dict[str, Any] = {}
    for path in paths:
        with _server(target, results_dir, f"{target.name}-cold") as server:
            cold = visit(browser, f"http://{LOOPBACK}:{server.port}/{path}")
        figures[path] = {
            "cold": cold,
            "warm_title": summarise([v["title_ms"] for v in warm[path]]).as_dict(),
            "warm_complete": summarise([v["complete_ms"] for v in warm[path]]).as_dict(),
        }
    return figures


def table(results: dict[str, dict[str, Any]]) -> str:
    """A markdown table: one row per page."""
    rows = [
        "| app | page | cold: title / complete ms | warm p50: title / complete ms |",
        "|---|---|---|---|",
    ]
    for name, pages in results.items():
        for path, f in pages.items():
            rows.append(
                f"| {name} | `/{path}` | {f['cold']['title_ms']:,.0f} / {f['cold']['complete_ms']:,.0f} | "
                f"{f['warm_title']['p50_ms']:,.0f} / {f['warm_complete']['p50_ms']:,.0f} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", default="app,hello")
    parser.add_argument("--warm-visits", type=int, default=3, help="warm visits per page")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "first_paint.json")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    throwaway_store("bench-first-paint-")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            results = {
                name: measure(browser, TARGETS[name], args.warm_visits, args.out.parent)
                for name in args.targets.split(",")
            }
        finally:
            browser.close()
    args.out.write_text(json.dumps(results, indent=1))
    print(table(results))
    print(f"\nfigures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
