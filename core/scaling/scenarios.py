"""Fleets, track models, the four training tracks and the fixed cases, from `data/scaling_tracks.json`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core import validate
from core.datafiles import positive_number, read_json, require
from core.gpus import Gpu, check_dtype, gpu
from core.memory import ZERO_STAGES, optimizer_state_values
from core.memory.settings import AttentionKind, Recomputation, precision
from core.models import preset

FILE = "scaling_tracks.json"
PARTS = ("A", "B", "C", "D", "E")
WORKER_COUNTS_PER_TRACK = 4
# Training = forward + backward, and backward costs about twice the forward pass.
TRAIN_TO_FORWARD_FLOP = 3.0
# Forward cost of a dense transformer: one multiply-add per parameter per token (Kaplan et al. 2020).
FORWARD_FLOP_PER_PARAM_TOKEN = 2.0


@dataclass(frozen=True)
class Fleet:
    """A training cluster: nodes of identical GPUs, a fast link inside a node and a slower one between."""

    key: str
    name: str
    gpu_name: str
    gpus_per_node: int
    nodes: int
    intra_node_link: str
    intra_node_gb_per_s: float
    inter_node_link: str
    inter_node_gb_per_s: float
    intra_node_latency_us: float
    inter_node_latency_us: float
    source: str

    @property
    def total_gpus(self) -> int:
        """Every GPU in the fleet."""
        return self.gpus_per_node * self.nodes

    @property
    def card(self) -> Gpu:
        """The GPU preset every node holds."""
        return gpu(self.gpu_name)

    def link_gb_per_s(self, *, spans_nodes: bool) -> float:
        """Per-GPU bandwidth one way: the node link, or the fabric once a group leaves the node."""
        return self.inter_node_gb_per_s if spans_nodes else self.intra_node_gb_per_s

    def latency_us(self, *, spans_nodes: bool) -> float:
        """The fixed cost of one hop of a collective (its α): the node link's, or the fabric's."""
        return self.inter_node_latency_us if spans_nodes else self.intra_node_latency_us


@dataclass(frozen=True)
class TrackModel:
    """The model a track trains upstream: its size and training cost per sample."""

    key: str
    name: str
    parameters: float
    train_gflop_per_sample: float
    kernels_per_step: int
    source: str


@dataclass(frozen=True)
class Convergence:
    """An illustrative batch curve: steps to target = minimum_steps x (1 + critical_batch / batch)."""

    minimum_steps: float
    critical_batch: float


@dataclass(frozen=True)
class StragglerPolicy:
    """Illustrative effect of dropping slow workers: shorter steps, but more of them."""

    step_time_multiplier: float
    work_multiplier: float


@dataclass(frozen=True)
class Track:
    """One training context: what it deploys to, what it trains upstream and on which fleet."""

    key: str
    label: str
    deployment_target: str
    model: TrackModel
    fleet: Fleet
    worker_counts: tuple[int, ...]
    local_batch: int
    global_batch: int
    model_parallel: bool
    note: str
    convergence: Convergence
    straggler: StragglerPolicy

    @property
    def base_workers(self) -> int:
        """The smallest pool, the baseline every speedup is measured against."""
        return self.worker_counts[0]

    @property
    def pools(self) -> tuple[int, ...]:
        """The numbers of the larger pools, 1 for the next size up."""
        return tuple(range(1, len(self.worker_counts)))

    def pool_workers(self, pool: int) -> int:
        """Workers in larger pool number `pool` (1 = the next size up)."""
        require(
            1 <= pool < len(self.worker_counts),
            f"Pick a larger pool between 1 and {len(self.worker_counts) - 1}.",
        )
        return self.worker_counts[pool]

    def pool_label(self, pool: int) -> str:
        """Larger pool number `pool` as the picker shows it, such as '16 GPUs'."""
        return f"{self.pool_workers(pool)} GPUs"


@dataclass(frozen=True)
class CapacityCase:
    """Part B: a large model made to fit with tensor parallel inside nodes and ZeRO across them."""

    model: str
    seq_len: int
    micro_batch: int


@dataclass(frozen=True)
class LayoutCase:
    """Part C: one model, one batch, the same GPUs arranged three ways."""

    model: str
    global_batch: int
    seq_len: int
    microbatch_count: int
    zero_stage: int


@dataclass(frozen=True)
class PipelineCase:
    """Part D: fixed-size microbatches fed into a deep pipeline."""

    model: str
    microbatch_size: int
    seq_len: int
    stages: int
    tensor_parallel: int
    baseline_microbatches: int
    zero_stage: int
    recompute: str


@dataclass(frozen=True)
class Cases:
    """The settings parts B-D share, and each part's fixed case."""

    dtype: str
    compute_efficiency: float
    precision: str
    optimizer: str
    attention: str
    capacity: CapacityCase
    layout: LayoutCase
    pipeline: PipelineCase


