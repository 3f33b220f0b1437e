"""Where a loaded server's CPU goes, from py-spy's samples of the thread that holds the interpreter lock.

    python -m bench.run_load --sessions 100 --mode burst --duration-s 30 --gc off --sample-profile burst.raw
    python -m bench.sampled burst.raw --top 20

It is the benchmarks' one profiler. A tracing profiler (cProfile) counts every call, and its own cost
per call makes code made of many small calls look bigger than it is: in one burst it ranked
`copy.deepcopy`, all recursion, first by own time and gave it 8.7% of the script runs' time, where
samples find 2.8%. py-spy instead reads the server's stacks from outside, a hundred times a second;
with `--gil` it keeps only the thread holding the interpreter lock, so every sample is a slice of the
one core a Streamlit process can use. `run_load --sample-profile` attaches it to the server for the
learners' time alone (the warm-up is left out) and prints this summary: the script runs against the
event loop, who owns the code running at each sample, Streamlit's session-state bookkeeping, and the
functions of ours that take the most.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.harness.paths import REPO_ROOT

SAMPLES_PER_S = 100
# A script run's thread: its stack passes through the ScriptRunner's run of the script. py-spy 0.4.1
# names that frame `_run_script`, later versions `ScriptRunner._run_script`.
SCRIPT_RUNNER_FILE = "streamlit/runtime/scriptrunner/script_runner.py"
SCRIPT_FUNCTION = "_run_script"
SESSION_STATE = "streamlit/runtime/state/"
OUR_FOLDERS = ("ui/", "core/", "charts/", "store/", "pages/")
# Streamlit runs a page by its file's path, so py-spy names a page's frames by the bare file name.
OUR_FILES = frozenset({"Home.py", "serve.py", *(page.name for page in (REPO_ROOT / "pages").glob("*.py"))})
DATABASE = ("sqlalchemy/", "sqlite3/", "psycopg/", "psycopg_pool/")
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


@dataclass(frozen=True)
class Frame:
    """One frame of a sampled stack: its function and the file py-spy names it by."""

    function: str
    file: str

    @property
    def owner(self) -> str:
        """Whose code this is: Streamlit's, ours, the database layer's, or Python's and other libraries'."""
        if self.file.startswith("streamlit/"):
            return "Streamlit"
        if self.file.startswith(OUR_FOLDERS) or self.file in OUR_FILES:
            return "ours"
        if self.file.startswith(DATABASE):
            return "database"
        return "other"

    def __str__(self) -> str:
        return f"{self.function} ({self.file})"


@dataclass(frozen=True)
class Stack:
    """A sampled stack, outermost frame first, and how many samples found it."""

    frames: tuple[Frame, ...]
    samples: int

    @property
    def in_a_script_run(self) -> bool:
        """Whether the sample is of a script thread (the app's code and the elements it builds)."""
        return any(
            frame.file == SCRIPT_RUNNER_FILE and frame.function.rpartition(".")[2] == SCRIPT_FUNCTION
            for frame in self.frames
        )

    @property
    def in_session_state_bookkeeping(self) -> bool:
        """Whether Streamlit's session-state code was running for itself, not calling one of our callbacks."""
        inner = next((i for i, frame in enumerate(self.frames) if frame.file.startswith(SESSION_STATE)), None)
        return inner is not None and all(frame.owner != "ours" for frame in self.frames[inner:])


def _frame(text: str) -> Frame:
    found = _FRAME.match(text)
    if found is None:
        return Frame(function=text, file="")
    return Frame(function=found["function"], file=found["file"])


def parse(lines: Iterable[str]) -> list[Stack]:
    """py-spy's raw output (one `frame;frame;... count` line per distinct stack) as stacks, the process
    and thread frames py-spy may put first left out; a line that is not a stack is skipped."""
    stacks = []
    for line in lines:
        text, _, count = line.rstrip("\n").rpartition(" ")
        if not text or not count.isdigit():
            continue
        names = [name for name in text.split(";") if not name.startswith(("process ", "thread "))]
        if names:
            stacks.append(Stack(frames=tuple(_frame(name) for name in names), samples=int(count)))
    return stacks


def read(path: Path) -> list[Stack]:
    """The stacks in a py-spy raw file (a command line it quotes may hold bytes that are not UTF-8)."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        return parse(lines)


@dataclass(frozen=True)
class Summary:
    """Shares of all samples (0 to 1) and the functions behind them."""

    samples: int
    script_runs: float
    by_owner: dict[str, float]  # whose code was running at the sample, over all samples
    session_state: float  # Streamlit's session-state code running for itself, in script runs
    without_ours: float  # no function of ours on the stack: Streamlit on its own (loop, run set-up)
    # Our functions by the samples each was the innermost of ours for: its own work and the Streamlit and
    # library code it called, so a form is charged for the widgets it draws.
    ours: list[tuple[str, float]]
    leaves: list[tuple[str, float]]  # the functions running at the sample, most first


def summarise(stacks: list[Stack], top: int = 15) -> Summary:
    """What share of the samples each part of the server took; ValueError if there are none."""
    total = sum(stack.samples for stack in stacks)
    if total == 0:
        raise ValueError("The profile holds no samples: was the server busy while py-spy ran?")
    owners: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    script = bookkeeping = 0
    for stack in stacks:
        leaf = stack.frames[-1]
        owners[leaf.owner] += stack.samples
        leaves[str(leaf)] += stack.samples
        innermost = next((frame for frame in reversed(stack.frames) if frame.owner == "ours"), None)
        ours[str(innermost) if innermost is not None else ""] += stack.samples
        if stack.in_a_script_run:
            script += stack.samples
            bookkeeping += stack.samples if stack.in_session_state_bookkeeping else 0
    return Summary(
        samples=total,
        script_runs=script / total,
        by_owner={owner: count / total for owner, count in owners.most_common()},
        session_state=bookkeeping / total,
        without_ours=ours.pop("", 0) / total,
        ours=[(name, count / total) for name, count in ours.most_common(top)],
        leaves=[(name, count / total) for name, count in leaves.most_common(top)],
    )


def describe(summary: Summary) -> str:
    """The summary as text, every share a percentage of all samples."""
    # Only shares: with --nonblocking py-spy misses some samples, so a count is no measure of CPU time.
    lines = [
        f"{summary.samples} samples of the thread holding the interpreter lock",
        f"  script runs {summary.script_runs:.1%}, "
        f"the event loop and other threads {1 - summary.script_runs:.1%}",
        "  running at the sample: "
        + ", ".join(f"{owner} {share:.1%}" for owner, share in summary.by_owner.items()),
        f"  Streamlit's session-state bookkeeping in script runs: {summary.session_state:.1%}",
        f"  no function of ours on the stack: {summary.without_ours:.1%}",
        "  the innermost of our functions (its own work and the code it called):",
        *(f"    {share:6.1%}  {name}" for name, share in summary.ours),
        "  running at the sample:",
        *(f"    {share:6.1%}  {name}" for name, share in summary.leaves),
    ]
    return "\n".join(lines)


@contextmanager
def sampling(
    pid: int, out: Path, *, py_spy: str | None = None, start_timeout_s: float = 20.0
) -> Iterator[None]:
    """py-spy samples process `pid` into `out` (raw format) while the block runs; RuntimeError, with
    py-spy's own words, if it is not installed or cannot read the process."""
    executable = py_spy or shutil.which("py-spy")
    if executable is None:
        raise RuntimeError("py-spy is not installed: pip install -r requirements-bench.txt")
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.with_suffix(".py-spy.log")
    command = [
        executable, "record", "--pid", str(pid), "--gil", "--nonblocking",
        "--rate", str(SAMPLES_PER_S), "--format", "raw", "--output", str(out),
    ]  # fmt: skip
    with log.open("wb") as sink:
        recorder = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait_until_sampling(recorder, log, start_timeout_s)
        yield
    finally:
        if recorder.poll() is None:
            recorder.send_signal(signal.SIGINT)  # py-spy writes its file when interrupted
            try:
                recorder.wait(timeout=60)
            except subprocess.TimeoutExpired:
                recorder.kill()
                recorder.wait()
    if not out.exists():
        raise RuntimeError(f"py-spy wrote no profile: {log.read_text(errors='replace').strip()}")


def _wait_until_sampling(recorder: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        said = log.read_text(errors="replace")
        if "Sampling process" in said:
            return
        if recorder.poll() is not None:
            raise RuntimeError(f"py-spy could not sample the server: {said.strip()}")
        time.sleep(0.05)
    recorder.kill()
    recorder.wait()
    raise RuntimeError(f"py-spy did not start sampling within {timeout_s:g} s")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: print the summary of a py-spy raw file."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("profile", type=Path, help="py-spy's raw output (run_load --sample-profile)")
    parser.add_argument("--top", type=int, default=15, help="how many functions each list shows")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(describe(summarise(read(args.profile), args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
