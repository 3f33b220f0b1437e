"""The command-line estimate: its JSON contract, its table and its one-line errors."""

from __future__ import annotations

import json

import pytest

from core.datafiles import data_path, read_json
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


def _run_a_config(tmp_path) -> str:
    from core.run_a.scenario import load_content

    path = tmp_path / "config.json"
    path.write_text(json.dumps(read_json("run_a.json")["scenario"]["config"]), encoding="utf-8")
    assert load_content().scenario.setup.model.layers == 16
    return str(path)


@pytest.mark.parametrize(
    ("seq", "cap", "first"),
    [
        ("1536", "24", {"step": 1, "phase": "backward"}),  # Run A, as the H200 measured it
        ("768", "24", {"step": 1, "phase": "optimizer_step"}),  # half the tokens
        ("1024", "80", None),  # both steps complete
    ],
)
def test_capacity_adds_first_oom(tmp_path, capsys: pytest.CaptureFixture[str], seq, cap, first) -> None:
    run_a = (
        "--config", _run_a_config(tmp_path), "--batch", "1", "--seq", seq, "--precision", "fp32",
        "--attention", "eager", "--optimizer", "adam",
    )  # fmt: skip
    code, out, _ = _run(capsys, *run_a, "--capacity-gib", cap, "--json")
    result = json.loads(out)
    assert code == 0 and result["first_oom"] == first
    code, plain, _ = _run(capsys, *run_a, "--json")
    assert "first_oom" not in json.loads(plain)  # the contract without the flag is unchanged
    code, table, _ = _run(capsys, *run_a, "--capacity-gib", cap)
    assert code == 0 and ("first fails in" in table) == (first is not None)


@pytest.mark.parametrize("cap", ["0", "-3", "inf", "nan", "x", "1e9"])
def test_a_bad_capacity_is_one_line(capsys: pytest.CaptureFixture[str], cap: str) -> None:
    code, out, err = _run(capsys, "--config", GPT2, "--batch", "1", "--seq", "8", "--capacity-gib", cap)
    assert code == 2 and out == "" and err.count("\n") == 1
