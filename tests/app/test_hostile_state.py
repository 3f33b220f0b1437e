"""Restoring hostile progress files through the page: refused with nothing changed, or every page renders."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core import lessons
from core.progress_file import export_progress
from tests.app.conftest import HOME, open_page

QUIZ = "pages/quiz_report.py"
PAGES = (
    "pages/home.py",
    "pages/four_runs.py",
    "pages/run_a.py",
    "pages/quiz_report.py",
    "pages/scaling.py",
)
AT = "2026-11-30T14:05:09+00:00"


def _file(records) -> bytes:
    document = json.loads(
        export_progress(
            {"answers": {}, "settings": {}, "records": {}, "handed_in_at": None}, exported_at=AT, key=None
        )
    )
    document["state"]["records"] = records
    return json.dumps(document).encode("utf-8", "surrogatepass")


def _restore(at: AppTest, data: bytes) -> AppTest:
    at.file_uploader(key="restore.file").upload("progress.json", data, "application/json").run()
    at.button(key="restore.go").click().run()
    return at


def _learner_state(at: AppTest) -> dict:
    return {name: at.session_state[name] for name in ("answers", "settings", "records", "handed_in_at")}


def test_a_poison_file_is_refused_and_the_quiz_page_keeps_every_section():
    at = open_page(QUIZ)
    before = _learner_state(at)
    _restore(at, _file({"run_a.decision": {}, "scaling.snapshots": {"A": []}}))
    assert not at.exception
    refused = lessons.sentence("quiz_report", "restore_refused", reason="")
    assert any(e.value.startswith(refused) for e in at.error)
    assert _learner_state(at) == before
    keys = {b.key for b in at.get("download_button")} | {b.key for b in at.button}
    assert {"download.report", "download.progress", "restore.go", "handin.go"} <= keys


RECORD_NAMES = st.sampled_from(
    [
        "run_a.decision",
        "run_a.reflection",
        "scaling.predictions",
        "scaling.prediction_tracks",
        "scaling.snapshots",
        "scaling.synthesis",
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["A", "plan", "choice", "text", "why", "x"]) | st.text(max_size=6),
            inner,
            max_size=3,
        )
    ),
    max_leaves=10,
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(RECORD_NAMES | st.text(max_size=8), JSON, max_size=3))
def test_any_restored_records_are_refused_unchanged_or_every_page_renders(records):
    at = open_page(QUIZ, at=AppTest.from_file(str(HOME), default_timeout=60))
    before = _learner_state(at)
    _restore(at, _file(records))
    assert not at.exception
    if any(e.value.startswith("Nothing was changed.") for e in at.error):
        assert _learner_state(at) == before
        return
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, page
