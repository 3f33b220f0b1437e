"""The load runner: simulated learners against the lab (or Streamlit's hello page); prints and saves figures.

    python -m bench.run_load --target app --sessions 25 --mode think --duration-s 60 --gc on
    python -m bench.run_load --mode burst --sessions 100 --duration-s 40 --gc off --replicas 2
    python -m bench.run_load --mode locks --sessions 100 --page four-runs --question r1
    python -m bench.run_load --mode opens --sessions 100 --page four-runs --returning
    python -m bench.run_load --mode flood --sessions 50 --duration-s 40 --rate 740

Scenarios (`--mode`): *think* (a ramp, then 3 to 8 s between actions) and *burst* (every learner acts
in the same instant, wave after wave) walk the pages (bench/scenarios.py), straight to one server or
through HAProxy to `--replicas`; *locks* and *opens* are a class acting at once on one page
(bench/class_at_once.py); *flood* is one client flooding reruns beside thinking learners
(bench/flood.py). For think and burst: first-load, rerun and page-switch latency (p50/p95/p99; reruns
also split into fragment reruns and whole-page reruns), errors, exception elements, isolation checks
and mismatches, and the server's RSS and CPU. It reports figures and never judges them: the exit
status is 0 whenever the run itself completed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import string
import sys
import time
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench import class_at_once, sampled
from bench.paths import RESULTS_DIR
from bench.proxy import workshop_proxy
from bench.scenarios import TARGETS, Behaviour, Learner, LearnerStats, Target, Waves
from bench.stats import least_squares_slope, percentile, save_figures, summarise
from tests.harness.server import ResourceSampler, Sample, StreamlitServer, throwaway_store

_MB = 1_000_000


@dataclass(frozen=True)
class LoadConfig:
    """One load run's settings."""

    target: str
    sessions: int
    mode: str
    duration_s: float
    post_script_gc: bool
    ramp_s: float = 0.0  # think mode: first loads spread over this long
    think_min_s: float = 3.0
    think_max_s: float = 8.0
    lifetime_s: float = 0.0  # 0: a learner keeps its session to the end
    timeout_s: float = 30.0
    soak: bool = False
    # 0: learners talk to one server directly. N: to N replicas through the workshop proxy
    # (deploy/proxy.sh: HAProxy, HTTPS, cookie affinity), as a workshop serves them.
    replicas: int = 0

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"Unknown target {self.target!r}; choose one of {sorted(TARGETS)}.")
        if not 1 <= self.sessions <= 999:
            raise ValueError("Sessions must be between 1 and 999.")
        if not 0 < self.duration_s <= 4 * 3600:
            raise ValueError("Duration must be more than 0 s and at most 4 hours.")
        if not 0 <= self.replicas <= 16:
            raise ValueError("Replicas must be between 0 (no proxy) and 16.")

    @property
    def label(self) -> str:
        """A file-name-friendly name for this configuration."""
        gc = "gc" if self.post_script_gc else "nogc"
        soak = "-soak" if self.soak else ""
        proxy = f"-proxy{self.replicas}" if self.replicas else ""
        return f"load-{self.target}-{gc}-{self.mode}-{self.sessions:03d}{soak}{proxy}"


