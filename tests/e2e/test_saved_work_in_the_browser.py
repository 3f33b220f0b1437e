"""A learner's work survives what browsers and hosts do: reload, a new tab, a server restart, a
resume code on another device, and a replica going away while another shares its PostgreSQL."""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from core import lessons
from core.questions import load_bank
from core.stack import load_stack
from store.ids import is_learner_id
from tests.conftest import PostgresServer
from tests.e2e.conftest import (
    LOCK_ANSWER,
    SAVED,
    Learner,
    LearnerMaker,
    _free_port,
    ready,
    shown,
    start_app,
    stop_app,
)
from ui.identity import COOKIE, STORAGE_KEY

pytestmark = pytest.mark.e2e
BANK = load_bank()
# Two quiz questions whose options share no text, so a click finds the one meant.
Q1, Q2 = BANK.question("q1"), BANK.question("q2")
WRONG_Q1 = next(o.text for o in Q1.options if o.id != Q1.correct)
RIGHT_Q2 = Q2.option_text(Q2.correct)
PAGE = "quiz-report"


def _said(key: str) -> str:
    """What the browser shows of the saved-work sentence `key`."""
    return shown(lessons.sentence("identity", key))


@dataclass
class Server:
    """One app process we can stop and start again on the same port (so the same browser origin)."""

    browser: Browser
    port: int
    env: dict[str, str]
    name: str

    def __post_init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        process = start_app(self.port, self.env, log_name=f"streamlit-{self.name}.log")
        self.process = process
        ready(self.browser, self.url, process)

    def stop(self) -> None:
        if self.process is not None:
            stop_app(self.process)
            self.process = None


@pytest.fixture(scope="module")
def own_server(browser: Browser) -> Iterator[Server]:
    """An app on the embedded SQLite store in a data folder of its own."""
    with tempfile.TemporaryDirectory(prefix="lab-e2e-data-") as data_dir:
        server = Server(browser, _free_port(), {"LAB_DATA_DIR": data_dir}, "record")
        yield server
        server.stop()


def _sidebar_metric(page: Page, label: str) -> str:
    tile = page.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').filter(has_text=label).first
    return tile.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _stored_id(page: Page) -> str:
    return page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')")


def _cookie(learner: Learner) -> str | None:
    return next((c["value"] for c in learner.context.cookies() if c["name"] == COOKIE), None)


