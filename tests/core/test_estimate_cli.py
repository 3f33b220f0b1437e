"""The command-line estimate: its JSON contract, its table and its one-line errors."""

from __future__ import annotations

import json

import pytest

from core.datafiles import data_path
from core.estimate import main
from core.memory.reference import measured_steps

GPT2 = str(data_path("configs/gpt2-small.json"))


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_contract_matches_the_reference_row(capsys: pytest.CaptureFixture[str]) -> None:
    row = measured_steps()[0]  # GPT-2 small, 4 × 1024, fp32, eager, foreach
    code, out, _ = _run(
        capsys, "--config", GPT2, "--batch", "4", "--seq", "1024", "--precision", "fp32",
        "--attention", "eager", "--recompute", "none", "--optimizer-impl", "foreach", "--json",
    )  # fmt: skip
    result = json.loads(out)
    assert code == 0
    assert result["parameters"] == row.n_params == 124_439_808
    assert set(result["phases"]) == {"forward", "backward", "optimizer_step"}
    assert result["peak_bytes"] == result["phases"]["optimizer_step"]
    assert result["phases"]["backward"] == pytest.approx(row.peak_backward, rel=0.01)
    assert result["terms"]["optimizer_step"]["optimizer_transient"] == 124_439_808 * 4


def test_table_names_every_phase(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--config", GPT2, "--batch", "1", "--seq", "128")
    assert code == 0
    assert "Forward" in out and "loss.backward()" in out and "optimizer.step()" in out and "GiB" in out


@pytest.mark.parametrize(
    "args",
    [
        ("--config", "missing.json", "--batch", "1", "--seq", "8"),
        ("--config", GPT2, "--batch", "0", "--seq", "8"),
        ("--config", GPT2, "--batch", "x", "--seq", "8"),
        ("--config", GPT2, "--batch", "1", "--seq", "8", "--precision", "fp8"),
        ("--config", GPT2, "--batch", "1", "--seq", "4096"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("core.estimate: ")


def test_a_config_that_is_not_json_is_refused(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = _run(capsys, "--config", str(bad), "--batch", "1", "--seq", "8")
    assert code == 2 and "not valid JSON" in err