@dataclass(frozen=True)
class PartText:
    """A part's title, its prediction question and its decision, with option ids and labels."""

    key: str
    tab: str
    minutes: int
    title: str
    prompt: str
    options: dict[str, str]
    decision_prompt: str
    decisions: dict[str, str]


@dataclass(frozen=True)
class SynthesisText:
    """The choices of the synthesis: plans, reopening triggers, remaining limitations."""

    plans: dict[str, str]
    triggers: dict[str, str]
    limitations: dict[str, str]
    model_parallel_plans: tuple[str, ...]
    not_needed_note: str
    does_not_fit_note: str

    def plan_labels(self, track: Track) -> dict[str, str]:
        """Plan labels that say which plans this track's model cannot use or does not need."""

        def note(plan: str) -> str:
            if plan in self.model_parallel_plans:
                return "" if track.model_parallel else f" {self.not_needed_note}"
            return f" {self.does_not_fit_note}" if track.model_parallel else ""

        return {plan: label + note(plan) for plan, label in self.plans.items()}


@dataclass(frozen=True)
class LabText:
    """What the lab says about itself: how long it takes, what it teaches, what to keep."""

    minutes: str
    objectives: tuple[str, ...]
    takeaways: tuple[str, ...]
    latency_note: str


@dataclass(frozen=True)
class ScalingData:
    """Everything in the scaling data file, validated."""

    fleets: dict[str, Fleet]
    tracks: dict[str, Track]
    cases: Cases
    parts: dict[str, PartText]
    synthesis: SynthesisText
    lab: LabText


def _labels(raw: Any, where: str) -> dict[str, str]:
    require(isinstance(raw, dict) and len(raw) >= 2, f"{where} needs at least two options.")
    require(
        all(isinstance(v, str) and v.strip() for v in raw.values()), f"{where}: every option needs a label."
    )
    return dict(raw)


def parse_fleet(raw: Mapping[str, Any]) -> Fleet:
    """One validated fleet; its GPU must be a known preset and the node link the faster one."""
    key = validate.text(raw, "key", "A fleet")
    where = f"Fleet {key}"
    fleet = Fleet(
        key=key,
        name=validate.text(raw, "name", where),
        gpu_name=validate.text(raw, "gpu", where),
        gpus_per_node=validate.whole_number(raw.get("gpus_per_node"), f"{where}: 'gpus_per_node'"),
        nodes=validate.whole_number(raw.get("nodes"), f"{where}: 'nodes'"),
        intra_node_link=validate.text(raw, "intra_node_link", where),
        intra_node_gb_per_s=positive_number(raw.get("intra_node_gb_per_s"), f"{where} intra_node_gb_per_s"),
        inter_node_link=validate.text(raw, "inter_node_link", where),
        inter_node_gb_per_s=positive_number(raw.get("inter_node_gb_per_s"), f"{where} inter_node_gb_per_s"),
        intra_node_latency_us=positive_number(
            raw.get("intra_node_latency_us"), f"{where} intra_node_latency_us"
        ),
        inter_node_latency_us=positive_number(
            raw.get("inter_node_latency_us"), f"{where} inter_node_latency_us"
        ),
        source=validate.text(raw, "source", where),
    )
    gpu(fleet.gpu_name)  # an unknown preset raises ValueError at load time, not mid-lesson
    require(
        fleet.inter_node_gb_per_s <= fleet.intra_node_gb_per_s,
        f"{where}: the link between nodes cannot be faster than the one inside a node.",
    )
    return fleet


