"""The example-log script's runs and writers, with real PyTorch, transformers and TensorBoard writers."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)

from core.diagnose.detectors import RunContext  # noqa: E402
from core.diagnose.diagnosis import diagnose_bytes  # noqa: E402
from core.diagnose.formats import read_log  # noqa: E402
from tools import make_example_logs as make  # noqa: E402

pytestmark = pytest.mark.torch
torch.set_num_threads(1)


def test_a_too_high_learning_rate_really_diverges_to_nan(tmp_path):
    path = tmp_path / "run.jsonl"
    make._write_json_lines(make.too_high_lr(), path)
    _, _, result = diagnose_bytes(path.read_bytes(), path.name, RunContext(classes=10))
    assert result.primary == "numerical"
    assert result.finding("numerical").marks.nan_step is not None


def test_a_trainer_state_written_by_transformers_parses(tmp_path):
    path = tmp_path / "trainer_state.json"
    history = [{"epoch": 0.5, "grad_norm": 1.5, "learning_rate": 1e-3, "loss": 2.2, "step": 10}]
    history.append({"eval_loss": 2.0, "epoch": 0.5, "step": 10})
    make._write_trainer_state(history, path)
    table = read_log(path.read_bytes(), path.name)
    assert table.format == "Hugging Face trainer_state.json"
    assert table.column("loss") == (2.2, None)
    assert table.column("eval_loss") == (None, 2.0)


def test_a_tensorboard_file_written_by_torch_parses(tmp_path):
    path = tmp_path / "events.out.tfevents.test"
    make._write_tensorboard([{"step": 0, "train/loss": 2.5}, {"step": 5, "train/loss": float("nan")}], path)
    table = read_log(path.read_bytes(), path.name)
    assert table.columns == ("step", "train/loss")
    assert table.column("train/loss")[0] == 2.5
    assert table.column("step") == (0.0, 5.0)
