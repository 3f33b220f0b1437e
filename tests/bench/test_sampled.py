"""py-spy's samples of a loaded server, summarised (`bench/sampled.py`), and the recorder run_load starts
around the learners (`run_load --sample-profile`), driven here by a stand-in for py-spy."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bench import sampled
from bench.run_load import LoadConfig, run
from bench.sampled import Frame, describe, parse, read, sampling, summarise

SCRIPT = "_bootstrap (threading.py:1002);_run_script (streamlit/runtime/scriptrunner/script_runner.py:443)"
# 100 samples: 65 in script runs, 35 on the event loop.
RAW = [
    # A radio working out the session's filtered state for itself: Streamlit's bookkeeping.
    f'process 7:"python -m streamlit run Home.py";{SCRIPT};draw (four_runs.py:43);'
    "radio (streamlit/elements/widgets/radio.py:300);"
    "filtered_state (streamlit/runtime/state/session_state.py:709) 30",
    # Session state calling one of our callbacks, which writes to the store: not bookkeeping.
    f"{SCRIPT};on_script_will_rerun (streamlit/runtime/state/session_state.py:900);"
    "_submit (ui/lock.py:20);add_answer (store/learner_store.py:100);"
    "execute (sqlalchemy/engine/base.py:1400) 20",
    f"{SCRIPT};draw (four_runs.py:43);_shown (ui/tables.py:40);_shown (ui/tables.py:41) 10",
    f"{SCRIPT};draw (four_runs.py:43);deepcopy (copy.py:128) 5",
    "run_forever (asyncio/base_events.py:600);_run_once (asyncio/base_events.py:1900);"
    "write (streamlit/runtime/app_session.py:500) 35",
    "not a stack",
    "",
]


def test_a_frame_is_owned_by_streamlit_us_the_database_layer_or_others():
    assert Frame("radio", "streamlit/elements/widgets/radio.py").owner == "Streamlit"
    assert Frame("lock_form", "ui/lock.py").owner == "ours"
    assert Frame("draw", "memory_budget.py").owner == "ours"  # a page, named by its bare file name
    assert Frame("<module>", "Home.py").owner == "ours"
    assert Frame("execute", "sqlalchemy/engine/base.py").owner == "database"
    assert Frame("deepcopy", "copy.py").owner == "other"


def test_raw_lines_become_stacks_without_process_frames():
    stacks = parse(RAW)
    assert [stack.samples for stack in stacks] == [30, 20, 10, 5, 35]
    first = stacks[0]
    assert first.frames[0] == Frame("_bootstrap", "threading.py")
    assert first.frames[-1] == Frame("filtered_state", "streamlit/runtime/state/session_state.py")
    assert [stack.in_a_script_run for stack in stacks] == [True, True, True, True, False]
    assert [stack.in_session_state_bookkeeping for stack in stacks] == [True, False, False, False, False]


def test_a_script_run_is_found_by_the_frame_name_of_either_py_spy_version():
    # py-spy 0.4.1 names the frame by its function, 0.4.3 by its class and function.
    qualified = SCRIPT.replace(";_run_script (", ";ScriptRunner._run_script (")
    other_file = SCRIPT.replace("script_runner.py", "exec_code.py")
    stacks = parse([f"{qualified};draw (four_runs.py:43) 3", f"{other_file};draw (four_runs.py:43) 2"])
    assert [stack.in_a_script_run for stack in stacks] == [True, False]


def test_the_summary_splits_the_samples_by_thread_owner_and_function():
    summary = summarise(parse(RAW))
    assert summary.samples == 100
    assert summary.script_runs == pytest.approx(0.65)
    # Running at the sample: the radio's 30 and the loop's 35 are Streamlit's; the store's 20 the
    # database layer's; our table helper 10; the deep copy 5.
    assert summary.by_owner == pytest.approx(
        {"Streamlit": 0.65, "database": 0.20, "ours": 0.10, "other": 0.05}
    )
    assert summary.session_state == pytest.approx(0.30)
    assert summary.without_ours == pytest.approx(0.35)  # the event loop's 35
    # Each sample is charged to the innermost of our functions: the page's draw for the radio it drew
    # (30) and the deep copy it made (5), the store's method for the database's work, the table helper
    # for its own (recursive) work.
    assert summary.ours == [
        ("draw (four_runs.py)", pytest.approx(0.35)),
        ("add_answer (store/learner_store.py)", pytest.approx(0.20)),
        ("_shown (ui/tables.py)", pytest.approx(0.10)),
    ]
    assert summary.leaves[0] == ("write (streamlit/runtime/app_session.py)", pytest.approx(0.35))
    text = describe(summary)
    assert "script runs 65.0%, the event loop and other threads 35.0%" in text
    assert "session-state bookkeeping in script runs: 30.0%" in text
    assert "no function of ours on the stack: 35.0%" in text


def test_a_profile_without_samples_is_refused():
    with pytest.raises(ValueError, match="no samples"):
        summarise(parse(["not a stack"]))


def _stand_in(tmp_path: Path, body: str) -> str:
    """An executable that py-spy's command line starts instead of py-spy."""
    script = tmp_path / "py-spy"
    script.write_text(f"#!{sys.executable}\nimport signal, sys, time\nargs = sys.argv[1:]\n{body}")
    script.chmod(0o755)
    return str(script)


