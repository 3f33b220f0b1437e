"""Each shipped example log, made by real training on the CPU, gets the verdict it was made to show."""

from __future__ import annotations

import pytest

from core.diagnose.detectors import LIKELY, RunContext
from core.diagnose.diagnosis import HEALTHY, diagnose_bytes
from core.diagnose.examples import example_bytes, load_examples


@pytest.mark.parametrize("example", load_examples(), ids=lambda e: e.file)
def test_each_example_gets_its_intended_verdict(example):
    _, _, result = diagnose_bytes(
        example_bytes(example.file), example.file, RunContext(classes=example.classes)
    )
    assert result.primary == example.intended
    if example.intended != HEALTHY:
        assert result.finding(example.intended).verdict == LIKELY


def test_the_examples_cover_every_format_but_wandb_and_every_outcome():
    examples = load_examples()
    assert {e.intended for e in examples} == {"resource", "throughput", "numerical", "correctness", "healthy"}
    formats = {diagnose_bytes(example_bytes(e.file), e.file, RunContext())[0].format for e in examples}
    assert formats == {"CSV", "JSON Lines", "Hugging Face trainer_state.json", "TensorBoard events"}
