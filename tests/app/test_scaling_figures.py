"""How the Scaling out page writes its figures: counts whole with thousands separators ('32', '2,400'),
never '32.00' or '2400', in every part's table and sentence, on a big model's track and a small one's."""

import re

import pytest

from core.scaling.evidence import current_settings
from core.scaling.outcomes import part_contrasts
from tests.app.test_scaling import PREDICTIONS_GIVEN, _lock, _open

PAGE = "pages/scaling.py"
COUNTS = ("Local batch", "Global batch", "Retained micro-batches", "Steps to target")
WHOLE = re.compile(r"\d{1,3}(,\d{3})*")
UNSEPARATED = re.compile(r"(?<![\d.,])\d{4,}")  # four digits or more in a row, not after a point


def _figures(at) -> tuple[dict[str, list[str]], list[str]]:
    """The open part's table, row name to its cells, and every sentence on the page."""
    rows = {}
    for table in at.table:
        for row in table.value.to_dict("records"):
            name, *cells = row.values()
            rows[name] = cells
    texts = [
        e.value for kind in (at.markdown, at.caption, at.success, at.warning, at.info, at.error) for e in kind
    ]
    return rows, texts


@pytest.fixture(scope="module")
def shown():
    """Each part's table and sentences on the Cloud and the TinyML tracks, every prediction locked."""
    from tests.app.conftest import open_page

    at = open_page(PAGE)
    for part, option in PREDICTIONS_GIVEN.items():
        _lock(at, part, option)
    found = {}
    for name in ("cloud", "tinyml"):
        at.selectbox(key="scaling.track").set_value(name).run()
        for part in PREDICTIONS_GIVEN:
            found[name, part] = _figures(_open(at, part))
    return found


def test_counts_read_whole_with_thousands_separators(shown):
    contrasts = part_contrasts(current_settings({"track": "tinyml"}))
    rows_a, rows_e = shown["tinyml", "A"][0], shown["tinyml", "E"][0]
    # TinyML holds the global batch of 256 over 8 then 16 GPUs: 32 and 16 a GPU.
    assert rows_a["Local batch"] == ["32", "16"]
    assert rows_e["Steps to target"] == [f"{contrasts.e.strict.steps:,}", f"{contrasts.e.drop.steps:,}"]
    assert rows_e["Steps to target"] == ["2,400", "3,240"]  # 1,200 × (1 + 256 ÷ 256), then × 1.35
    for (name, part), (rows, _) in shown.items():
        for row in COUNTS:
            assert all(WHOLE.fullmatch(cell) for cell in rows.get(row, [])), (name, part, row, rows[row])


def test_no_figure_on_the_page_runs_four_digits_without_a_separator(shown):
    for (name, part), (rows, texts) in shown.items():
        cells = [cell for row in rows.values() for cell in row if isinstance(cell, str)]
        assert [t for t in [*cells, *texts] if UNSEPARATED.search(t)] == [], (name, part)