RECORDS_UNTIL_INTERRUPTED = """
out = args[args.index("--output") + 1]
open(out + ".args", "w").write(" ".join(args))
print("py-spy> Sampling process 100 times a second. Press Control-C to exit.", flush=True)

def stop(*_):
    with open(out, "w") as profile:
        profile.write("_run_script (streamlit/runtime/scriptrunner/script_runner.py:1);")
        profile.write("draw (ui/frame.py:2) 7\\n")
    sys.exit(0)

signal.signal(signal.SIGINT, stop)
while True:
    time.sleep(0.02)
"""


def test_the_recorder_samples_the_process_while_the_block_runs_and_writes_on_interrupt(tmp_path: Path):
    out = tmp_path / "burst.raw"
    with sampling(os.getpid(), out, py_spy=_stand_in(tmp_path, RECORDS_UNTIL_INTERRUPTED)):
        assert not out.exists()  # nothing is written before the block ends
    args = Path(f"{out}.args").read_text().split()
    assert args[:3] == ["record", "--pid", str(os.getpid())]
    assert {"--gil", "--nonblocking"} <= set(args)
    assert args[args.index("--rate") + 1] == "100" and args[args.index("--format") + 1] == "raw"
    assert [stack.samples for stack in read(out)] == [7]


def test_a_recorder_that_cannot_read_the_process_says_why(tmp_path: Path):
    refuses = 'print("Error: Permission Denied (os error 1)", flush=True)\nsys.exit(1)\n'
    with pytest.raises(RuntimeError, match="could not sample the server: Error: Permission Denied"):
        with sampling(os.getpid(), tmp_path / "burst.raw", py_spy=_stand_in(tmp_path, refuses)):
            pytest.fail("the block must not run without a recorder")


def test_without_py_spy_the_recorder_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sampled.shutil, "which", lambda _name: None)
    with pytest.raises(RuntimeError, match="pip install -r requirements-bench.txt"):
        with sampling(os.getpid(), tmp_path / "burst.raw"):
            pytest.fail("the block must not run without a recorder")


def test_a_sampled_profile_of_several_replicas_is_refused(tmp_path: Path):
    config = LoadConfig(
        target="hello", sessions=2, mode="burst", duration_s=1.0, post_script_gc=False, replicas=2
    )
    with pytest.raises(ValueError, match="sampled profile is taken of one server"):
        run(config, tmp_path / "load.json", sample_profile=tmp_path / "burst.raw")
