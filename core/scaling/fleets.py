"""The hardware and what it trains: fleets of GPU nodes and the models the tracks train upstream, each
validated from its entry in `data/scaling_tracks.json`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import validate
from core.datafiles import positive_number, require
from core.gpus import Gpu, gpu

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
    straggler_lag_ms: float
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
        straggler_lag_ms=positive_number(raw.get("straggler_lag_ms"), f"{where} straggler_lag_ms"),
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