class TimingLog:
    """Reads the JSON lines bench/timed_server.py appends, one per script run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def new_runs(self) -> list[dict[str, Any]]:
        """The script runs logged since the last call, one dict each."""
        if not self.path.exists():
            return []
        with self.path.open() as log:
            log.seek(self._offset)
            lines = log.read()
            self._offset = log.tell()
        return [json.loads(line) for line in lines.splitlines() if line.strip()]


def _random_token() -> str:
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(4))


async def _warm_up(port: int, target: Target, token: str) -> None:
    """One learner visits every page once, so imports and caches are loaded before measuring. It pauses
    between actions to stay under the app's cap of 10 messages a second per connection: without a pause
    the pages now answer fast enough for it to go over, and a dropped message stalls it for its timeout."""
    learner = Learner(
        index=999,
        port=port,
        target=target,
        behaviour=Behaviour(
            mode="think", think_min_s=0.15, think_max_s=0.15, actions_per_visit=1, click_buttons=False
        ),
        run_token=token,
        timeout_s=120,
    )
    pages_budget_s = 10.0 if target.load_pages is None else 3.0 * len(target.load_pages)
    await learner.run(start_delay_s=0, deadline=time.monotonic() + pages_budget_s)


async def _drive(config: LoadConfig, port: int, token: str, *, tls: bool = False) -> LearnerStats:
    behaviour = Behaviour(mode=config.mode, think_min_s=config.think_min_s, think_max_s=config.think_max_s)
    waves = Waves(config.sessions, timeout_s=config.timeout_s) if config.mode == "burst" else None
    learners = [
        Learner(
            index=i,
            port=port,
            target=TARGETS[config.target],
            behaviour=behaviour,
            run_token=token,
            waves=waves,
            lifetime_s=config.lifetime_s,
            timeout_s=config.timeout_s,
            tls=tls,
        )
        for i in range(config.sessions)
    ]
    ramp = 0.0 if waves is not None else config.ramp_s
    deadline = time.monotonic() + ramp + config.duration_s
    results = await asyncio.gather(
        *(
            learner.run(start_delay_s=ramp * i / config.sessions, deadline=deadline)
            for i, learner in enumerate(learners)
        )
    )
    total = LearnerStats()
    for stats in results:
        total.merge(stats)
    return total


def _resources(samples: list[Sample], baseline: Sample, after: Sample, sessions: int) -> dict[str, Any]:
    """Server memory and CPU over the measured phase."""
    peak = max(samples, key=lambda s: s.rss_bytes)
    wall_s = samples[-1].t_s - samples[0].t_s
    cpu_s = samples[-1].cpu_s - samples[0].cpu_s
    busiest = max(
        ((b.cpu_s - a.cpu_s) / (b.t_s - a.t_s) for a, b in pairwise(samples) if b.t_s > a.t_s),
        default=0.0,
    )
    minutes = [(s.t_s - samples[0].t_s) / 60 for s in samples]
    rss_mb = [s.rss_bytes / _MB for s in samples]
    # Memory growth once the first third (start-up, first visits) is over.
    settled = len(samples) // 3
    return {
        "baseline_rss_mb": baseline.rss_bytes / _MB,
        "peak_rss_mb": peak.rss_bytes / _MB,
        "end_rss_mb": samples[-1].rss_bytes / _MB,
        "after_disconnect_rss_mb": after.rss_bytes / _MB,
        "rss_per_session_mb": (peak.rss_bytes - baseline.rss_bytes) / _MB / sessions,
        "cpu_s": cpu_s,
        "cpu_mean_pct": 100 * cpu_s / wall_s if wall_s else None,
        "cpu_peak_pct": 100 * busiest,
        "rss_slope_mb_per_min": least_squares_slope(minutes[settled:], rss_mb[settled:]),
        "rss_timeline_mb": [[round(m, 3), round(r, 1)] for m, r in zip(minutes, rss_mb, strict=True)][
            :: max(1, len(samples) // 240)
        ],
    }


def _tally(tally: Any) -> dict[str, Any]:
    return asdict(tally)


def script_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The logged script runs (bench/timed_server.py) by kind, whole app or fragments alone, and by page
    and kind: how many, their CPU on the script thread (p50, mean, share of all) and messages queued."""

    def figures(group: list[dict[str, Any]]) -> dict[str, float]:
        cpu_ms = [run["exec_cpu_ms"] for run in group]
        return {
            "runs": len(group),
            "cpu_ms_p50": percentile(cpu_ms, 50),
            "cpu_ms_mean": sum(cpu_ms) / len(group),
            "cpu_share": sum(cpu_ms) / total_ms,
            "messages_mean": sum(run["messages"] for run in group) / len(group),
        }

    total_ms = sum(run["exec_cpu_ms"] for run in runs) or 1.0
    by_kind: dict[str, list[dict[str, Any]]] = {}
    by_page: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_kind.setdefault(run["kind"], []).append(run)
        by_page.setdefault(f"{run['page'] or 'home'} ({run['kind']})", []).append(run)
    return {
        "kinds": {kind: figures(group) for kind, group in sorted(by_kind.items())},
        "pages": {name: figures(group) for name, group in sorted(by_page.items())},
    }


