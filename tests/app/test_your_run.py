"""The Your run page: classify the example first, pick or upload a log, fix the mapping, read the verdicts."""

from __future__ import annotations

import pytest

from bench.hostile_logs import HOSTILE
from core import lessons
from core.diagnose import formats
from core.diagnose.columns import columns_signature, guess_mapping
from core.diagnose.detectors import RunContext
from core.diagnose.diagnosis import mapped_run
from core.diagnose.reading import example_reading, example_table
from tests.app.conftest import answer, headings, open_page

PAGE = "pages/your_run.py"
NAN_LOG = (
    b"step,loss,grad_norm\n"
    + b"".join(f"{i},{2 - i / 100},1.0\n".encode() for i in range(30))
    + b"30,nan,nan\n"
)


def _subheaders(at) -> list[str]:
    """The findings' headings: each is drawn with its summary as one Markdown element."""
    return headings(at, 3)


QUESTION_PANELS = 2  # the question's example (the leak) logs loss and memory: one chart each
BROKEN = b"step,loss\n1,2,3\n"  # row 2 has a cell more than the header


def _refusal(data: bytes) -> str:
    """The sentence core's reader refuses a CSV file with."""
    with pytest.raises(ValueError) as refused:
        formats.read_log(data, "broken.csv")
    return str(refused.value)


def _dataset_names(charts) -> set[str]:
    return {d.name for chart in charts for d in chart.proto.datasets}


def _example_charts(at) -> list:
    """The charts of the log the learner picked or uploaded, after the question's own."""
    return at.get("vega_lite_chart")[QUESTION_PANELS:]


def test_the_page_opens_on_the_question_with_a_bare_chart_and_the_healthy_example():
    at = open_page(PAGE)
    assert not at.exception
    assert headings(at, 2) == [
        lessons.sentence("your_run", key) for key in ("classify_heading", "read_heading")
    ]
    charts = at.get("vega_lite_chart")
    assert _dataset_names(charts[:QUESTION_PANELS]) == {"loss", "memory"}  # no evidence before the answer
    assert all(len(chart.proto.datasets) == 1 for chart in charts[:QUESTION_PANELS])
    assert any("Healthy run" in m.value for m in at.markdown)
    assert "loss" in _dataset_names(_example_charts(at))
    table = example_table("healthy.csv")
    healthy = example_reading("healthy.csv", guess_mapping(table.columns), RunContext(classes=10)).diagnosis
    assert healthy.primary == "healthy" and at.success[0].value == healthy.summary
    assert _subheaders(at) == [
        "Resource: no sign",
        "Numerical: no sign",
        "Throughput: no sign",
        "Correctness: no sign",
    ]


def test_the_question_example_shows_its_verdict_only_after_the_answer():
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("leak.tfevents").run()
    assert lessons.sentence("your_run", "answer_first") in [i.value for i in at.info]
    assert _subheaders(at) == []
    answer(at, "y1", "mem")
    assert at.session_state["answers"] == {"y1": "mem"}
    assert "Resource: likely" in _subheaders(at)
    assert "trend" in _dataset_names(_example_charts(at))
    assert any(
        link.proto.page.endswith("run-a") or "run_a" in link.proto.page for link in at.get("page_link")
    )


def test_an_uploaded_log_with_a_nan_is_numerical_with_the_step_marked():
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    at.file_uploader(key="your_run.file").upload("mine.csv", NAN_LOG, "text/csv").run()
    assert not at.exception
    assert "Numerical: likely" in _subheaders(at)
    first_nan = lessons.sentence("diagnose", "first_nan", column="loss", step=30)
    assert f"• {first_nan}" in [line for t in at.text for line in t.value.splitlines()]
    assert "nan" in _dataset_names(_example_charts(at))


def test_the_learner_maps_a_column_the_names_did_not_give_away():
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    log = b"step,objective\n" + b"".join(f"{i},2.302\n".encode() for i in range(40))
    at.file_uploader(key="your_run.file").upload("odd.csv", log, "text/csv").run()
    table = formats.read_log(log, "odd.csv")
    with pytest.raises(ValueError) as unmapped:
        mapped_run(table, guess_mapping(table.columns), RunContext())
    assert str(unmapped.value) in at.error[0].value.replace("\\", "")  # core's sentence, columns named
    at.number_input(key="your_run.classes.upload").set_value(10).run()
    key = f"your_run.map.{columns_signature(('step', 'objective'))}.loss"
    at.selectbox(key=key).set_value("objective").run()
    assert not at.error
    assert "Correctness: likely" in _subheaders(at)


def test_a_file_that_cannot_be_read_gets_one_sentence_and_nothing_else_changes():
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    at.file_uploader(key="your_run.file").upload("broken.csv", BROKEN, "text/csv").run()
    assert not at.exception
    assert len(at.error) == 1 and _refusal(BROKEN) in at.error[0].value.replace("\\", "")
    assert _subheaders(at) == []
    assert len(at.get("vega_lite_chart")) == QUESTION_PANELS  # the question's charts only
    assert at.radio(key="marked.y1.choice").value is None


