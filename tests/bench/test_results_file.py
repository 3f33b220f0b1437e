"""The results file: a round's entry goes on top, dated, with the host and the load on it."""

from pathlib import Path

import pytest

from bench.report import (
    ENTRIES_MARK,
    RESULTS_FILE,
    entry,
    headline,
    host_name,
    main,
    one_minute_loads,
    record,
)

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


def _run(
    target: str, mode: str, *, replicas: int = 0, reruns: int, cpu_s: float, p95_ms: float, rss_mb: float
):
    """A load run's JSON as bench.run_load writes it, the figures the headline reads, over 40 s."""
    nothing = {"count": 0, "p95_ms": None}
    return {
        "config": {
            "target": target,
            "post_script_gc": False,
            "mode": mode,
            "sessions": 100,
            "replicas": replicas,
        },
        "elapsed_s": 40.0,
        "rerun": {"count": reruns, "p95_ms": p95_ms},
        "rerun_fragment": nothing,
        "rerun_page": {"count": reruns, "p95_ms": p95_ms},
        "navigate": nothing,
        "initial_load": {"count": 100, "p95_ms": 900.0},
        "server": {"cpu_s": cpu_s, "rss_per_session_mb": rss_mb},
    }


def test_the_headline_gives_reruns_per_core_second_p95_on_each_replica_count_and_memory_per_learner() -> None:
    runs = [
        # 2,000 reruns on 20 s of server CPU: 100 a core-second; 20,000 ms over 2,100 script runs: 9.5 ms.
        _run("app", "burst", reruns=2000, cpu_s=20.0, p95_ms=1200.0, rss_mb=1.5),
        _run("hello", "burst", reruns=8000, cpu_s=25.0, p95_ms=450.0, rss_mb=0.4),
        # Through HAProxy: 2,400 reruns in 40 s is 60 a second.
        _run("app", "burst", replicas=2, reruns=2400, cpu_s=30.0, p95_ms=800.0, rss_mb=1.6),
        _run("app", "think", reruns=900, cpu_s=9.0, p95_ms=80.0, rss_mb=2.25),
    ]
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in headline(runs, {}).splitlines()[2:]}
    assert rows["100 clicking at once, reruns a second per core (reruns ÷ server CPU s)"] == ["100", "320 |"]
    assert rows["100 clicking at once, server CPU ms per script run"] == ["9.5", "3.1 |"]
    assert rows["100 clicking at once, one server: rerun p95 ms"] == ["1,200", "450 |"]
    assert rows["100 clicking at once through HAProxy, 2 replica(s): rerun p95 ms, reruns a second"] == [
        "800, 60",
        "- |",
    ]
    memory = "memory per learner MB (peak RSS over the idle server's)"
    assert rows[f"100 thinking, {memory}"] == ["2.25", "- |"]
    assert rows[f"100 clicking at once, {memory}"] == ["1.50", "0.40 |"]
