"""Restoring a progress file through a real server's upload path: the file this installation signed
brings the learner's answers back, and the same file with answers corrected by hand brings settings
and written work only (issue 55: six flipped answers took a fresh browser from 4/9 to 9/9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from core import lessons
from core.questions import load_bank
from tests.e2e.conftest import LOCK_ANSWER, Learner

pytestmark = pytest.mark.e2e
BANK = load_bank()
Q1, Q2 = BANK.question("q1"), BANK.question("q2")
WRONG_Q1 = next(o.text for o in Q1.options if o.id != Q1.correct)
RIGHT_Q2 = Q2.option_text(Q2.correct)
PAGE = "quiz-report"


def _sidebar_metric(page: Page, label: str) -> str:
    tile = page.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').filter(has_text=label).first
    return tile.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _download_progress(learner: Learner, folder: Path) -> dict:
    with learner.page.expect_download() as download:
        learner.page.get_by_role("button", name=lessons.sentence("quiz_report", "download_progress")).click()
    path = folder / "progress.json"
    download.value.save_as(path)
    return json.loads(path.read_text(encoding="utf-8"))


def _restore(learner: Learner, document: dict, folder: Path, name: str) -> None:
    path = folder / name
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    learner.page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(path))
    learner.settle()
    restore = learner.page.get_by_role("button", name=lessons.sentence("quiz_report", "restore_button"))
    expect(restore).to_be_enabled()
    learner.submit(restore)
    learner.settle()


def test_a_hand_edited_file_restores_no_marks_and_the_signed_one_restores_them(
    learner: Learner, second_learner: Learner, tmp_path: Path
) -> None:
    learner.open(PAGE)
    learner.answer(WRONG_Q1)
    learner.answer(RIGHT_Q2)
    assert _sidebar_metric(learner.page, "Quiz") == "1/3"
    signed = _download_progress(learner, tmp_path)
    assert signed["signature"].startswith("hmac-sha256:")  # signed with no key configured at all

    edited = json.loads(json.dumps(signed))
    edited["state"]["answers"][Q1.id] = Q1.correct  # the learner corrects the wrong answer by hand
    second_learner.open(PAGE)
    _restore(second_learner, edited, tmp_path, "edited.json")
    expect(
        second_learner.page.get_by_text(lessons.sentence("quiz_report", "restored_edited"))
    ).to_be_visible()
    # Nothing locked: both questions still offer "Lock in my answer", and the quiz counts none.
    expect(second_learner.page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(3)
    assert _sidebar_metric(second_learner.page, "Quiz") == "0/3"

    _restore(second_learner, signed, tmp_path, "signed.json")
    expect(second_learner.page.get_by_role("button", name=LOCK_ANSWER)).to_have_count(1)
    assert _sidebar_metric(second_learner.page, "Quiz") == "1/3"
    assert learner.exceptions() == [] and second_learner.exceptions() == []
