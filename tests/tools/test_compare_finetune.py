"""The comparison of a fine-tuning measurement with `python -m core.estimate`, on a small CSV made here.

No fine-tuning row has been measured on a GPU yet, so the fixture is hand-made: its full-training row is
the H200 reference's own Llama-3.2-1B row (2 × 2048, BF16, SDPA) with the training columns added; its
LoRA row has the trainable count peft gives (tests/tools/test_measure_finetune.py) and invented round
bytes, there only to check the arithmetic. Nothing here is a measurement of fine-tuning.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from core.datafiles import read_csv_rows
from core.memory.finetune import lora_parameters
from core.memory.model_state import run_model_state
from core.memory.phases import step_phases
from core.memory.reference import FOLDER, MeasuredStep, measured_steps, reference_model, setup_of
from core.memory.setup import TrainingMethod
from tools.compare_finetune import compare_row, main, read_rows, run_estimate
from tools.finetune_csv import FINETUNE_COLUMNS, row_label

FULL = {"method": "full", "lora_rank": "", "lora_targets": "", "freeze_blocks": "0", "optim": "adamw"}
INVENTED = {  # round numbers, not measurements
    "weights": "3000000000",
    "optimizer": "30000000",
    "peak_forward": "10000000000",
    "peak_backward": "11000000000",
    "peak_step": "11000000000",
}


def reference_row() -> dict[str, str]:
    """The H200's Llama-3.2-1B step at 2 × 2048, BF16, SDPA, no recomputation, foreach AdamW."""
    wanted = {"model": "Llama-3.2-1B", "batch": "2", "seq": "2048", "mode": "bf16", "attn": "sdpa"}
    return next(
        r
        for r in read_csv_rows(f"{FOLDER}/memory.csv")
        if wanted.items() <= r.items() and (r["recompute"], r["optimizer_impl"]) == ("none", "foreach")
    )


def reference_step() -> MeasuredStep:
    """The same row as the phase model reads it."""
    key = ("Llama-3.2-1B", 2, 2048, "bf16", "sdpa", "none", "foreach")
    return next(
        m
        for m in measured_steps()
        if (m.model, m.batch, m.seq, m.mode, m.attn, m.recompute, m.optimizer_impl) == key
    )


def fixture_rows() -> list[dict[str, str]]:
    measured = reference_row()
    full = {**measured, **FULL, "prepare_kbit": "no", "trainable_params": measured["n_params"]}
    lora_count = lora_parameters(reference_model("Llama-3.2-1B"), 16, "attention")
    lora = {
        **full,
        **INVENTED,
        "method": "lora",
        "lora_rank": "16",
        "lora_targets": "attention",
        "trainable_params": str(lora_count),
    }
    return [full, lora]


@pytest.fixture
def fixture_csv(tmp_path: Path) -> Path:
    path = tmp_path / "finetune.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FINETUNE_COLUMNS)
        writer.writeheader()
        writer.writerows(fixture_rows())
    return path


def test_full_training_is_compared_phase_by_phase_with_the_phase_model(fixture_csv):
    row = read_rows(fixture_csv)[0]
    comparison = compare_row(row)
    checks = {c.name: c for c in comparison.checks}
    assert comparison.note == "" and comparison.label == "Llama-3.2-1B 2×2048 bf16 sdpa full"
    expected = step_phases(setup_of(reference_step())).reported_bytes
    for phase, column in (
        ("forward", "peak_forward"),
        ("backward", "peak_backward"),
        ("optimizer_step", "peak_step"),
    ):
        assert checks[phase].measured == int(row[column])
        assert checks[phase].estimated == int(round(expected[phase]))
    assert checks["trainable_params"].measured == checks["trainable_params"].estimated == 1_235_814_400


def test_lora_is_compared_on_what_the_estimate_gives(fixture_csv):
    row = read_rows(fixture_csv)[1]
    comparison = compare_row(row)
    checks = {c.name: c for c in comparison.checks}
    setup = setup_of(reference_step())
    state = run_model_state(setup, TrainingMethod("lora", 16, "attention"))
    # Per block, r·(in + out): q 16·(2048+2048) + k 16·(2048+512) + v the same + o as q = 212,992; 16 blocks.
    assert checks["trainable_params"].estimated == checks["trainable_params"].measured == 3_407_872
    assert checks["weights"].estimated == int(round(state.per_gpu.weights))
    assert checks["weights"].ratio == pytest.approx(state.per_gpu.weights / 3e9)
    assert checks["optimizer"].estimated == int(round(state.per_gpu.optimizer_state))
    # The phases are compared as soon as the estimate gives them for LoRA; until then the row says so.
    assert ("forward" in checks) == (comparison.note == "")


def test_the_command_prints_one_block_a_row(fixture_csv, capsys):
    assert main([str(fixture_csv)]) == 0
    text = capsys.readouterr().out
    assert "Llama-3.2-1B 2×2048 bf16 sdpa lora r16 attention" in text
    assert text.count("trainable_params") == 2 and "×1.000" in text


def test_a_setup_the_estimate_refuses_keeps_its_one_line():
    refusal = run_estimate(["--config=nowhere.json", "--batch=1", "--seq=8", "--json"])
    assert isinstance(refusal, str) and refusal.startswith("core.estimate: cannot read nowhere.json")


def test_a_csv_without_the_measurement_columns_is_refused(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("model,batch\nGPT-2 small,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="does not have the columns tools/measure_gpu.py writes"):
        read_rows(path)


def test_a_label_names_every_choice_that_is_not_the_default():
    row = {**fixture_rows()[1], "method": "qlora", "lora_targets": "all-linear", "prepare_kbit": "yes"}
    assert row_label(row) == (
        "Llama-3.2-1B 2×2048 bf16 sdpa qlora r16 all-linear prepare_model_for_kbit_training"
    )
    frozen = {**fixture_rows()[0], "freeze_blocks": "12", "optim": "adamw8bit"}
    assert row_label(frozen) == "Llama-3.2-1B 2×2048 bf16 sdpa full first 12 blocks frozen adamw8bit"