def parse_track_model(raw: Mapping[str, Any]) -> TrackModel:
    """One validated track model; its cost is given per sample or derived from tokens per sample."""
    key = validate.text(raw, "key", "A track model")
    where = f"Track model {key}"
    parameters = positive_number(raw.get("parameters"), f"{where} parameters")
    has_flop, has_tokens = "forward_gflop_per_sample" in raw, "tokens_per_sample" in raw
    require(
        has_flop != has_tokens, f"{where} needs exactly one of forward_gflop_per_sample or tokens_per_sample."
    )
    if has_flop:
        forward_gflop = positive_number(raw["forward_gflop_per_sample"], f"{where} forward_gflop_per_sample")
    else:
        tokens = positive_number(raw["tokens_per_sample"], f"{where} tokens_per_sample")
        forward_gflop = FORWARD_FLOP_PER_PARAM_TOKEN * parameters * tokens / 1e9
    return TrackModel(
        key=key,
        name=validate.text(raw, "name", where),
        parameters=parameters,
        train_gflop_per_sample=TRAIN_TO_FORWARD_FLOP * forward_gflop,
        kernels_per_step=validate.whole_number(raw.get("kernels_per_step"), f"{where}: kernels_per_step"),
        source=validate.text(raw, "source", where),
    )


def parse_track(
    raw: Mapping[str, Any], models: Mapping[str, TrackModel], fleets: Mapping[str, Fleet]
) -> Track:
    """One validated track: known model and fleet, four ascending worker counts of whole nodes."""
    key = validate.text(raw, "key", "A track")
    where = f"Track {key}"
    require(raw.get("model") in models, f"{where} names an unknown model {raw.get('model')!r}.")
    require(raw.get("fleet") in fleets, f"{where} names an unknown fleet {raw.get('fleet')!r}.")
    fleet = fleets[raw["fleet"]]
    counts = validate.items(
        raw.get("worker_counts"), f"{where} needs exactly {WORKER_COUNTS_PER_TRACK} worker counts."
    )
    require(
        len(counts) == WORKER_COUNTS_PER_TRACK,
        f"{where} needs exactly {WORKER_COUNTS_PER_TRACK} worker counts.",
    )
    require(
        all(isinstance(c, int) and c >= 1 for c in counts), f"{where}: worker counts must be whole numbers."
    )
    require(counts == sorted(set(counts)), f"{where}: worker counts must rise from the baseline.")
    require(
        all(c <= fleet.gpus_per_node or c % fleet.gpus_per_node == 0 for c in counts),
        f"{where}: a pool larger than a node must use whole nodes.",
    )
    require(
        counts[-1] <= fleet.total_gpus,
        f"{where}: {counts[-1]} workers exceed the {fleet.total_gpus} GPUs of {fleet.name}.",
    )
    require(isinstance(raw.get("model_parallel"), bool), f"{where}: model_parallel must be true or false.")
    convergence, straggler = raw.get("convergence") or {}, raw.get("straggler") or {}
    policy = StragglerPolicy(
        step_time_multiplier=positive_number(
            straggler.get("step_time_multiplier"), f"{where} step_time_multiplier"
        ),
        work_multiplier=positive_number(straggler.get("work_multiplier"), f"{where} work_multiplier"),
    )
    require(
        policy.step_time_multiplier <= 1 <= policy.work_multiplier,
        f"{where}: dropping workers must shorten steps (multiplier <= 1) and add work (>= 1).",
    )
    return Track(
        key=key,
        label=validate.text(raw, "label", where),
        deployment_target=validate.text(raw, "deployment_target", where),
        model=models[raw["model"]],
        fleet=fleet,
        worker_counts=tuple(counts),
        local_batch=validate.whole_number(raw.get("local_batch"), f"{where}: 'local_batch'"),
        global_batch=validate.whole_number(raw.get("global_batch"), f"{where}: 'global_batch'"),
        model_parallel=raw["model_parallel"],
        note=validate.text(raw, "note", where),
        convergence=Convergence(
            minimum_steps=positive_number(convergence.get("minimum_steps"), f"{where} minimum_steps"),
            critical_batch=positive_number(convergence.get("critical_batch"), f"{where} critical_batch"),
        ),
        straggler=policy,
    )