def _quiet_s(config: LoadConfig, full_s: float) -> float:
    """A quiet pause around the learners: `full_s`, or a tenth of a run shorter than ten times that (the
    few-second runs of the tests, whose memory figures nobody reads)."""
    return min(full_s, config.duration_s / 10)


def run(
    config: LoadConfig, out: Path, run_log: Path | None = None, sample_profile: Path | None = None
) -> dict[str, Any]:
    """Start the server (or replicas and the proxy), warm it up, run the learners, and write the figures
    to `out` (JSON). With `run_log`, the server (bench/timed_server.py) logs every script run there, and
    the figures add the learners' runs by kind and page (`script_runs`). With `sample_profile`, py-spy
    samples the server while the learners run, into that file (bench/sampled.py)."""
    if (sample_profile is not None or run_log is not None) and config.replicas:
        raise ValueError("A run log or a sampled profile is taken of one server: no --replicas.")
    target = TARGETS[config.target]
    token = _random_token()
    launcher, env = (
        ("bench.timed_server", {"BENCH_TIMING_LOG": str(run_log)}) if run_log else ("streamlit", {})
    )
    log = TimingLog(run_log) if run_log is not None else None
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                StreamlitServer(
                    script=target.script,
                    post_script_gc=config.post_script_gc,
                    log_path=out.with_suffix(f".server{index or ''}.log"),
                    launcher=launcher,
                    env=env,
                )
            )
            for index in range(max(1, config.replicas))
        ]
        pids = [server.process.pid for server in servers if server.process is not None]
        sampler = ResourceSampler(
            pids[0], interval_s=0.5 if config.duration_s <= 600 else 5.0, more_pids=tuple(pids[1:])
        )
        for server in servers:  # each replica straight, so every one has loaded every page
            asyncio.run(_warm_up(server.port, target, token))
        port, tls = servers[0].port, False
        if config.replicas:
            port, tls = (
                stack.enter_context(workshop_proxy([s.port for s in servers], out.with_suffix(".proxy.log"))),
                True,
            )
        time.sleep(_quiet_s(config, 2.0))  # the warm-up's memory settles before the baseline
        warm_up_log_problems = sum(server.log_problems() for server in servers)
        baseline = sampler.read()
        if log is not None:
            log.new_runs()  # the warm-up's runs are left out
        sampler.start()
        started, client_cpu_start = time.monotonic(), time.process_time()
        with (
            sampled.sampling(pids[0], sample_profile)
            if sample_profile is not None
            else contextlib.nullcontext()
        ):
            stats = asyncio.run(_drive(config, port, token, tls=tls))
        elapsed_s, client_cpu_s = time.monotonic() - started, time.process_time() - client_cpu_start
        sampler.stop()
        time.sleep(_quiet_s(config, 3.0))  # closed sessions' memory is freed before "after disconnect"
        after = sampler.read()
        log_problems = sum(server.log_problems() for server in servers) - warm_up_log_problems
    runs = script_runs(log.new_runs()) if log is not None else None
    result = {
        "config": asdict(config),
        "label": config.label,
        "elapsed_s": elapsed_s,
        "sessions_started": stats.sessions,
        "initial_load": summarise(stats.initial_ms).as_dict(),
        "rerun": summarise(stats.rerun_ms).as_dict(),
        # The same reruns split: those that reran one fragment (`st.fragment`), and the whole page.
        "rerun_fragment": summarise(stats.rerun_fragment_ms).as_dict(),
        "rerun_page": summarise(stats.rerun_page_ms).as_dict(),
        "navigate": summarise(stats.navigate_ms).as_dict(),
        "extra_script_runs": stats.extra_script_runs,
        "errors": dict(stats.errors),
        "error_count": sum(stats.errors.values()),
        "exception_elements": dict(stats.exceptions.most_common(10)),
        "exception_count": sum(stats.exceptions.values()),
        "isolation": {
            "widget_echo": _tally(stats.widget_echo),
            "answers": _tally(stats.answers),
            "text_markers": _tally(stats.text_markers),
            "mismatches": stats.widget_echo.mismatches
            + stats.answers.mismatches
            + stats.text_markers.mismatches,
        },
        "server": _resources(sampler.samples, baseline, after, config.sessions),
        "server_log_problems": log_problems,
        # The client shares the machine with the server: its CPU time is the server's loss.
        "client_cpu_s": client_cpu_s,
        "messages_in": stats.messages,
        "bytes_in": stats.bytes_in,
        "unsupported_widget_kinds": sorted(stats.unsupported_kinds),
        # The stateful tabs learners opened, by label -> how often.
        "opened": dict(stats.opened.most_common()),
        "script_runs": runs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    return result


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def describe(result: dict[str, Any]) -> str:
    """A few human-readable lines summarising one run."""
    lines = [f"{result['label']}: {result['sessions_started']} sessions in {result['elapsed_s']:.0f} s"]
    for name in ("initial_load", "rerun", "rerun_fragment", "rerun_page", "navigate"):
        if name not in result:  # results from before fragment reruns were counted apart
            continue
        s = result[name]
        lines.append(
            f"  {name:<14} n={s['count']:<5} p50={_fmt(s['p50_ms'])} ms  p95={_fmt(s['p95_ms'])} ms  "
            f"p99={_fmt(s['p99_ms'])} ms"
        )
    iso = result["isolation"]
    server = result["server"]
    lines += [
        f"  errors={result['errors'] or 0}  exception elements={result['exception_count']}"
        f"  server log problems={result['server_log_problems']}",
        "  isolation: "
        + ", ".join(
            f"{k} {v['checks']} checks/{v['mismatches']} mismatches"
            for k, v in iso.items()
            if isinstance(v, dict)
        )
        + f" (widget values not pushed back: {iso['widget_echo']['unchecked']})",
        f"  server RSS: baseline {server['baseline_rss_mb']:.0f} MB, peak {server['peak_rss_mb']:.0f} MB,"
        f" {server['rss_per_session_mb']:.2f} MB/session, after disconnect "
        f"{server['after_disconnect_rss_mb']:.0f} MB",
        f"  server CPU: {server['cpu_s']:.1f} s, mean {_fmt(server['cpu_mean_pct'])}% / peak "
        f"{_fmt(server['cpu_peak_pct'])}% of one core;"
        f" RSS slope {_fmt(server['rss_slope_mb_per_min'], 2)} MB/min; client CPU "
        f"{result['client_cpu_s']:.1f} s",
    ]
    if result.get("opened"):  # results from before learners opened tabs have none
        lines.append("  opened: " + ", ".join(f"{name} {count}" for name, count in result["opened"].items()))
    if result.get("script_runs"):
        lines.append("  script runs on the server's script threads (CPU ms p50 / mean, share, messages):")
        lines += [
            f"    {name:<28} n={f['runs']:<5} {f['cpu_ms_p50']:.1f} / {f['cpu_ms_mean']:.1f} ms,"
            f" {f['cpu_share']:.0%}, {f['messages_mean']:.0f} messages"
            for group in ("kinds", "pages")
            for name, f in result["script_runs"][group].items()
        ]
    if result["unsupported_widget_kinds"]:
        lines.append(
            f"  widgets the client leaves at their defaults: {', '.join(result['unsupported_widget_kinds'])}"
        )
    return "\n".join(lines)


LOAD_MODES = ("think", "burst")
CLASS_MODES = ("locks", "opens")


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=(*LOAD_MODES, *CLASS_MODES, "flood"), default="think")
    parser.add_argument("--target", choices=sorted(TARGETS), default="app")
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--duration-s", type=float, default=60.0, help="measured time after the ramp")
    parser.add_argument("--gc", choices=("on", "off"), default="on", help="runner.postScriptGC")
    parser.add_argument("--ramp-s", type=float, default=None, help="think: spread first loads over this long")
    parser.add_argument("--think-s", default="3,8", help="think: min,max seconds between actions")
    parser.add_argument(
        "--soak-minutes", type=float, default=0.0, help="soak: run this long, sessions come and go"
    )
    parser.add_argument(
        "--lifetime-s", type=float, default=None, help="reconnect as a new session after this long"
    )
    parser.add_argument("--timeout-s", type=float, default=30.0, help="per request")
    parser.add_argument("--replicas", type=int, default=0, help="N replicas behind HAProxy; 0: none")
    parser.add_argument(
        "--page", default="four-runs", help="locks, opens: url path of the page the class has open"
    )
    parser.add_argument(
        "--question", default=class_at_once.FOUR_RUNS_QUESTION, help="locks: the question locked"
    )
    parser.add_argument(
        "--returning", action="store_true", help="opens: browsers that keep a learner with work"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="JSON file (default bench/results/<label>.json)"
    )
    parser.add_argument(
        "--run-log",
        type=Path,
        default=None,
        help="log every script run here (JSON lines), report them by kind and page",
    )
    parser.add_argument(
        "--sample-profile",
        type=Path,
        default=None,
        help="py-spy samples the server into this raw file, and a summary",
    )
    return parser.parse_args(argv)


