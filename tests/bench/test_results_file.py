"""The results file: a round's entry goes on top, dated, with the host and the load on it."""

from pathlib import Path

import pytest

from bench.report import ENTRIES_MARK, RESULTS_FILE, entry, host_name, main, one_minute_loads, record

UPTIME = (
    "before page CPU:  01:09:02 up 3 days,  2:01,  0 users,  load average: 8.70, 7.12, 6.01\n"
    "after page CPU:  01:10:40 up 3 days,  2:03,  0 users,  load average: 5.90, 6.80, 5.97\n"
    "after first paint:  01:40:11 up 3 days,  2:32,  0 users,  load average: 0.61, 1.02, 2.40\n"
)


def test_the_one_minute_load_of_each_uptime_line_is_read() -> None:
    assert one_minute_loads(UPTIME.splitlines()) == [8.70, 5.90, 0.61]
    assert one_minute_loads(["no load here"]) == []


def test_the_host_is_named_by_its_cpu_count_and_model() -> None:
    cpuinfo = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nprocessor\t: 1\n"
    assert host_name(cpuinfo, 2) == "2-CPU Intel(R) Xeon(R) CPU @ 2.20GHz"


def test_an_entry_names_the_date_the_host_the_load_span_and_the_commit(tmp_path: Path) -> None:
    (tmp_path / "uptime.txt").write_text(UPTIME)
    text = entry(tmp_path, "2026-12-06", "2-CPU Xeon", "commit `abc1234`")
    heading, *rest = text.splitlines()
    assert heading == "## 2026-12-06 on a 2-CPU Xeon, load average 0.6 to 8.7"
    assert "commit `abc1234`" in rest[1]
    # An empty folder still gives the headline table: the first-paint rows without figures.
    table = [line for line in rest if line.startswith("|")]
    assert table[0].startswith("| figure |")
    paint = [line for line in table if line.startswith("| first paint")]
    assert len(paint) == 2
    assert all(line.endswith("| - | - |") for line in paint)


def test_a_new_entry_goes_above_the_older_ones_and_keeps_the_head(tmp_path: Path) -> None:
    results = tmp_path / "results.md"
    results.write_text(f"# Results\n\nHow to read them.\n\n{ENTRIES_MARK}\n\n## 2026-12-05 older\n\nold\n")
    record(results, "## 2026-12-06 newer\n\nnew table\n")
    text = results.read_text()
    places = [text.index(part) for part in ("How to read them.", ENTRIES_MARK, "newer", "older")]
    assert places == sorted(places)
    assert text.count(ENTRIES_MARK) == 1


def test_a_file_without_the_mark_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    results = tmp_path / "results.md"
    results.write_text("# Results\n")
    with pytest.raises(ValueError, match="no line"):
        record(results, "## entry\n")
    assert results.read_text() == "# Results\n"


def test_the_project_s_results_file_has_the_mark() -> None:
    assert ENTRIES_MARK in RESULTS_FILE.read_text()


def test_a_folder_with_no_figures_is_not_recorded(tmp_path: Path) -> None:
    before = RESULTS_FILE.read_text()
    with pytest.raises(SystemExit, match="no figures"):
        main(["--record", str(tmp_path)])
    assert RESULTS_FILE.read_text() == before
