"""Part C: the same GPUs split three ways into data (DP), tensor (TP) and pipeline (PP) parallel groups.

Per GPU and per step:
- compute: 6 x parameters x tokens of the global batch, shared by every GPU, at an efficiency of peak;
- DP: a ring all-reduce of this GPU's gradient shard (1/(TP x PP) of the model) across DP replicas,
  1.5 times that volume under ZeRO-3, which gathers weights again (Rajbhandari et al. 2020);
- TP: 4 all-reduces of one micro-batch's activations (batch x sequence x hidden) per layer held,
  2 in the forward and 2 in the backward pass (Shoeybi et al. 2019);
- pipeline bubble: (PP - 1) / micro-batches of the compute time (see `pipeline`).
Compute and communication do not overlap. TP groups fill a node first; a group larger than a node,
and every DP group spread over nodes, runs at the fabric's per-GPU bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require
from core.gpus import bytes_per_value, peak_tflops
from core.models import parameter_count, preset
from core.scaling.cases import LayoutCase
from core.scaling.fleets import Fleet
from core.scaling.pipeline import bubble_ms
from core.scaling.throughput import compute_ms, ring_allreduce_ms

LAYOUT_KEYS = ("within", "cross", "pipeline")
TRAIN_FLOP_PER_PARAM_TOKEN = 6.0
TP_ALLREDUCES_PER_LAYER = 4
ZERO3_TRAFFIC_FACTOR = 1.5


@dataclass(frozen=True)
class Layout:
    """A factorisation of the fleet: DP x TP x PP = every GPU."""

    key: str
    dp: int
    tp: int
    pp: int

    @property
    def label(self) -> str:
        """Short name such as 'TP8 · PP1 · DP8'."""
        return f"TP{self.tp} · PP{self.pp} · DP{self.dp}"


def layouts(fleet: Fleet) -> dict[str, Layout]:
    """TP inside each node; TP over two nodes; TP inside a node with two pipeline stages."""
    per_node, total = fleet.gpus_per_node, fleet.total_gpus
    require(
        fleet.nodes >= 2 and fleet.nodes % 2 == 0,
        "Comparing layouts needs an even number of nodes, at least two.",
    )
    return {
        "within": Layout("within", dp=total // per_node, tp=per_node, pp=1),
        "cross": Layout("cross", dp=total // (2 * per_node), tp=2 * per_node, pp=1),
        "pipeline": Layout("pipeline", dp=total // (2 * per_node), tp=per_node, pp=2),
    }


@dataclass(frozen=True)
class LayoutTiming:
    """Where one step's time goes in one layout."""

    layout: Layout
    tp_crosses_nodes: bool
    compute_ms: float
    dp_communication_ms: float
    tp_communication_ms: float
    bubble_ms: float

    @property
    def exposed_overhead_ms(self) -> float:
        """Everything on top of compute."""
        return self.dp_communication_ms + self.tp_communication_ms + self.bubble_ms

    @property
    def step_ms(self) -> float:
        """Compute plus every overhead, back to back."""
        return self.compute_ms + self.exposed_overhead_ms

    @property
    def tp_link(self) -> str:
        """Where the tensor-parallel group talks, in words: 'inside a node' or 'between nodes'."""
        return "between nodes" if self.tp_crosses_nodes else "inside a node"


