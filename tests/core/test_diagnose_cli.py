"""The command line contract: verdicts per kind, `primary` in the JSON, exit 2 for a file it cannot read."""

from __future__ import annotations

import json
import subprocess
import sys

from core.datafiles import data_path
from core.diagnose.__main__ import main
from core.diagnose.detectors import KINDS

LOGS = data_path("logs")


def test_json_output_has_primary_and_every_kind(capsys):
    assert main([str(LOGS / "too_high_lr.jsonl"), "--classes", "10", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["primary"] == "numerical"
    assert set(result["findings"]) == set(KINDS)
    assert {"verdict", "summary", "evidence", "missing", "next_step", "page"} <= set(
        result["findings"]["numerical"]
    )
    assert result["columns"]["loss"] == "loss" and result["format"] == "JSON Lines"


def test_text_output_lists_each_kind_and_the_primary(capsys):
    assert main([str(LOGS / "slow_loader.csv"), "--device-gb", "24"]) == 0
    out = capsys.readouterr().out
    for kind in KINDS:
        assert f"\n{kind}" in out
    assert "primary: throughput" in out


def test_mfu_from_a_gpu_preset(tmp_path, capsys):
    log = tmp_path / "tokens.csv"
    log.write_text("step,tokens_per_sec\n" + "".join(f"{i},1000\n" for i in range(20)))
    assert main([str(log), "--params", "1e9", "--gpu", "H100 SXM", "--json"]) == 0
    evidence = json.loads(capsys.readouterr().out)["findings"]["throughput"]["evidence"]
    assert any("MFU" in line for line in evidence)


def test_a_file_it_cannot_read_gets_one_line_on_stderr_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("step,loss\n1,2,3\n")
    assert main([str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Row 2 of this CSV file" in captured.err
    assert main([str(tmp_path / "missing.csv")]) == 2


def test_python_m_runs_the_same_command():
    done = subprocess.run(
        [sys.executable, "-m", "core.diagnose", str(LOGS / "leak.tfevents"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["primary"] == "resource"