def test_a_column_name_in_an_error_is_shown_as_written_not_as_markdown():
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    name = "**loss** [see](http://x) $a$"
    log = f"step,{name}\n".encode() + b"".join(f"{i},2.3\n".encode() for i in range(40))
    at.file_uploader(key="your_run.file").upload("odd.csv", log, "text/csv").run()
    signature = columns_signature(("step", name))
    # The same column for two quantities: the refusal quotes the learner's column name.
    at.selectbox(key=f"your_run.map.{signature}.loss").set_value(name).run()
    at.selectbox(key=f"your_run.map.{signature}.accuracy").set_value(name).run()
    [alert] = at.error
    assert "used twice" in alert.value
    assert r"\*\*loss\*\* \[see\]\(http\://x\) \$a\$" in alert.value
    assert name not in alert.value


def test_classes_and_vocabulary_together_are_refused_in_a_sentence():
    at = open_page(PAGE)
    at.number_input(key="your_run.vocab.healthy.csv").set_value(50257).run()
    assert "not both" in at.error[0].value


def _reading_shown(at) -> list[str]:
    """The verdicts and evidence shown, without the help the open mapping box adds."""
    help_text = lessons.sentence("your_run", "mapping_help")
    captions = [c.value for c in at.caption if c.value != help_text]
    return _subheaders(at) + [t.value for t in at.text] + captions


def test_the_mapping_boxes_are_built_only_while_open_and_keep_a_changed_choice():
    at = open_page(PAGE)  # the healthy example: its column names say which is which
    assert not [box for box in at.selectbox if (box.key or "").startswith("your_run.map.")]
    guessed = _reading_shown(at)
    at.session_state["your_run.mapping_open"] = True
    at.run()
    loss = f"your_run.map.{columns_signature(example_table('healthy.csv').columns)}.loss"
    assert at.selectbox(key=loss).value == "train/loss"
    at.selectbox(key=loss).set_value("(none)").run()
    unmapped = _reading_shown(at)
    assert unmapped != guessed  # the reading follows the box
    at.session_state["your_run.mapping_open"] = False
    at.run()
    assert not [box for box in at.selectbox if (box.key or "").startswith("your_run.map.")]
    assert _reading_shown(at) == unmapped  # closing the box did not undo the choice
    at.session_state["your_run.mapping_open"] = True
    at.run()
    assert at.selectbox(key=loss).value == "(none)"


def _count_reads(monkeypatch) -> list[str]:
    """The names of the files the page reads from here on, one entry a read."""
    read: list[str] = []
    real = formats.read_log

    def counted(data: bytes, name: str) -> formats.Table:
        read.append(name)
        return real(data, name)

    monkeypatch.setattr(formats, "read_log", counted)
    return read


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("tensor declaring 2^28 values", "holds no scalar values"),
        ("unknown tensor type", "number type TensorBoard does not define"),
        ("lists 100,000 deep", "nests objects too deeply"),
        ("5M one-column rows", "lines"),
        ("200,000 rows of numbers", "more than 100,000 rows"),
        ("sparse JSON Lines, 499 names", "values"),
    ],
)
def test_a_hostile_upload_gets_one_sentence_of_ours(label, expected):
    name, build = HOSTILE[label]
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    at.file_uploader(key="your_run.file").upload(name, build(), "application/octet-stream").run()
    assert not at.exception
    [alert] = at.error
    assert expected in alert.value and "\n" not in alert.value
    assert len(at.get("vega_lite_chart")) == QUESTION_PANELS


def test_a_huge_integer_upload_is_read_with_an_infinite_loss():
    name, build = HOSTILE["4,300-digit integer"]
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    at.file_uploader(key="your_run.file").upload(name, build(), "application/json").run()
    assert not at.exception and not at.error
    assert "Numerical: likely" in _subheaders(at)


def test_an_upload_is_read_once_and_a_mapping_change_reuses_it(monkeypatch):
    read = _count_reads(monkeypatch)
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    log = b"step,objective\n" + b"".join(f"{i},2.302\n".encode() for i in range(40))
    at.file_uploader(key="your_run.file").upload("odd.csv", log, "text/csv").run()
    key = f"your_run.map.{columns_signature(('step', 'objective'))}.loss"
    at.selectbox(key=key).set_value("objective").run()
    at.number_input(key="your_run.classes.upload").set_value(10).run()
    assert "Correctness: likely" in _subheaders(at)
    assert read == ["odd.csv"]  # three reruns, one read
    at.file_uploader(key="your_run.file").upload("odd.csv", log, "text/csv").run()
    assert read == ["odd.csv", "odd.csv"]  # a new upload is a new file id: read again


def test_a_refused_upload_is_not_read_again_on_a_rerun(monkeypatch):
    read = _count_reads(monkeypatch)
    at = open_page(PAGE)
    at.radio(key="your_run.source").set_value("upload").run()
    at.file_uploader(key="your_run.file").upload("broken.csv", BROKEN, "text/csv").run()
    at.run()
    assert read == ["broken.csv"] and _refusal(BROKEN) in at.error[0].value.replace("\\", "")
