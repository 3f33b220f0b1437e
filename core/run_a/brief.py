"""Run A's brief, computed: its weights and each phase's peak, the phase table, and the H200's grid of
Run A's shape against the estimate."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from core import lessons
from core.memory import to_gb
from core.memory.reference import run_a_measurements
from core.memory.timeline import PHASE_LABELS, PHASES, StepTimeline, step_timeline
from core.run_a.scenario import load_content, run_a_timeline
from core.units import capacity_label


@dataclass(frozen=True)
class BriefFigures:
    """The numbers that turn Run A's brief into a hypothesis."""

    parameter_count: int
    weights_gb: float
    device_gb: float
    device_gib: float
    other_gb: float  # what the weights leave unexplained: device minus weights
    forward_peak_gb: float
    backward_peak_gb: float
    activations_gb: float  # saved by the blocks, all still held when backward starts
    loss_gb: float  # the loss's FP32 log-softmax and, at backward's start, its two gradients
    overhead_gb: float  # the allocator reserve the cap also has to hold
    failure_where: str

    @property
    def device(self) -> str:
        """The device as every page writes it: '24 GiB (25.77 GB)'."""
        return capacity_label(round(self.device_gib * 2**30))

    @property
    def backward_added_gb(self) -> float:
        """What backward asks for on top of forward's peak."""
        return self.backward_peak_gb - self.forward_peak_gb


@cache
def brief_figures() -> BriefFigures:
    """Run A's brief, worked out once per process: weights, what they leave unexplained, each pass's peak."""
    timeline = run_a_timeline()
    failure = timeline.failure
    if failure is None:
        raise ValueError("Run A's configuration no longer fails; check data/run_a.json.")
    start = timeline.points[0]
    backward = timeline.peak_point(iteration=1, phase="backward")
    forward_end = next(p for p in timeline.points if p.phase == "forward" and p.block == timeline.layers)
    return BriefFigures(
        parameter_count=timeline.setup.parameters,
        weights_gb=to_gb(start.live.parameters_bytes),
        device_gb=timeline.device_gb,
        device_gib=timeline.capacity.total_gib,
        other_gb=timeline.device_gb - to_gb(start.live.parameters_bytes),
        forward_peak_gb=timeline.phase_peak_gb(iteration=1, phase="forward"),
        backward_peak_gb=backward.total_gb,
        activations_gb=to_gb(forward_end.live.activations_bytes),
        loss_gb=to_gb(backward.live.activations_bytes - forward_end.live.activations_bytes),
        overhead_gb=to_gb(timeline.capacity.overhead_bytes),
        failure_where=failure.where(timeline.layers),
    )


def brief_sentence() -> str:
    """Run A in one sentence, with the figures every page shows (Home, Four runs, Run A, the report)."""
    brief = brief_figures()
    return lessons.sentence(
        "run_a",
        "brief",
        weights_gb=brief.weights_gb,
        device=brief.device,
        forward_peak_gb=brief.forward_peak_gb,
        failure_where=brief.failure_where,
        backward_peak_gb=brief.backward_peak_gb,
    )


def _phase_outcome(timeline: StepTimeline, iteration: int, phase: str) -> str:
    failure = timeline.failure
    if failure is not None and (failure.iteration, failure.phase) == (iteration, phase):
        return "over the device: the run dies here"
    if not any(p.iteration == iteration and p.phase == phase for p in timeline.ran):
        return "never reached"
    return "fits"


def phase_rows(timeline: StepTimeline, *, iteration: int = 1) -> list[dict[str, str]]:
    """One row per phase of an iteration: what is live at its peak, and how it ends (what happens in each
    phase is told apart, in `RunAContent.phases`, to keep the table narrow)."""
    rows = []
    for phase in PHASES:
        peak = timeline.peak_point(iteration=iteration, phase=phase)
        rows.append(
            {
                "Phase": PHASE_LABELS[phase],
                "Live at its peak": ", ".join(share.label for share in peak.live.shares()),
                "Peak needed, reserve in (GB)": f"{peak.total_gb:.2f}",
                "Outcome": _phase_outcome(timeline, iteration, phase),
            }
        )
    return rows


def estimated_outcome(timeline: StepTimeline) -> str:
    """The estimate's outcome in run_a.csv's words: "ok", or "step N forward/backward/optimizer.step"."""
    failure = timeline.failure
    if failure is None:
        return "ok"
    phase = "optimizer.step" if failure.phase == "step" else failure.phase
    return f"step {failure.iteration} {phase}"


@dataclass(frozen=True)
class MapCell:
    """One run of the H200's Run A grid: where it died, and where the phase model says it dies."""

    batch: int
    seq_len: int
    attention: str
    measured: str
    estimated: str


@cache
def outcome_map() -> tuple[MapCell, ...]:
    """Run A's shape at every batch × sequence the H200 ran with Adam on the scenario's cap, both ways."""
    scenario = load_content().scenario
    base = scenario.setup
    cells = []
    for row in run_a_measurements():
        if (
            row.optim != base.optimizer
            or row.cap_gib != scenario.device_gib
            or row.layers != base.model.layers
        ):
            continue
        model = replace(base.model, positions=max(base.model.positions, row.seq))
        setup = replace(base, model=model, batch=row.batch, seq_len=row.seq, attention=row.attn)
        timeline = step_timeline(setup, capacity=scenario.capacity)
        cells.append(MapCell(row.batch, row.seq, row.attn, row.outcome, estimated_outcome(timeline)))
    return tuple(cells)


def map_agreement() -> tuple[int, int]:
    """How many cells of the map the estimate places in the same phase as the H200, out of how many."""
    cells = outcome_map()
    return sum(c.measured == c.estimated for c in cells), len(cells)
