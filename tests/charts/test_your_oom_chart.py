"""Your OOM's chart: six bars (two steps × three phases) in GiB and the capacity rule, titled."""

from __future__ import annotations

from charts.your_oom import steps_chart, steps_frame
from core.memory.first_oom import step_peaks
from core.memory.verdict import capped
from core.run_a.scenario import load_content


def test_run_a_steps_against_its_cap():
    peaks = step_peaks(load_content().scenario.setup, capped(24))
    frame = steps_frame(peaks)
    assert len(frame) == 6 and set(frame["step"]) == {"Step 1", "Step 2"}
    # step 2's forward carries Adam's state: about 14.7 GiB more than step 1's
    forward = frame[frame["phase"] == "the forward pass"].set_index("step")["gib"]
    assert forward["Step 2"] - forward["Step 1"] > 14
    spec = steps_chart(peaks, line_bytes=24 * 2**30, title="Run A").to_dict()
    assert spec["title"] == "Run A"
    assert spec["layer"][0]["encoding"]["y"]["title"].endswith("(GiB)")  # binary units, as PyTorch reports
