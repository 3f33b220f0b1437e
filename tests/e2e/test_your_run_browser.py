"""Your run in a real browser: upload a log, map the column its name did not give away, read the verdict."""

import pytest
from playwright.sync_api import expect

from bench.hostile_logs import HOSTILE
from core import lessons
from core.diagnose import formats
from core.diagnose.columns import guess_mapping
from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import mapped_run
from ui.nav import title_of

pytestmark = pytest.mark.e2e

# A loss logged under a name the lab does not recognise, nan from step 25 on.
ODD_LOG = (
    "step,objective\n" + "".join(f"{i},{2 - i / 50}\n" for i in range(25)) + "25,nan\n26,nan\n"
).encode()


def upload(learner, name: str, data: bytes) -> None:
    """Choose "my own log" and upload `data`; returns once the app has read the file."""
    page = learner.page
    learner.pick("Which log?", lessons.sentence("your_run", "own_log"))
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}]
    )
    # The file travels over HTTP before the rerun starts; wait for the app to show what it read.
    expect(page.locator('[data-testid="stFileChip"]').filter(has_text=name)).to_be_visible(timeout=30_000)
    expect(page.locator('[data-testid="stAlert"]').first).to_be_visible(timeout=30_000)
    learner.settle()


def test_upload_then_map_a_column_then_read_the_verdict(learner):
    page = learner.open("your-run")
    expect(page.get_by_role("heading", name="Your run")).to_be_visible()
    upload(learner, "odd.csv", ODD_LOG)
    table = formats.read_log(ODD_LOG, "odd.csv")
    with pytest.raises(ValueError) as unmapped:
        mapped_run(table, guess_mapping(table.columns), RunContext())
    # core's refusal, up to the list of kinds it reads
    expect(page.get_by_text(str(unmapped.value).split(" (")[0], exact=False)).to_be_visible()
    learner.choose("Training loss", "objective")
    expect(page.get_by_role("heading", name="Numerical: likely")).to_be_visible()
    first_nan = lessons.sentence("diagnose", "first_nan", column="objective", step=25)
    # The finding's evidence is one plain-text block, a line each.
    expect(page.get_by_text(f"• {first_nan}", exact=False)).to_be_visible()
    expect(
        page.get_by_role(
            "link",
            name=lessons.sentence("your_run", "learn_it", page_title=title_of("pages/execution_stack.py")),
        )
    ).to_be_visible()
    # One chart a panel: the question's run (loss, memory) and this log's loss.
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 3
    assert learner.exceptions() == []
    assert learner.console_errors == []
    learner.screenshot_whole("your-run-uploaded")


def test_a_file_that_cannot_be_read_gets_one_sentence(learner):
    page = learner.open("your-run")
    upload(learner, "broken.csv", b"step,loss\n1,2,3\n")
    expect(
        page.locator('[data-testid="stAlert"]').filter(has_text="Row 2 of this CSV file has 3 cells")
    ).to_have_count(1)
    expect(page.get_by_role("heading", name="Numerical: likely")).to_have_count(0)
    assert learner.exceptions() == []


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("tensor declaring 2^28 values", "holds no scalar values"),
        ("5M one-column rows", "the lab reads logs of at most"),
        ("lists 100,000 deep", "nests objects too deeply"),
    ],
)
def test_a_hostile_upload_through_the_browser_gets_one_sentence(learner, label, expected):
    name, build = HOSTILE[label]
    page = learner.open("your-run")
    upload(learner, name, build())
    expect(page.locator('[data-testid="stAlert"]').filter(has_text=expected)).to_have_count(1)
    assert learner.exceptions() == []
