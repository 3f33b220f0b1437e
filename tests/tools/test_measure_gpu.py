"""The --gpu measurement's code path run dry on the CPU: a Hugging Face model, two steps, every column."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
pytest.importorskip("transformers", reason="transformers is a test-only dependency (requirements-torch.txt).")

from core.model_config import parse_config  # noqa: E402
from core.models import parameter_count  # noqa: E402
from core.oom import parse_oom_message  # noqa: E402
from tools.finetune_csv import FINETUNE_COLUMNS  # noqa: E402
from tools.measure_gpu import (  # noqa: E402
    RUN_A_COLUMNS,
    GpuSetup,
    Readers,
    RunASetup,
    measure_first_failure,
    measure_setup,
    published_config,
    reference_setups,
    run_a_config,
    run_a_setups,
)

pytestmark = pytest.mark.torch


def test_the_reference_setups_are_the_committed_rows():
    setups = reference_setups()
    assert len(setups) == 19 and setups[0] == GpuSetup(
        "GPT-2 small", 4, 1024, "fp32", "eager", "none", "foreach"
    )


def counting_readers() -> Readers:
    """Stand-ins for a dry run: the CPU has no allocator statistics, so each reading is the next number."""
    ticks = iter(range(10_000_000))
    return Readers(
        allocated=lambda: next(ticks),
        peak=lambda: 0,
        reserved_peak=lambda: 0,
        reset_peak=lambda: None,
        synchronize=lambda: None,
    )


def test_one_step_runs_end_to_end_and_fills_every_column():
    readers = counting_readers()
    # GPT-2 small's published config, narrowed so that a shared CPU runs it in a moment.
    small = {**published_config("GPT-2 small"), "n_embd": 64, "n_head": 2, "n_layer": 2, "vocab_size": 512}
    setup = GpuSetup("GPT-2 small", 1, 8, "amp", "sdpa", "full", "foreach")
    row = measure_setup(setup, device=torch.device("cpu"), readers=readers, config=small)
    assert tuple(row) == FINETUNE_COLUMNS
    assert int(row["n_params"]) == parameter_count(parse_config(small))  # HF's model is the one we count
    assert row["trainable_params"] == row["n_params"]  # full training trains every parameter
    assert row["model"] == "GPT-2 small" and row["mode"] == "amp" and row["method"] == "full"
    assert (row["lora_rank"], row["lora_targets"], row["optim"]) == ("", "", "adamw")


def _stand_ins() -> Readers:
    return Readers(
        allocated=lambda: 0,
        peak=lambda: 7,
        reserved_peak=lambda: 0,
        reset_peak=lambda: None,
        synchronize=lambda: None,
    )


def _narrow(setup):
    # Run A's config as the tool builds it, narrowed so that a shared CPU runs two steps in a moment.
    return {**run_a_config(setup), "n_embd": 64, "n_head": 2, "vocab_size": 512}


def test_the_run_a_setups_are_the_committed_rows():
    setups = run_a_setups()
    assert len(setups) == 66 and RunASetup(1, 1536, "eager", "adam", 24.0, 16) in setups
    config = run_a_config(RunASetup(1, 3584, "eager", "adam", 24.0, 9))
    assert config["n_layer"] == 9 and config["n_positions"] == 3584 and config["n_embd"] == 3072


def test_a_run_that_fits_gets_through_two_steps():
    setup = RunASetup(1, 8, "eager", "sgd", 24.0, 2)
    row = measure_first_failure(
        setup, device=torch.device("cpu"), readers=_stand_ins(), config=_narrow(setup)
    )
    assert tuple(row) == RUN_A_COLUMNS
    assert row["outcome"] == "ok" and row["message"] == "" and row["peak_allocated"] == "7"
    assert int(row["n_params"]) == parameter_count(parse_config(_narrow(setup)))


def test_the_first_out_of_memory_error_is_recorded_with_its_phase_and_message(monkeypatch):
    message = (
        "CUDA out of memory. Tried to allocate 144.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which "
        "115.08 GiB is free. Including non-PyTorch memory, this process has 24.71 GiB memory in use. "
        "24.00 GiB allowed; Of the allocated memory 23.84 GiB is allocated by PyTorch, and 149.34 MiB is "
        "reserved by PyTorch but unallocated."
    )
    calls = []

    def creates_the_state(self, *args, **kwargs):  # Adam's first step is where Run A at 1 × 1024 dies
        calls.append(1)
        raise torch.OutOfMemoryError(message + "\nSee documentation for Memory Management")

    monkeypatch.setattr(torch.optim.Adam, "step", creates_the_state)
    setup = RunASetup(1, 8, "sdpa", "adam", 24.0, 2)
    row = measure_first_failure(
        setup, device=torch.device("cpu"), readers=_stand_ins(), config=_narrow(setup)
    )
    assert row["outcome"] == "step 1 optimizer.step" and calls == [1]
    assert row["message"] == message  # the first line, as run_a.csv keeps it
    assert parse_oom_message(row["message"]).tried_bytes == 144 * 2**20