def _assert_kept(page: Page) -> None:
    """q1 locked on a wrong option, q2 locked right, one question still open, 1/3 counted."""
    for option in (WRONG_Q1, RIGHT_Q2):
        chosen = page.get_by_role("radio", name=option, exact=True, checked=True)
        expect(chosen).to_have_count(1)
        expect(chosen).to_be_disabled()
    expect(page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(1)
    assert _sidebar_metric(page, "Quiz") == "1/3"


def _open_saved_work(learner: Learner) -> Locator:
    """Open the sidebar's "Your saved work" box (`Learner.open_box`); returns the sidebar."""
    sidebar = learner.page.locator('[data-testid="stSidebar"]')
    learner.open_box(sidebar, _said("box_title"))
    return sidebar


def _resume_code(learner: Learner) -> str:
    sidebar = _open_saved_work(learner)
    code = (
        sidebar.locator('[data-testid="stMarkdown"]')
        .filter(has_text=shown(lessons.sentences("identity")["resume_code"].text.split("{")[0]))
        .locator("strong")
    )
    code.wait_for(state="visible")
    return code.inner_text().strip()


def test_locked_answers_survive_a_reload_a_new_tab_and_a_server_restart(
    own_server: Server, new_learner: LearnerMaker
):
    ada = new_learner(own_server.url)
    ada.open(PAGE)
    # A new browser's id opens no work: its report reruns the identity check alone.
    assert ada.runs.whole_runs == 1
    ada.answer(WRONG_Q1)
    ada.answer(RIGHT_Q2)
    _assert_kept(ada.page)
    learner_id = _stored_id(ada.page)
    assert is_learner_id(learner_id)

    assert _cookie(ada) == learner_id  # a copy, for the next visit's first run
    ada.page.reload()
    ada.settle_loaded()
    _assert_kept(ada.page)
    # The cookie opened the work in the first run: the page asked for nothing more.
    assert (ada.runs.whole_runs, ada.runs.fragments) == (1, [""])

    ada.page.evaluate("localStorage.clear()")
    ada.page.reload()
    ada.settle_loaded()
    _assert_kept(ada.page)
    assert _stored_id(ada.page) == learner_id  # the cookie's id is stored again

    tab = ada.context.new_page()
    ada.page = tab
    ada.open(PAGE)
    _assert_kept(tab)

    own_server.stop()
    own_server.start()
    ada.open(PAGE)
    _assert_kept(tab)
    assert _stored_id(tab) == learner_id
    ada.screenshot("record-after-restart")
    assert ada.exceptions() == []


def test_a_second_browser_starts_empty_and_a_resume_code_moves_the_work(
    own_server: Server, new_learner: LearnerMaker
):
    ada, bo, ada_elsewhere = (new_learner(own_server.url) for _ in range(3))
    ada.open(PAGE)
    ada.answer(WRONG_Q1)
    ada.answer(RIGHT_Q2)
    code = _resume_code(ada)
    assert re.fullmatch(r"[0-9A-Z]{4}(-[0-9A-Z]{4}){3}", code)

    bo.open(PAGE)
    expect(bo.page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(3)
    assert _sidebar_metric(bo.page, "Quiz") == "0/3"
    assert _stored_id(bo.page) != _stored_id(ada.page)

    ada_elsewhere.open(PAGE)
    sidebar = _open_saved_work(ada_elsewhere)
    sidebar.get_by_label(_said("continue_from")).fill("0000-0000-0000-0000")
    sidebar.get_by_role("button", name=_said("continue_button"), exact=True).click()
    ada_elsewhere.settle()
    expect(sidebar.get_by_text(_said("code_refused"))).to_be_visible()
    sidebar.get_by_label(_said("continue_from")).fill(code.lower())
    sidebar.get_by_role("button", name=_said("continue_button"), exact=True).click()
    ada_elsewhere.settle()
    _assert_kept(ada_elsewhere.page)
    # This device keeps the resumed identity: a reload stays on Ada's work.
    assert _stored_id(ada_elsewhere.page) == _stored_id(ada.page)
    ada_elsewhere.page.reload()
    ada_elsewhere.settle_loaded()
    _assert_kept(ada_elsewhere.page)


def test_start_over_opens_a_fresh_lab_on_the_page_and_a_reload_keeps_it(
    own_server: Server, new_learner: LearnerMaker
):
    # Ticking the box reruns only the box; Start over reruns the whole app, so the page shows the fresh lab.
    check = BANK.question("c1")
    ada = new_learner(own_server.url)
    ada.open("execution-stack")
    ada.answer(check.option_text(check.correct))
    assert _sidebar_metric(ada.page, "Checks") == "1/9"
    old_id = _stored_id(ada.page)
    sidebar = _open_saved_work(ada)
    start_over = sidebar.get_by_role("button", name=_said("start_over_button"))
    expect(start_over).to_be_disabled()
    sidebar.get_by_text(_said("start_over_confirm"), exact=True).click()
    ada.settle()
    expect(start_over).to_be_enabled()
    start_over.click()
    ada.settle()
    expect(sidebar.get_by_text(_said("fresh_lab"))).to_be_visible()
    expect(ada.page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(1)
    assert _sidebar_metric(ada.page, "Checks") == "0/9"
    ada.page.wait_for_function(f"localStorage.getItem('{STORAGE_KEY}') !== '{old_id}'")
    ada.settle()
    ada.nav("Four runs")  # the box stays open, and says nothing more
    expect(sidebar.get_by_text(_said("fresh_lab"))).to_have_count(0)
    ada.nav("Execution stack")
    ada.page.reload()
    ada.settle_loaded()
    expect(ada.page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(1)
    assert ada.exceptions() == []


def test_share_links_and_addresses_never_carry_the_identity(own_server: Server, new_learner: LearnerMaker):
    ada = new_learner(own_server.url)
    ada.open("linear-layer")
    ada.slide("Batch (B)")
    learner_id = _stored_id(ada.page)
    link = ada.shared_link()
    assert "batch=33" in link
    for text in (link, ada.page.url, _resume_code(ada)):
        assert learner_id not in text
    assert learner_id not in ada.page.locator('[data-testid="stApp"]').inner_text()


def test_a_learner_whose_replica_stops_finds_every_answer_on_the_other(
    browser: Browser, postgres: PostgresServer, new_learner: LearnerMaker
):
    env = {"LAB_DATABASE_URL": postgres.new_database()}
    one = Server(browser, _free_port(), env, "replica-1")
    two = Server(browser, _free_port(), env, "replica-2")
    ada = new_learner(one.url)
    try:
        ada.open(PAGE)
        ada.answer(WRONG_Q1)
        ada.answer(RIGHT_Q2)
        learner_id = _stored_id(ada.page)
        one.stop()
        # A proxy keeps one address for both replicas, so the browser keeps its id; with two ports
        # we hand the same id to the second origin before its page loads.
        ada.context.add_init_script(f"localStorage.setItem('{STORAGE_KEY}', '{learner_id}')")
        ada.base_url = two.url
        ada.open(PAGE)
        _assert_kept(ada.page)
        assert ada.exceptions() == []
    finally:
        one.stop()
        two.stop()


def test_a_click_on_a_lesson_page_that_cannot_be_saved_says_so_and_the_next_click_saves_it(
    browser: Browser, postgres: PostgresServer, new_learner: LearnerMaker
):
    # A click on a lesson page reruns only the page's fragment: the indicator must follow it there.
    url = postgres.new_database()
    database = url.rsplit("/", 1)[1]
    server = Server(browser, _free_port(), {"LAB_DATABASE_URL": url}, "indicator")
    ada = new_learner(server.url)
    stack = load_stack()
    first, second = (stack.symptom_label(symptom.id) for symptom in stack.symptoms[1:3])
    try:
        ada.open("execution-stack")
        postgres.psql(f"ALTER DATABASE {database} WITH ALLOW_CONNECTIONS false")
        postgres.psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'")
        ada.pick("Symptom", first)
        expect(ada.saved_note()).to_contain_text(_said("not_saved"))
        postgres.psql(f"ALTER DATABASE {database} WITH ALLOW_CONNECTIONS true")
        ada.pick("Symptom", second)
        expect(ada.saved_note()).to_contain_text(SAVED)
        expect(ada.saved_note().locator('[data-testid="stElementContainer"]')).to_have_count(1)
        assert ada.exceptions() == []
    finally:
        server.stop()