def parse_cases(raw: Mapping[str, Any]) -> Cases:
    """The validated fixed cases of parts B-D; memory settings must be ones the memory core knows."""
    require(isinstance(raw, dict), "scaling_tracks.json needs a 'cases' object.")
    efficiency = positive_number(raw.get("compute_efficiency"), "compute_efficiency")
    require(efficiency <= 1, "compute_efficiency is a fraction of peak and cannot exceed 1.")
    capacity, layout, pipeline = (raw.get(k) or {} for k in ("capacity", "layout", "pipeline"))
    require(
        layout.get("zero_stage") in ZERO_STAGES and pipeline.get("zero_stage") in ZERO_STAGES,
        "Case ZeRO stages must be 0, 1, 2 or 3.",
    )
    require(
        pipeline.get("recompute") in Recomputation.ids(),
        f"The pipeline case's recompute must be one of {', '.join(Recomputation.ids())}.",
    )
    require(
        raw.get("attention") in AttentionKind.ids(),
        f"attention must be one of {', '.join(AttentionKind.ids())}.",
    )
    precision(validate.text(raw, "precision", "The cases"))
    optimizer_state_values(validate.text(raw, "optimizer", "The cases"))
    for case in (capacity, layout, pipeline):
        # an unknown model preset raises ValueError at load time
        preset(validate.text(case, "model", "A case"))
    return Cases(
        dtype=check_dtype(validate.text(raw, "dtype", "The cases")),
        compute_efficiency=efficiency,
        precision=raw["precision"],
        optimizer=raw["optimizer"],
        attention=raw["attention"],
        capacity=CapacityCase(
            model=capacity["model"],
            **{
                k: validate.whole_number(capacity.get(k), f"The capacity case: '{k}'")
                for k in ("seq_len", "micro_batch")
            },
        ),
        layout=LayoutCase(
            model=layout["model"],
            zero_stage=layout["zero_stage"],
            **{
                k: validate.whole_number(layout.get(k), f"The layout case: '{k}'")
                for k in ("global_batch", "seq_len", "microbatch_count")
            },
        ),
        pipeline=PipelineCase(
            model=pipeline["model"],
            zero_stage=pipeline["zero_stage"],
            recompute=pipeline["recompute"],
            **{
                k: validate.whole_number(pipeline.get(k), f"The pipeline case: '{k}'")
                for k in ("microbatch_size", "seq_len", "stages", "tensor_parallel", "baseline_microbatches")
            },
        ),
    )


def parse_part(raw: Mapping[str, Any]) -> PartText:
    """One part's validated question and decision wording."""
    key = validate.text(raw, "key", "A part")
    where = f"Part {key}"
    return PartText(
        key=key,
        tab=validate.text(raw, "tab", where),
        minutes=validate.whole_number(raw.get("minutes"), f"{where}: minutes"),
        title=validate.text(raw, "title", where),
        prompt=validate.text(raw, "prompt", where),
        options=_labels(raw.get("options"), f"{where} prediction"),
        decision_prompt=validate.text(raw, "decision_prompt", where),
        decisions=_labels(raw.get("decisions"), f"{where} decision"),
    )


