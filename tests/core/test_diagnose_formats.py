"""Reading logs: every format parses, columns are recognised by name, malformed files are refused."""

from __future__ import annotations

import json
import math

import pytest

from core import lessons
from core.diagnose.columns import RunLog, Series, check_mapping, guess_mapping, normalise, run_log
from core.diagnose.examples import example_bytes
from core.diagnose.formats import MAX_BYTES, MAX_ROWS, read_log

CSV = (
    "step,train/loss,gpu_mem_allocated_bytes,lr\n"
    "1,2.5,1000000000,0.001\n2,nan,2000000000,0.001\n3,,3000000000,\n"
)


def _series(run: RunLog, role: str) -> Series:
    found = run.get(role)
    assert found is not None, f"the log has no {role}"
    return found


def test_a_plain_csv_keeps_nan_and_leaves_empty_cells_empty():
    table = read_log(CSV.encode(), "run.csv")
    assert table.format == "CSV"
    assert table.columns == ("step", "train/loss", "gpu_mem_allocated_bytes", "lr")
    loss = table.column("train/loss")
    assert loss[0] == 2.5 and math.isnan(loss[1] or 0.0) and loss[2] is None


def test_memory_in_bytes_is_read_in_gb_from_the_name():
    table = read_log(CSV.encode(), "run.csv")
    run = run_log(table, guess_mapping(table.columns))
    assert _series(run, "memory").values == (1.0, 2.0, 3.0)
    assert _series(run, "memory").unit_note == lessons.sentence("diagnose", "unit_from_name", unit="bytes")
    assert _series(run, "loss").steps == (1.0, 2.0)  # the row without a loss is left out


def test_a_wandb_export_drops_run_names_and_min_max_columns():
    # The layout of W&B's "Export CSV" on a chart (wandb is not installed here, so written by hand).
    text = (
        '"Step","lucky-sun-3 - train/loss","lucky-sun-3 - train/loss__MIN","lucky-sun-3 - train/loss__MAX"\n'
        '"0","2.3","2.3","2.3"\n"10","1.9","1.8","2.0"\n'
    )
    table = read_log(text.encode(), "wandb_export_2026-11-30.csv")
    assert table.format == "W&B CSV export"
    assert table.columns == ("Step", "train/loss")
    assert guess_mapping(table.columns)["loss"] == "train/loss"


def test_json_lines_flatten_nested_objects_and_read_nan():
    text = '{"step": 1, "train": {"loss": 2.0}, "note": "warm-up"}\n\n{"step": 2, "train": {"loss": NaN}}\n'
    table = read_log(text.encode(), "metrics.jsonl")
    assert table.format == "JSON Lines"
    assert table.columns == ("step", "train/loss")
    assert table.ignored == ("note",)
    assert math.isnan(table.column("train/loss")[1] or 0.0)


def test_a_trainer_state_reads_its_log_history():
    state = {"global_step": 20, "log_history": [{"loss": 2.1, "step": 10}, {"eval_loss": 2.0, "step": 10}]}
    table = read_log(json.dumps(state).encode(), "trainer_state.json")
    assert table.format == "Hugging Face trainer_state.json"
    mapping = guess_mapping(table.columns)
    assert (mapping["loss"], mapping["eval_loss"], mapping["step"]) == ("loss", "eval_loss", "step")


def test_the_shipped_tensorboard_file_parses():
    table = read_log(example_bytes("leak.tfevents"), "leak.tfevents")
    assert table.format == "TensorBoard events"
    assert table.columns == ("step", "train/loss", "memory/rss_mb")
    assert len(table.rows) == 200


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.csv", b"", "This file is empty."),
        ("blob.bin", bytes(range(200, 256)) * 4, "is not text"),
        ("ragged.csv", b"step,loss\n1,2.0\n2,2.0,9\n", "Row 3 of this CSV file has 3 cells"),
        ("header.csv", b"step,loss\n", "holds no rows"),
        ("words.csv", b"run,notes\na,b\n", "no column of numbers"),
        ("twice.csv", b"loss,loss\n1,2\n", "names the same column twice"),
        ("bad.jsonl", b'{"step": 1}\n{"step": \n', "Line 2 of this JSON Lines file is not valid JSON"),
        ("list.jsonl", b"[1, 2, 3]", "neither a list of logged rows nor a trainer_state.json"),
        ("state.json", b'{"log_history": 5}', "has no `log_history` list"),
        ("cut.tfevents", example_bytes("leak.tfevents")[:-3], "not a TensorBoard event file"),
    ],
)
def test_malformed_files_are_refused_with_one_sentence(name, data, message):
    with pytest.raises(ValueError, match=None) as raised:
        read_log(data, name)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_size_and_row_limits():
    with pytest.raises(ValueError, match="up to 10 MB"):
        read_log(b"x" * (MAX_BYTES + 1), "huge.csv")
    rows = "step\n" + "\n".join(str(i) for i in range(MAX_ROWS + 1))
    with pytest.raises(ValueError, match="the lab reads at most 100,000"):
        read_log(rows.encode(), "long.csv")


@pytest.mark.parametrize(
    ("column", "role"),
    [
        ("train/loss", "loss"),
        ("loss", "loss"),
        ("eval_loss", "eval_loss"),
        ("val/loss", "eval_loss"),
        ("grad_norm", "grad_norm"),
        ("learning_rate", "learning_rate"),
        ("lr-AdamW", "learning_rate"),
        ("torch.cuda.memory_allocated", "memory"),
        ("memory_reserved_gb", "memory"),
        ("system/gpu.0.gpu", "utilisation"),
        ("gpu_utilization", "utilisation"),
        ("tokens_per_sec", "tokens_per_s"),
        ("train_samples_per_second", "samples_per_s"),
        ("data_time", "data_time"),
        ("batch_time", "step_time"),
        ("step_time_ms", "step_time"),
        ("acc1", "accuracy"),
        ("global_step", "step"),
        ("epoch", "step"),
    ],
)
def test_common_column_names_are_recognised(column, role):
    assert guess_mapping((column,))[role] == column


def test_a_step_column_wins_over_epoch():
    assert guess_mapping(("epoch", "loss", "step"))["step"] == "step"


def test_allocated_memory_wins_over_reserved_and_names_normalise():
    mapping = guess_mapping(("memory_reserved", "memory_allocated"))
    assert mapping["memory"] == "memory_allocated"
    assert normalise("system/gpu.0.memoryAllocatedBytes") == "system_gpu_0_memory_allocated_bytes"


def test_a_mapping_must_name_real_columns_once_each():
    table = read_log(CSV.encode(), "run.csv")
    with pytest.raises(ValueError, match="no column called 'loss'"):
        check_mapping(table, {"loss": "loss"})
    with pytest.raises(ValueError, match="is used twice"):
        check_mapping(table, {"loss": "lr", "learning_rate": "lr"})
    with pytest.raises(ValueError, match="Unknown column roles: speed"):
        check_mapping(table, {"speed": "lr"})


def test_milliseconds_and_fractions_are_read_in_the_roles_units():
    table = read_log(b"step,step_time_ms,gpu_util\n1,250,0.5\n", "t.csv")
    run = run_log(table, guess_mapping(table.columns))
    assert _series(run, "step_time").values == (0.25,)
    assert _series(run, "utilisation").values == (50.0,)


def test_memory_as_a_percentage_needs_the_device_size():
    table = read_log(b"step,gpu_mem_percent\n1,50\n", "p.csv")
    assert _series(run_log(table, guess_mapping(table.columns), device_gb=80), "memory").values == (40.0,)
