"""Start `streamlit run` on a free loopback port and sample its memory and CPU.

The server is bound to 127.0.0.1 and told its address explicitly: with the address set,
Streamlit skips its lookup of the machine's external IP, so a benchmark run makes no
connection beyond this machine. It runs from the repository root, so the project's
`.streamlit/config.toml` applies to the app and to the hello demo alike.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from store.engine import DATA_DIR_ENV, DATABASE_URL_ENV
from tests.harness.load_client import LOOPBACK
from tests.harness.paths import REPO_ROOT


def throwaway_store(prefix: str) -> None:
    """Give the servers this process starts an empty embedded store of their own, removed at exit,
    unless the caller named one ($LAB_DATABASE_URL or $LAB_DATA_DIR): otherwise every run would add
    its learners to the developer's `.lab-data/`, and a run's figures would depend on the runs before."""
    if os.environ.get(DATABASE_URL_ENV) or os.environ.get(DATA_DIR_ENV):
        return
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ[DATA_DIR_ENV] = folder


def free_port() -> int:
    """A TCP port on the loopback address that nothing is listening on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Sample:
    """One reading of the server process."""

    t_s: float
    rss_bytes: int
    cpu_s: float


@dataclass
class ResourceSampler:
    """Background thread reading the server's RSS and CPU time every `interval_s` seconds."""

    pid: int
    interval_s: float = 0.5
    # More servers read as one (replicas behind a proxy): their RSS and CPU are added up.
    more_pids: tuple[int, ...] = ()
    samples: list[Sample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def read(self) -> Sample:
        """One reading now (RSS of the server and any children; user + system CPU seconds)."""
        family = []
        for pid in (self.pid, *self.more_pids):
            process = psutil.Process(pid)
            family += [process, *process.children(recursive=True)]
        rss = cpu = 0.0
        for member in family:
            try:
                rss += member.memory_info().rss
                times = member.cpu_times()
                cpu += times.user + times.system
            except psutil.NoSuchProcess:
                continue
        return Sample(t_s=time.monotonic(), rss_bytes=int(rss), cpu_s=cpu)

    def start(self) -> None:
        """Begin sampling in the background."""
        self._thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling and take one last reading."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._append()

    def _append(self) -> None:
        try:
            self.samples.append(self.read())
        except psutil.NoSuchProcess:
            pass

    def _run(self) -> None:
        while not self._stop.is_set():
            self._append()
            self._stop.wait(self.interval_s)


@dataclass
class StreamlitServer:
    """A `streamlit run` child process on a free loopback port, with its log in `log_path`."""

    script: Path
    post_script_gc: bool
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    # The module behind `python -m`: "streamlit", or "bench.timed_server" to time each run.
    launcher: str = "streamlit"
    startup_timeout_s: float = 90.0
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        """The command line that starts the server."""
        return [
            sys.executable, "-m", self.launcher, "run", str(self.script),
            "--server.address", LOOPBACK,
            "--server.port", str(self.port),
            "--server.headless", "true",
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
            # Hidden option (absent from `streamlit config show`), accepted on the CLI.
            "--runner.postScriptGC", "true" if self.post_script_gc else "false",
        ]  # fmt: skip

    def __enter__(self) -> StreamlitServer:
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.command(),
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.env},
        )
        log.close()
        self._wait_healthy()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)

    def _wait_healthy(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"http://{LOOPBACK}:{self.port}/_stcore/health"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with code {self.process.returncode}; see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (loopback only)
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        raise RuntimeError(
            f"streamlit did not answer {url} within {self.startup_timeout_s:g} s; see {self.log_path}"
        )

    def log_problems(self) -> int:
        """How many tracebacks and error lines the server has logged so far."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return sum(1 for line in text.splitlines() if "Traceback" in line or " ERROR " in line)