def layout_timing(
    *,
    fleet: Fleet,
    layout: Layout,
    parameters: float,
    layers: int,
    hidden_size: int,
    global_batch: int,
    seq_len: int,
    micro_batch_count: int,
    zero_stage: int,
    efficiency: float,
    dtype: str,
) -> LayoutTiming:
    """Compute, DP and TP communication and bubble time of one training step in `layout`."""
    require(
        layout.dp * layout.tp * layout.pp == fleet.total_gpus,
        f"DP x TP x PP must use all {fleet.total_gpus} GPUs.",
    )
    require(layers % layout.pp == 0, f"{layers} layers do not split evenly into {layout.pp} pipeline stages.")
    require(zero_stage in (0, 1, 2, 3), "The ZeRO stage must be 0, 1, 2 or 3.")
    require(
        min(parameters, layers, hidden_size, global_batch, seq_len, micro_batch_count) > 0,
        "Model and batch sizes must be positive.",
    )
    value_bytes = bytes_per_value(dtype)
    busy_ms = compute_ms(
        flop=TRAIN_FLOP_PER_PARAM_TOKEN * parameters * global_batch * seq_len / fleet.total_gpus,
        peak_tflops=peak_tflops(fleet.card, dtype),
        efficiency=efficiency,
    )
    replica_gpus = layout.tp * layout.pp
    dp_ms = ring_allreduce_ms(
        payload_bytes=parameters / replica_gpus * value_bytes,
        workers=layout.dp,
        link_gb_per_s=fleet.link_gb_per_s(
            spans_nodes=fleet.nodes > 1
        ),  # a DP ring over the whole fleet leaves the node
    ) * (ZERO3_TRAFFIC_FACTOR if zero_stage == 3 else 1.0)
    micro_batch_samples = global_batch / (layout.dp * micro_batch_count)
    tp_crosses_nodes = layout.tp > fleet.gpus_per_node
    tp_ms = (
        (layers // layout.pp)
        * micro_batch_count
        * TP_ALLREDUCES_PER_LAYER
        * ring_allreduce_ms(
            payload_bytes=micro_batch_samples * seq_len * hidden_size * value_bytes,
            workers=layout.tp,
            link_gb_per_s=fleet.link_gb_per_s(spans_nodes=tp_crosses_nodes),
        )
    )
    return LayoutTiming(
        layout=layout,
        tp_crosses_nodes=tp_crosses_nodes,
        compute_ms=busy_ms,
        dp_communication_ms=dp_ms,
        tp_communication_ms=tp_ms,
        bubble_ms=bubble_ms(stages=layout.pp, micro_batches=micro_batch_count, busy_ms=busy_ms),
    )


def fastest_layout(timings: dict[str, LayoutTiming]) -> str:
    """The key of the layout with the shortest step."""
    require(bool(timings), "There are no layouts to compare.")
    return min(timings, key=lambda key: timings[key].step_ms)


OVERHEADS = {
    "dp_communication_ms": "DP communication",
    "tp_communication_ms": "TP communication",
    "bubble_ms": "Pipeline bubble",
}


def layout_rows(timings: dict[str, LayoutTiming]) -> list[dict[str, object]]:
    """One table row per layout: where TP runs and each part of the step, in ms."""
    return [
        {
            "Layout": t.layout.label,
            "TP link": t.tp_link,
            "Compute (ms)": t.compute_ms,
            **{f"{label} (ms)": getattr(t, field) for field, label in OVERHEADS.items()},
            "Step (ms)": t.step_ms,
        }
        for t in timings.values()
    ]


def overhead_rows(timings: dict[str, LayoutTiming]) -> list[dict[str, object]]:
    """Long-form rows for a stacked bar: one per layout and kind of overhead."""
    return [
        {"Layout": t.layout.label, "Overhead": label, "Time (ms)": getattr(t, field), "Step (ms)": t.step_ms}
        for t in timings.values()
        for field, label in OVERHEADS.items()
    ]


def timing_record(timing: LayoutTiming) -> dict[str, object]:
    """A layout's figures as a plain JSON object, for a snapshot."""
    return {
        "layout": timing.layout.label,
        "tp_crosses_nodes": timing.tp_crosses_nodes,
        "compute_ms": timing.compute_ms,
        "dp_communication_ms": timing.dp_communication_ms,
        "tp_communication_ms": timing.tp_communication_ms,
        "bubble_ms": timing.bubble_ms,
        "step_ms": timing.step_ms,
    }


@dataclass(frozen=True)
class LayoutContrast:
    """Part C's result: every layout, the within-node baseline and the chosen alternative."""

    timings: dict[str, LayoutTiming]
    alternative: str

    @property
    def baseline(self) -> LayoutTiming:
        """Tensor parallel inside each node."""
        return self.timings["within"]

    @property
    def result(self) -> LayoutTiming:
        """The alternative the learner selected."""
        return self.timings[self.alternative]

    @property
    def outcome(self) -> str:
        """The prediction option that came true: the layout with the shortest step."""
        return fastest_layout(self.timings)

    def layout_label(self, key: str) -> str:
        """The short name of layout `key` (the alternative picker's labels; a bound method pickles)."""
        return self.timings[key].layout.label


def layout_contrast(
    *, fleet: Fleet, case: LayoutCase, alternative: str, efficiency: float, dtype: str
) -> LayoutContrast:
    """Time all three layouts of `case`'s model on `fleet`; `alternative` is 'cross' or 'pipeline'."""
    require(alternative in LAYOUT_KEYS[1:], "The alternative layout must be 'cross' or 'pipeline'.")
    spec = preset(case.model)
    timings = {
        key: layout_timing(
            fleet=fleet,
            layout=layout,
            parameters=parameter_count(spec),
            layers=spec.layers,
            hidden_size=spec.hidden,
            global_batch=case.global_batch,
            seq_len=case.seq_len,
            micro_batch_count=case.micro_batch_count,
            zero_stage=case.zero_stage,
            efficiency=efficiency,
            dtype=dtype,
        )
        for key, layout in layouts(fleet).items()
    }
    return LayoutContrast(timings=timings, alternative=alternative)