def _run_class(args: argparse.Namespace) -> None:
    outcome = class_at_once.run_class(
        args.mode, args.sessions, args.page, question_id=args.question, returning=args.returning
    )
    print(class_at_once.describe(outcome))
    save_figures(outcome, args.out)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: one run of the scenario `--mode` names."""
    argv = sys.argv[1:] if argv is None else argv
    mode = argparse.ArgumentParser(add_help=False)
    mode.add_argument("--mode")
    chosen, rest = mode.parse_known_args(argv)
    if chosen.mode == "flood":
        # Imported here: the flood drives its learners with this module's code (a cycle at import time).
        from bench import flood

        return flood.main(rest)
    args = _parse_args(argv)
    if args.mode in CLASS_MODES:
        _run_class(args)
        return 0
    throwaway_store("bench-run-load-")
    think_min, think_max = (float(x) for x in args.think_s.split(","))
    soak = args.soak_minutes > 0
    config = LoadConfig(
        target=args.target,
        sessions=args.sessions,
        mode=args.mode,
        duration_s=args.soak_minutes * 60 if soak else args.duration_s,
        post_script_gc=args.gc == "on",
        ramp_s=min(10.0, args.sessions * 0.2) if args.ramp_s is None else args.ramp_s,
        think_min_s=think_min,
        think_max_s=think_max,
        lifetime_s=args.lifetime_s if args.lifetime_s is not None else (300.0 if soak else 0.0),
        timeout_s=args.timeout_s,
        soak=soak,
        replicas=args.replicas,
    )
    out = args.out or RESULTS_DIR / f"{config.label}.json"
    print(describe(run(config, out, args.run_log, args.sample_profile)), flush=True)
    print(f"  figures: {out}")
    if args.sample_profile is not None:
        print(f"Where the server's CPU went while the learners ran ({args.sample_profile})")
        print(sampled.describe(sampled.summarise(sampled.read(args.sample_profile))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
