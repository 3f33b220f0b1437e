"""Turn a results folder into a markdown summary, and record its headline table in the results file.

    python -m bench.report bench/results > bench/results/summary.md
    python -m bench.report --record bench/results     # adds a dated entry to docs/results.md

Figures are reported against the workshop targets (100 sessions: p95 rerun <= 250 ms,
no errors, no isolation mismatches, under 5 MB RSS per session); nothing is asserted.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import streamlit

from bench.first_paint import table as first_paint_table
from bench.paths import RESULTS_DIR
from bench.stats import ratio
from tests.harness.paths import REPO_ROOT

# The one file that holds every dated figure; a round adds an entry under this line, newest first.
RESULTS_FILE = REPO_ROOT / "docs" / "results.md"
ENTRIES_MARK = "<!-- entries: bench.report --record inserts new ones below this line -->"

TARGET_P95_MS = 250.0
TARGET_RSS_PER_SESSION_MB = 5.0


def _n(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


Key = tuple[str, bool, str, int, int]  # target, GC off, mode, sessions, replicas (0: no proxy)


def _key(run: dict[str, Any]) -> Key:
    c = run["config"]
    return (c["target"], not c["post_script_gc"], c["mode"], c["sessions"], c.get("replicas", 0))


def _app(run: dict[str, Any]) -> str:
    replicas = run["config"].get("replicas", 0)
    return run["config"]["target"] + (f" ({replicas} behind HAProxy)" if replicas else "")


def _gc(run: dict[str, Any]) -> str:
    return "on" if run["config"]["post_script_gc"] else "off"


def rerun_split(run: dict[str, Any]) -> str:
    """Reruns of one fragment and of the whole page: count and p95 each ("-" for older results)."""
    if "rerun_fragment" not in run:
        return "-"
    return " / ".join(
        f"{part['count']:,} (p95 {_n(part['p95_ms'])})" for part in (run["rerun_fragment"], run["rerun_page"])
    )


def load_table(runs: list[dict[str, Any]]) -> str:
    """One row per load run."""
    rows = [
        "| app | GC | mode | sessions | first load p95 ms | rerun p50 / p95 / p99 ms | reruns of a fragment"
        " / of the whole page (p95 ms) | page switch p95 ms | errors | exception elements"
        " | isolation checks / mismatches | RSS MB per session | peak RSS MB | server CPU mean % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        c, r, iso, s = run["config"], run["rerun"], run["isolation"], run["server"]
        checks = sum(v["checks"] for v in iso.values() if isinstance(v, dict))
        rows.append(
            f"| {_app(run)} | {_gc(run)} | {c['mode']} | {c['sessions']} | "
            f"{_n(run['initial_load']['p95_ms'])}"
            f" | {_n(r['p50_ms'])} / {_n(r['p95_ms'])} / {_n(r['p99_ms'])} | {rerun_split(run)}"
            f" | {_n(run['navigate']['p95_ms'])}"
            f" | {run['error_count']} | {run['exception_count']} | {checks} / {iso['mismatches']}"
            f" | {_n(s['rss_per_session_mb'], 2)} | {_n(s['peak_rss_mb'])} | {_n(s['cpu_mean_pct'])} |"
        )
    return "\n".join(rows)


def ratio_table(runs: list[dict[str, Any]]) -> str:
    """App figures divided by the hello demo's under the same GC setting, mode and session count."""
    hello = {_key(r)[1:4]: r for r in runs if r["config"]["target"] == "hello" and not _key(r)[4]}
    rows = [
        "| GC | mode | sessions | rerun p50 app ÷ hello | rerun p95 app ÷ hello | RSS per session "
        "app ÷ hello | server CPU s app ÷ hello |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        base = hello.get(_key(run)[1:4])
        if run["config"]["target"] != "app" or base is None:
            continue
        figures = [
            ratio(run["rerun"]["p50_ms"], base["rerun"]["p50_ms"]),
            ratio(run["rerun"]["p95_ms"], base["rerun"]["p95_ms"]),
            ratio(run["server"]["rss_per_session_mb"], base["server"]["rss_per_session_mb"]),
            ratio(run["server"]["cpu_s"], base["server"]["cpu_s"]),
        ]
        c = run["config"]
        cells = " | ".join("-" if f is None else f"{_n(f, 1)}×" for f in figures)
        rows.append(f"| {_gc(run)} | {c['mode']} | {c['sessions']} | {cells} |")
    return "\n".join(rows)


def targets(runs: list[dict[str, Any]]) -> str:
    """The workshop targets at 100 sessions, one line per app run that has 100 sessions."""
    lines = []
    for run in runs:
        c = run["config"]
        if c["target"] != "app" or c["sessions"] != 100:
            continue
        p95 = run["rerun"]["p95_ms"]
        per_session = run["server"]["rss_per_session_mb"]
        checks = [
            ("p95 rerun ≤ 250 ms", p95 is not None and p95 <= TARGET_P95_MS, f"{_n(p95)} ms"),
            ("0 errors", run["error_count"] == 0, str(run["error_count"])),
            (
                "0 isolation mismatches",
                run["isolation"]["mismatches"] == 0,
                str(run["isolation"]["mismatches"]),
            ),
            ("< 5 MB RSS per session", per_session < TARGET_RSS_PER_SESSION_MB, f"{_n(per_session, 2)} MB"),
        ]
        verdicts = "; ".join(f"{name}: {'met' if ok else 'NOT met'} ({shown})" for name, ok, shown in checks)
        lines.append(f"- GC {_gc(run)}, {c['mode']}: {verdicts}")
    return "\n".join(lines) or "- no 100-session app runs in this folder"


def soak_section(runs: list[dict[str, Any]]) -> str:
    """RSS minute by minute for soak runs, and its slope after the first third."""
    parts = []
    for run in runs:
        s, c = run["server"], run["config"]
        by_minute: dict[int, float] = {}
        for minute, rss in s["rss_timeline_mb"]:
            by_minute.setdefault(int(minute), rss)
        timeline = ", ".join(f"{m} min {rss:.0f}" for m, rss in sorted(by_minute.items()))
        parts.append(
            f"- {c['target']}, GC {_gc(run)}, {c['sessions']} sessions, {c['duration_s'] / 60:.0f} "
            "min, sessions renewed every"
            f" {c['lifetime_s']:.0f} s: RSS MB {timeline}; slope after the first third "
            f"{_n(s['rss_slope_mb_per_min'], 2)} MB/min;"
            f" errors {run['error_count']}, isolation mismatches {run['isolation']['mismatches']}, "
            f"rerun p95 {_n(run['rerun']['p95_ms'])} ms"
        )
    return "\n".join(parts) or "- no soak run in this folder"


def _span(values: list[float], digits: int = 1) -> str:
    if not values:
        return "-"
    low, high = f"{min(values):,.{digits}f}", f"{max(values):,.{digits}f}"
    return low if low == high else f"{low}–{high}"


def reruns_per_s(run: dict[str, Any]) -> float:
    """Reruns served a second over the run's measured time."""
    return float(run["rerun"]["count"] / run["elapsed_s"])


def reruns_per_core_s(run: dict[str, Any]) -> float | None:
    """Reruns served per second of the server's CPU (one core busy for a second): what a core is worth,
    whatever else the shared machine was doing."""
    cpu_s = run["server"]["cpu_s"]
    return run["rerun"]["count"] / cpu_s if cpu_s else None


def cpu_per_run_ms(run: dict[str, Any]) -> float | None:
    """Server CPU time per script run: robust to other load on the machine, unlike latencies."""
    runs = sum(run[k]["count"] for k in ("rerun", "navigate", "initial_load")) + run.get(
        "extra_script_runs", 0
    )
    return 1000 * run["server"]["cpu_s"] / runs if runs else None


def _pair(by_key: dict[Key, dict[str, Any]], key: Key) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The app's run and the hello page's under `key` (its target left out)."""
    return by_key.get(("app", *key[1:])), by_key.get(("hello", *key[1:]))


def _row(label: str, pair: tuple[dict[str, Any] | None, ...], figure: Any) -> str:
    cells = [figure(run) if run else "-" for run in pair]
    return f"| {label} | {cells[0]} | {cells[1]} |"


def headline(
    runs: list[dict[str, Any]], paint: dict[str, Any], comparisons: list[dict[str, Any]] | None = None
) -> str:
    """The figures that matter to a host in one table, the app (every page) beside the hello page: reruns
    a second per core, p95 of a class clicking at once on one server and through HAProxy to one and two
    replicas, memory per learner, first paint."""
    rows = ["| figure | this app | Streamlit's hello page |", "|---|---|---|"]
    by_key: dict[Key, dict[str, Any]] = {}
    for run in runs:  # runs in turn (bench.compare) give two of a kind: the first stands for them
        by_key.setdefault(_key(run), run)
    # The largest class of each mode that was measured (run_all's: a burst of 100, 200 thinking).
    largest = {
        mode: max((k[3] for k in by_key if k[0] == "app" and k[1] and k[2] == mode), default=0)
        for mode in ("burst", "think")
    }
    burst = _pair(by_key, ("app", True, "burst", largest["burst"], 0))
    think = _pair(by_key, ("app", True, "think", largest["think"], 0))
    clicking = f"{largest['burst']} clicking at once"
    rows += [
        _row(
            f"{clicking}, reruns a second per core (reruns ÷ server CPU s)",
            burst,
            lambda r: _n(reruns_per_core_s(r)),
        ),
        _row(f"{clicking}, server CPU ms per script run", burst, lambda r: _n(cpu_per_run_ms(r), 1)),
        _row(f"{clicking}, one server: rerun p95 ms", burst, lambda r: _n(r["rerun"]["p95_ms"])),
        _row(f"{clicking}, reruns of a fragment / of the whole page (p95 ms)", burst, rerun_split),
    ]
    rows += comparison_rows(comparisons or [])
    replicas = sorted({k[4] for k in by_key if k[4] and k[2] == "burst" and k[3] == largest["burst"]})
    for count in replicas:
        rows.append(
            _row(
                f"{clicking} through HAProxy, {count} replica(s): rerun p95 ms, reruns a second",
                _pair(by_key, ("app", True, "burst", largest["burst"], count)),
                lambda r: f"{_n(r['rerun']['p95_ms'])}, {reruns_per_s(r):,.0f}",
            )
        )
    for mode, pair in ((f"{largest['think']} thinking", think), (clicking, burst)):
        rows.append(_row(f"{mode}, memory per learner MB (peak RSS over the idle server's)", pair, _memory))
    for when in ("cold", "warm"):
        cells = []
        for target in ("app", "hello"):
            values = [
                (f["cold"]["title_ms"] if when == "cold" else f["warm_title"]["p50_ms"]) / 1000
                for f in paint.get(target, {}).values()
            ]
            cells.append(f"{_span(values, 2)} s" if values else "-")
        rows.append(
            f"| first paint (title drawn) in headless Chromium, {when} server | {cells[0]} | {cells[1]} |"
        )
    return "\n".join(rows)


def _memory(run: dict[str, Any]) -> str:
    return _n(run["server"]["rss_per_session_mb"], 2)


def comparison_rows(comparisons: list[dict[str, Any]]) -> list[str]:
    """A headline row per comparison run in turn (bench.compare): rerun p95 of B ÷ A in each pair of
    runs, and their geometric mean, in which a steady first/second effect cancels."""
    rows = []
    for comparison in comparisons:
        a, b = (comparison["variants"][side]["name"] for side in ("a", "b"))
        names = {"a": a, "b": b}
        order = ", ".join(names[run["side"]] for run in comparison["runs"])
        what = "clicking at once" if comparison["mode"] == "burst" else "thinking"
        pairs = ", ".join(f"{r:.2f}" for r in comparison["comparison"]["b_over_a"]["p95_ms"])
        mean = comparison["comparison"]["effect"]["p95_ms"]
        rows.append(
            f"| {comparison['sessions']} learners {what}, rerun p95 {b} ÷ {a}, run in turn ({order}): "
            f"each pair; geometric mean | {pairs}; {mean:.2f}× | |"
        )
    return rows


def _comparisons(results_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [
        (p.parent, json.loads(p.read_text())) for p in sorted(results_dir.glob("compare-*/comparison.json"))
    ]


def _uptime_lines(path: Path) -> list[str]:
    # The machine is shared: run_all.sh records `uptime` before and after each step.
    return path.read_text().strip().splitlines() if path.exists() else []


def one_minute_loads(uptime_lines: list[str]) -> list[float]:
    """The one-minute load average of each `uptime` line ("... load average: 0.52, 0.61, 0.70")."""
    loads = []
    for line in uptime_lines:
        found = re.search(r"load average:\s*([0-9.]+)", line)
        if found:
            loads.append(float(found.group(1)))
    return loads


def host_name(cpuinfo: str, cpus: int) -> str:
    """A short name for the machine: its CPU count and model, from /proc/cpuinfo's text."""
    found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    return f"{cpus}-CPU {found.group(1).strip() if found else platform.processor() or 'machine'}"


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return f"commit `{done.stdout.strip()}`"


def entry(results_dir: Path, day: str, host: str, commit: str) -> str:
    """One dated entry for the results file: where and when, the load on the machine, the headline."""
    loads = one_minute_loads(_uptime_lines(results_dir / "uptime.txt"))
    load = f"load average {min(loads):.1f} to {max(loads):.1f}" if loads else "load average not recorded"
    return (
        f"## {day} on a {host}, {load}\n\n"
        f"`bash bench/run_all.sh` on {commit}, Streamlit {streamlit.__version__}.\n\n"
        + headline(*_headline_figures(results_dir))
        + "\n"
    )


def record(results_file: Path, new_entry: str) -> None:
    """Put `new_entry` at the top of the results file's entries, under its mark."""
    text = results_file.read_text()
    if ENTRIES_MARK not in text:
        raise ValueError(f"{results_file} has no line {ENTRIES_MARK!r} to put a new entry under.")
    head, rest = text.split(ENTRIES_MARK, 1)
    results_file.write_text(f"{head}{ENTRIES_MARK}\n\n{new_entry.strip()}\n\n{rest.lstrip()}")


def _load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def _headline_figures(results_dir: Path) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """What `headline` reads from a results folder: load runs, first paint, comparisons."""
    comparisons = _comparisons(results_dir)
    run_files = sorted(results_dir.glob("load-*.json")) + [
        path for folder, _ in comparisons for path in sorted(folder.glob("run-*.json"))
    ]
    runs = sorted((json.loads(p.read_text()) for p in run_files), key=_key)
    return runs, _load_json(results_dir / "first_paint.json"), [c for _, c in comparisons]


def summary(results_dir: Path) -> str:
    """The whole markdown summary for one results folder."""
    runs, paint_figures, comparison_figures = _headline_figures(results_dir)
    comparisons = _comparisons(results_dir)
    load_runs = [r for r in runs if not r["config"].get("soak")]
    soak_runs = [r for r in runs if r["config"].get("soak")]
    loads = _uptime_lines(results_dir / "uptime.txt")
    paint = first_paint_table(paint_figures) if paint_figures else "(no first_paint.json)"
    machine = (
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, Streamlit {streamlit.__version__}, "
        f"{platform.platform()}"
    )
    return "\n\n".join(
        [
            f"Machine: {machine}. Client and server share these CPUs.",
            "Load on the machine (`uptime`, before and after each step):\n\n"
            + ("\n".join(f"    {line}" for line in loads) if loads else "    (no uptime.txt)"),
            "### The app beside Streamlit's hello page\n\n"
            + headline(runs, paint_figures, comparison_figures),
            "### Targets at 100 sessions (reported, not asserted)\n\n" + targets(load_runs),
            "### Load runs\n\n" + load_table(load_runs),
            "### The app against Streamlit's hello demo\n\n" + ratio_table(load_runs),
            "### Runs in turn (bench.compare)\n\n"
            + (
                "\n\n".join(
                    f"`{folder.name}`:\n\n" + (folder / "comparison.md").read_text().strip()
                    for folder, _ in comparisons
                )
                or "(none)"
            ),
            "### First paint in headless Chromium\n\n" + paint,
            "### Soak\n\n" + soak_section(soak_runs),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: print the summary for the folder given (default bench/results), or with
    `--record` add its headline to the results file."""
    args = sys.argv[1:] if argv is None else argv
    recording = "--record" in args
    folders = [a for a in args if a != "--record"]
    results_dir = Path(folders[0]) if folders else RESULTS_DIR
    if not recording:
        print(summary(results_dir))
        return 0
    if not any(results_dir.glob("*.json")) and not _comparisons(results_dir):
        # A round with nothing measured must not leave an empty entry in the one file of results.
        sys.exit(f"bench.report: {results_dir} holds no figures to record.")
    cpuinfo = Path("/proc/cpuinfo")
    host = host_name(cpuinfo.read_text() if cpuinfo.exists() else "", os.cpu_count() or 1)
    record(RESULTS_FILE, entry(results_dir, datetime.date.today().isoformat(), host, _commit()))
    print(f"recorded in {RESULTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
