"""Bring your own measurement: the snippet's output, validated, against the estimate; the H200's own
measured steps pasted back as a learner would."""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.reference import measured_steps, setup_of
from core.oom_measurement import MAX_PASTE_CHARS, compare, parse_peaks, snippet


def test_the_snippet_is_python_that_prints_the_three_phases_of_two_steps():
    code = snippet()
    ast.parse(code)
    for word in (
        "reset_peak_memory_stats",
        "max_memory_allocated",
        '"forward"',
        '"backward"',
        '"optimizer_step"',
        "step_2",
    ):
        assert word in code


def test_the_h200_measurements_pasted_back_agree_within_ten_percent():
    for row in measured_steps():  # the steady step the reference measured: the snippet's step_2
        pasted = json.dumps({"step_2": row.phases})
        checks = compare(parse_peaks(pasted), setup_of(row))
        assert [c.step for c in checks] == [2, 2, 2]
        for check in checks:
            assert check.off_by is not None and abs(check.off_by) < 0.10, (row.model, row.batch, check)


def test_step_1_is_compared_with_the_step_that_creates_the_state():
    row = measured_steps()[0]
    peaks = {"step_1": row.phases, "step_2": row.phases}
    step_1, step_2 = compare(parse_peaks(json.dumps(peaks)), setup_of(row))[::3][:2]
    assert step_1.step == 1 and step_2.step == 2
    assert step_1.estimate_bytes < step_2.estimate_bytes  # no Adam state yet in step 1's forward


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        "{}",
        '{"step_3": {"forward": 1, "backward": 1, "optimizer_step": 1}}',
        '{"step_1": {"forward": 1, "backward": 1}}',
        '{"step_1": {"forward": -1, "backward": 1, "optimizer_step": 1}}',
        '{"step_1": {"forward": 1.5, "backward": 1, "optimizer_step": 1}}',
        '{"step_1": {"forward": true, "backward": 1, "optimizer_step": 1}}',
        '{"step_1": {"forward": 1e30, "backward": 1, "optimizer_step": 1}}',
        " " * (MAX_PASTE_CHARS + 1),
        "[" * MAX_PASTE_CHARS,
    ],
)
def test_a_bad_paste_is_one_sentence(text):
    with pytest.raises(ValueError) as err:
        parse_peaks(text)
    assert "\n" not in str(err.value) and str(err.value).endswith(".")


@given(st.text(max_size=300))
def test_anything_pasted_is_read_or_refused_with_a_sentence(text):
    try:
        parse_peaks(text)
    except ValueError as err:
        assert str(err).endswith(".")
