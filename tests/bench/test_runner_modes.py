"""The one load runner hands its class and flood scenarios to their modules with the options they take."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import class_at_once, flood, run_load
from bench.stats import summarise


def test_the_flood_gets_every_option_but_the_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        seen.append(argv)
        return 0

    monkeypatch.setattr(flood, "main", fake_main)
    assert run_load.main(["--mode", "flood", "--sessions", "3", "--rate", "5"]) == 0
    assert run_load.main(["--sessions=2", "--mode=flood", "--duration-s=4"]) == 0
    assert seen == [["--sessions", "3", "--rate", "5"], ["--sessions=2", "--duration-s=4"]]


@pytest.mark.parametrize("mode", ["locks", "opens"])
def test_a_class_scenario_runs_once_with_its_page_and_saves_its_figures(
    mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_run_class(scenario: str, sessions: int, page: str, **options: Any) -> class_at_once.Outcome:
        calls.append((scenario, sessions, page, options["question_id"], options["returning"]))
        timed = {"lock": summarise([100.0, 300.0])}
        return class_at_once.Outcome("did it", sessions, page, timed, 4.0, 0.0, sessions, 8.0, 1.0)

    monkeypatch.setattr(class_at_once, "run_class", fake_run_class)
    out = tmp_path / "class.json"
    args = ["--mode", mode, "--sessions", "2", "--page", "quiz-report", "--question", "q2", "--out", str(out)]
    assert run_load.main([*args, "--returning"]) == 0
    assert calls == [(mode, 2, "quiz-report", "q2", True)]
    assert "2 learners at once: did it" in capsys.readouterr().out
    assert json.loads(out.read_text())["timed"]["lock"]["count"] == 2
