"""`bench/first_paint` reads a visit's figures off the page's own clock, not off Playwright's waits."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser

from bench.first_paint import visit

pytestmark = pytest.mark.e2e


def test_a_visit_reads_the_title_and_the_end_of_the_first_run_off_the_page(browser: Browser, app_url: str):
    started = time.perf_counter()
    figures = visit(browser, f"{app_url}/four-runs")
    wall_ms = (time.perf_counter() - started) * 1000
    # Both figures come from the page (a missing one raises) and fall inside the visit: the page's clock
    # starts with the navigation, after the context is made. Complete is never before the title.
    assert 0 < figures["title_ms"] <= figures["complete_ms"] < wall_ms