def _keyed(items: list[Any], what: str) -> dict[str, Any]:
    keys = [item.key for item in items]
    require(len(set(keys)) == len(keys), f"scaling_tracks.json repeats a {what} key.")
    return {item.key: item for item in items}


def parse_scaling(raw: Any) -> ScalingData:
    """Validate the whole scaling data file."""
    require(isinstance(raw, dict), "scaling_tracks.json must hold an object.")
    fleets = _keyed([parse_fleet(f) for f in raw.get("fleets", [])], "fleet")
    models = _keyed([parse_track_model(m) for m in raw.get("track_models", [])], "track model")
    tracks = _keyed([parse_track(t, models, fleets) for t in raw.get("tracks", [])], "track")
    require(bool(tracks), "scaling_tracks.json lists no tracks.")
    parts = _keyed([parse_part(p) for p in raw.get("parts", [])], "part")
    require(
        tuple(parts) == PARTS, f"scaling_tracks.json must describe parts {', '.join(PARTS)} in that order."
    )
    return ScalingData(
        fleets=fleets,
        tracks=tracks,
        cases=parse_cases(raw.get("cases")),
        parts=parts,
        synthesis=parse_synthesis(raw.get("synthesis") or {}),
        lab=parse_lab(raw.get("lab") or {}),
    )


def _sentences(raw: Mapping[str, Any], name: str) -> tuple[str, ...]:
    message = f"The lab needs exactly three {name}."
    items = validate.items(raw.get(name), message, at_least=3)
    require(len(items) == 3 and all(isinstance(i, str) and i.strip() for i in items), message)
    return tuple(items)


def parse_lab(raw: Mapping[str, Any]) -> LabText:
    """The lab's time guidance, its three objectives and its three takeaways."""
    return LabText(
        minutes=validate.text(raw, "minutes", "The lab"),
        objectives=_sentences(raw, "objectives"),
        takeaways=_sentences(raw, "takeaways"),
        latency_note=validate.text(raw, "latency_note", "The lab"),
    )


def parse_synthesis(raw: Mapping[str, Any]) -> SynthesisText:
    """The validated synthesis choices; model-parallel plans must be among the plans."""
    plans = _labels(raw.get("plans"), "Synthesis plans")
    model_parallel_plans = validate.items(
        raw.get("model_parallel_plans"),
        "Synthesis: model_parallel_plans must name some, not all, of the plans.",
    )
    require(
        set(model_parallel_plans) < set(plans),
        "Synthesis: model_parallel_plans must name some, not all, of the plans.",
    )
    return SynthesisText(
        plans=plans,
        triggers=_labels(raw.get("triggers"), "Synthesis triggers"),
        limitations=_labels(raw.get("limitations"), "Synthesis limitations"),
        model_parallel_plans=tuple(model_parallel_plans),
        not_needed_note=validate.text(raw, "not_needed_note", "Synthesis"),
        does_not_fit_note=validate.text(raw, "does_not_fit_note", "Synthesis"),
    )


@lru_cache(maxsize=1)
def load_scaling() -> ScalingData:
    """The scaling data, read and validated once per process."""
    return parse_scaling(read_json(FILE))


def track_keys() -> tuple[str, ...]:
    """Track keys in file order (the choices of the track picker)."""
    return tuple(load_scaling().tracks)


def track(key: str) -> Track:
    """The track with this key; ValueError naming the known ones otherwise."""
    tracks = load_scaling().tracks
    require(key in tracks, f"There is no track {key!r}. Known tracks: {', '.join(tracks)}.")
    return tracks[key]


def track_label(key: str) -> str:
    """The track's name as the training-context picker shows it."""
    return track(key).label
