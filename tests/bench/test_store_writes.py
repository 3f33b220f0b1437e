"""bench/store_writes.py: each kind of write is timed on the database asked for; the table reads right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import store_writes
from bench.store_writes import WriteCost


def test_each_kind_of_write_is_timed_and_saved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "writes.json"
    args = ["--databases", "sqlite", "--writes", "3", "--warm-up", "1", "--out", str(out)]
    assert store_writes.main(args) == 0
    saved = json.loads(out.read_text())
    assert [row["kind"] for row in saved] == list(store_writes.WRITES)
    assert all(row["database"] == "sqlite" and row["writes"] == 3 and row["cpu_us"] >= 0 for row in saved)
    assert "| answer |" in capsys.readouterr().out


def test_the_table_has_a_column_per_database() -> None:
    costs = [
        WriteCost("sqlite", "setting", 10, 234.4),
        WriteCost("postgresql", "setting", 10, 301.6),
        WriteCost("sqlite", "answer", 10, 281.0),
        WriteCost("postgresql", "answer", 10, 350.2),
    ]
    assert store_writes.table(costs).splitlines() == [
        "| write | sqlite, CPU µs a write | postgresql, CPU µs a write |",
        "| --- | --- | --- |",
        "| setting | 234 | 302 |",
        "| answer | 281 | 350 |",
    ]


@pytest.mark.parametrize("args", [["--databases", "mysql"], ["--writes", "0"], ["--warm-up", "-1"]])
def test_a_bad_choice_is_refused(args: list[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        store_writes.main([*args, "--out", str(tmp_path / "x.json")])
