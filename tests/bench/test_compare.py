"""The interleaved comparison: its schedule, its arithmetic worked by hand, and one real run of each side."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.compare import (
    Figures,
    Variant,
    compare,
    comparison_record,
    geometric_mean,
    main,
    run_once,
    schedule,
)
from bench.report import comparison_rows
from tests.harness.paths import REPO_ROOT


def _figures(reruns_per_s: float, p95_ms: float = 100.0) -> Figures:
    return Figures(reruns_per_s=reruns_per_s, p50_ms=p95_ms / 2, p95_ms=p95_ms, cpu_ms_per_run=10.0)


def test_each_round_lets_each_side_go_first_once():
    assert schedule(2) == ["a", "b", "b", "a", "a", "b", "b", "a"]


def test_a_comparison_without_rounds_is_refused():
    with pytest.raises(ValueError, match="at least one round"):
        schedule(0)


def test_a_steady_second_run_bonus_cancels_out_and_is_reported_on_its_own():
    # B is truly 10% faster, and whichever runs second in a pair gets another 20%.
    # Pair 1 (A then B): A 100, B 100 x 1.1 x 1.2 = 132. Pair 2 (B then A): B 110, A 120.
    runs = [("a", _figures(100.0)), ("b", _figures(132.0)), ("b", _figures(110.0)), ("a", _figures(120.0))]
    result = compare(runs)
    assert result.b_over_a["reruns_per_s"] == pytest.approx([1.32, 110 / 120])
    # sqrt(1.32 x 0.9167) = sqrt(1.21) = 1.1: the true change.
    assert result.effect["reruns_per_s"] == pytest.approx(1.1)
    # Second / first: 132/100 and 120/110; sqrt(1.32 x 1.0909) = sqrt(1.44) = 1.2.
    assert result.second_over_first["reruns_per_s"] == pytest.approx(1.2)
    # The same p95 everywhere: no change, no order effect.
    assert result.effect["p95_ms"] == pytest.approx(1.0)


def test_pairs_must_hold_one_run_of_each_side():
    with pytest.raises(ValueError, match="one run of A and one of B"):
        compare([("a", _figures(1.0)), ("a", _figures(2.0))])
    with pytest.raises(ValueError, match="whole pairs"):
        compare([("a", _figures(1.0)), ("b", _figures(2.0)), ("a", _figures(3.0))])


def test_a_run_without_reruns_has_no_figures():
    empty = {
        "label": "load-app",
        "rerun": {"count": 0},
        "navigate": {"count": 0},
        "initial_load": {"count": 0},
    }
    with pytest.raises(ValueError, match="served no rerun"):
        Figures.of({**empty, "elapsed_s": 40.0, "server": {"cpu_s": 1.0}})


def test_figures_come_from_run_load_json():
    result = {
        "label": "load-app-nogc-burst-100",
        "elapsed_s": 40.0,
        "rerun": {"count": 1600, "p50_ms": 1400.0, "p95_ms": 1800.0},
        "navigate": {"count": 300},
        "initial_load": {"count": 100},
        "server": {"cpu_s": 34.0},
    }
    # 1,600 reruns in 40 s; 34 s of CPU over 1,600 + 300 + 100 = 2,000 script runs is 17 ms each.
    assert Figures.of(result) == Figures(40.0, 1400.0, 1800.0, 17.0)


@given(st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=20))
def test_the_geometric_mean_lies_between_the_least_and_the_most(values):
    mean = geometric_mean(values)
    assert min(values) * (1 - 1e-9) <= mean <= max(values) * (1 + 1e-9)
    assert math.isclose(geometric_mean([v * 2 for v in values]), 2 * mean, rel_tol=1e-9)


def test_the_geometric_mean_refuses_what_is_not_a_ratio():
    with pytest.raises(ValueError, match="positive"):
        geometric_mean([1.0, 0.0])
    with pytest.raises(ValueError, match="at least one value"):
        geometric_mean([])


def test_a_folder_that_is_not_a_checkout_is_refused_in_a_sentence(tmp_path, capsys):
    assert main(["--b-dir", str(tmp_path)]) == 2
    assert "is not a checkout of this project" in capsys.readouterr().err


def test_an_environment_setting_without_a_value_is_refused(capsys):
    assert main(["--b-env", "LAB_BATCH_WAKEUPS"]) == 2
    assert "NAME=value" in capsys.readouterr().err


def test_a_run_gets_its_variants_environment_folder_and_arguments(tmp_path, monkeypatch):
    seen: dict[str, Any] = {}

    def fake_run(command, *, cwd, env, **_):
        seen.update(command=command, cwd=cwd, env=env)
        Path(command[-1]).write_text(json.dumps({"label": "fake"}))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(subprocess, "run", fake_run)
    variant = Variant("off", tmp_path, env={"LAB_BATCH_WAKEUPS": "0"}, args=("--gc", "off"))
    assert run_once(variant, ["--mode=burst"], tmp_path / "run.json") == {"label": "fake"}
    assert seen["cwd"] == tmp_path
    assert seen["env"]["LAB_BATCH_WAKEUPS"] == "0"
    assert seen["env"]["PATH"] == os.environ["PATH"]  # the rest of the environment is kept
    assert seen["command"][1:] == [
        "-m",
        "bench.run_load",
        "--mode=burst",
        "--gc",
        "off",
        "--out",
        str(tmp_path / "run.json"),
    ]


def test_one_round_runs_each_side_twice_with_its_own_arguments(tmp_path: Path):
    # The hello demo for two seconds, two learners; B passes run_load an argument A does not,
    # which its JSON records.
    out = tmp_path / "cmp"
    status = main(
        [
            "--target=hello",
            "--sessions=2",
            "--duration-s=2",
            "--rounds=1",
            "--b-name=patient",
            "--b-args=--timeout-s=29",
            f"--b-dir={REPO_ROOT}",
            f"--out={out}",
        ]
    )
    assert status == 0
    runs = sorted(out.glob("run-*.json"))
    assert [path.stem for path in runs] == ["run-01-a", "run-02-b", "run-03-b", "run-04-a"]
    timeouts = [json.loads(path.read_text())["config"]["timeout_s"] for path in runs]
    assert timeouts == [30.0, 29.0, 29.0, 30.0]
    report = (out / "comparison.md").read_text()
    assert "| 2 | B (patient) |" in report
    assert "patient ÷ A, each pair" in report


def test_the_summary_headline_gives_each_pairs_ratio_and_their_geometric_mean():
    # hello, app, app, hello: p95 600, 1,800, 1,500, 500 ms. App ÷ hello: 3.00 then 3.00; mean 3.00.
    runs = [("a", _figures(50.0, 600.0)), ("b", _figures(20.0, 1800.0))]
    runs += [("b", _figures(22.0, 1500.0)), ("a", _figures(55.0, 500.0))]
    variants = {"a": Variant("hello", REPO_ROOT), "b": Variant("app", REPO_ROOT)}
    record = json.loads(json.dumps(comparison_record(variants, [], "burst", 100, runs, compare(runs))))
    assert comparison_rows([record]) == [
        "| 100 learners clicking at once, rerun p95 app ÷ hello, run in turn (hello, app, app, hello): "
        "each pair; geometric mean | 3.00, 3.00; 3.00× | |"
    ]
