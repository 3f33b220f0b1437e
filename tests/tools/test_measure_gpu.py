"""The --gpu measurement's code path run dry on the CPU: a Hugging Face model, two steps, every column."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
pytest.importorskip("transformers", reason="transformers is a test-only dependency (requirements-torch.txt).")

from core.model_config import parse_config  # noqa: E402
from core.models import parameter_count  # noqa: E402
from tools.measure_gpu import (  # noqa: E402
    COLUMNS,
    GpuSetup,
    Readers,
    measure_setup,
    published_config,
    reference_setups,
)

pytestmark = pytest.mark.torch


def test_the_reference_setups_are_the_committed_rows():
    setups = reference_setups()
    assert len(setups) == 19 and setups[0] == GpuSetup(
        "GPT-2 small", 4, 1024, "fp32", "eager", "none", "foreach"
    )


def test_one_step_runs_end_to_end_and_fills_every_column():
    ticks = iter(range(10_000))
    readers = Readers(
        allocated=lambda: next(ticks),  # stand-ins: the CPU has no allocator statistics
        peak=lambda: 0,
        reserved_peak=lambda: 0,
        reset_peak=lambda: None,
        synchronize=lambda: None,
    )
    # GPT-2 small's published config, narrowed so that a shared CPU runs it in a moment.
    small = {**published_config("GPT-2 small"), "n_embd": 64, "n_head": 2, "n_layer": 2, "vocab_size": 512}
    setup = GpuSetup("GPT-2 small", 1, 8, "amp", "sdpa", "full", "foreach")
    row = measure_setup(setup, device=torch.device("cpu"), readers=readers, config=small)
    assert tuple(row) == COLUMNS
    assert int(row["n_params"]) == parameter_count(parse_config(small))  # HF's model is the one we count
    assert row["model"] == "GPT-2 small" and row["mode"] == "amp"
