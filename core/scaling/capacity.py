"""Part B: per-GPU memory of a model split by tensor (TP) and pipeline (PP) parallelism, then ZeRO.

Built on the memory core (`core.memory`, `core.memory.detailed`): the same terms, the same
activation count (Korthikanti et al.) and the same ZeRO rule. What this module adds:
- model state split evenly over TP x PP GPUs before ZeRO shards it over the DP replicas;
- saved activations of the layers one stage owns, divided by TP (we assume sequence parallelism
  alongside TP, which splits every saved tensor of a block); the output layer's logits count only
  when there is a single stage, since otherwise they sit on the last stage, not the busiest one;
- communication buffers: a gradient bucket of 5% of this GPU's gradients, plus a send and a receive
  buffer of one micro-batch's hidden states when there are pipeline stages.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from core.datafiles import require
from core.memory import (
    TERM_LABELS,
    TERMS,
    MemoryTerms,
    Verdict,
    budget_verdict,
    check_whole,
    model_state_terms,
    to_gb,
    zero_sharded,
)
from core.memory.detailed import layer_activation_bytes, output_activation_bytes, replicated_terms
from core.memory.settings import precision
from core.memory.setup import TrainingSetup
from core.models import preset
from core.scaling.cases import Cases
from core.scaling.fleets import Fleet
from core.units import fixed_label

GRADIENT_BUCKET_FRACTION = 0.05
PIPELINE_BOUNDARY_BUFFERS = 2  # one send and one receive buffer per stage boundary
MODEL_STATE_TERMS = ("parameters", "gradients", "master_weights", "optimizer_state")
ZERO_PLAN_STAGES = (1, 2, 3)  # the sharded plans part B offers
# Every recomputation choice, as a plan's name says it.
RECOMPUTE_WORDS = {
    "none": "no recomputation",
    "selective": "selective recomputation",
    "full": "full recomputation",
}


def stage_activation_bytes(setup: TrainingSetup, *, tp: int, pp: int) -> float:
    """Saved activations of one micro-batch on one GPU of the busiest stage."""
    check_whole(tp, "Tensor parallel size")
    check_whole(pp, "Pipeline stages")
    require(
        setup.model.layers % pp == 0, f"{setup.model.layers} layers do not split evenly into {pp} stages."
    )
    per_layer = layer_activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len)
    output = (
        output_activation_bytes(setup, micro_batch=setup.micro_batch, seq_len=setup.seq_len)
        if pp == 1
        else 0.0
    )
    return float((setup.model.layers // pp * per_layer + output) / tp)


def communication_buffer_bytes(setup: TrainingSetup, *, gradients_bytes: float, pp: int) -> float:
    """A gradient bucket of 5% of this GPU's gradients, plus pipeline send/receive buffers."""
    boundary = (
        setup.micro_batch * setup.seq_len * setup.model.hidden * precision(setup.precision).activation_bytes
    )
    return GRADIENT_BUCKET_FRACTION * gradients_bytes + (
        PIPELINE_BOUNDARY_BUFFERS * boundary if pp > 1 else 0.0
    )


def parallel_terms(
    setup: TrainingSetup, *, tp: int, pp: int, dp: int, zero_stage: int, retained_micro_batches: int = 1
) -> MemoryTerms:
    """One GPU's memory terms under TP x PP model parallelism and ZeRO over `dp` replicas."""
    check_whole(dp, "Data parallel size")
    check_whole(retained_micro_batches, "Retained micro-batches")
    whole = replicated_terms(setup)
    split = replace(
        whole,
        **{f"{term}_bytes": whole.term_bytes(term) / (tp * pp) for term in MODEL_STATE_TERMS},
        activations_bytes=retained_micro_batches * stage_activation_bytes(setup, tp=tp, pp=pp),
    )
    sharded = zero_sharded(split, zero_stage=zero_stage, gpus=dp)
    return replace(
        sharded,
        communication_buffers_bytes=communication_buffer_bytes(
            setup, gradients_bytes=sharded.gradients_bytes, pp=pp
        ),
    )


def terms_record(terms: MemoryTerms, verdict: Verdict) -> dict[str, object]:
    """Every term in GB, the total and whether it fits, as a plain JSON object for a snapshot."""
    return {
        **{f"{term}_gb": to_gb(terms.term_bytes(term)) for term in TERMS},
        "total_gb": verdict.total_gb,
        "fits": verdict.fits,
    }


@dataclass(frozen=True)
class MemoryPlan:
    """One plan's per-GPU memory and its verdict against HBM."""

    label: str
    terms: MemoryTerms
    verdict: Verdict


# Which prediction option each term's drop counts towards; the FP32 master copy is optimizer-side state.
_OPTION_OF_TERM = {
    "parameters": "weights",
    "master_weights": "optimizer",
    "optimizer_state": "optimizer",
    "activations": "activations",
}


@dataclass(frozen=True)
class CapacityContrast:
    """Part B's result: replicated state against the chosen ZeRO stage, same TP, DP and recomputation;
    `lightest_fit` is the smallest plan of every ZeRO stage and recomputation on this pool that fits
    (None when none does), the evidence the decision "no plan fits" is checked against."""

    tp: int
    dp: int
    baseline: MemoryPlan
    result: MemoryPlan
    lightest_fit: MemoryPlan | None

    @property
    def gpus(self) -> int:
        """The GPUs the model is spread over: TP × DP."""
        return self.tp * self.dp

    @property
    def outcome(self) -> str:
        """'oom' if the plan still does not fit, else the option whose terms fell the most."""
        if not self.result.verdict.fits:
            return "oom"
        drops: dict[str, float] = {}
        for term, option in _OPTION_OF_TERM.items():
            drops[option] = (
                drops.get(option, 0.0)
                + self.baseline.terms.term_bytes(term)
                - self.result.terms.term_bytes(term)
            )
        return max(drops, key=drops.__getitem__)

    @property
    def refused_decisions(self) -> tuple[str, ...]:
        """The decisions the evidence rules out: "shard" (carry the selected plan forward) while it does
        not fit, "none" (no plan fits) while any ZeRO stage and recomputation on this pool fits."""
        refused = () if self.result.verdict.fits else ("shard",)
        return refused if self.lightest_fit is None else (*refused, "none")


def case_setup(cases: Cases, *, model: str, micro_batch: int, seq_len: int, recompute: str) -> TrainingSetup:
    """A fixed case as a memory-core training setup, with the cases' shared precision, optimizer and
    attention."""
    return TrainingSetup(
        model=preset(model),
        precision=cases.precision,
        optimizer=cases.optimizer,
        micro_batch=micro_batch,
        seq_len=seq_len,
        recompute=recompute,
        attention=cases.attention,
    )


def capacity_contrast(
    *, fleet: Fleet, cases: Cases, zero_stage: int, recompute: str, gpus: int
) -> CapacityContrast:
    """The capacity case on `gpus` GPUs of `fleet`: TP over each node's GPUs and DP over those nodes;
    ZeRO-0 against `zero_stage`. ZeRO shards over the DP replicas only, so fewer nodes save less."""
    require(zero_stage in (1, 2, 3), "Pick ZeRO stage 1, 2 or 3 to compare with replicated state.")
    require(
        isinstance(gpus, int) and gpus >= fleet.gpus_per_node and gpus % fleet.gpus_per_node == 0,
        f"The capacity case needs whole nodes of {fleet.gpus_per_node} GPUs.",
    )
    case = cases.capacity
    setup = case_setup(
        cases, model=case.model, micro_batch=case.micro_batch, seq_len=case.seq_len, recompute=recompute
    )
    tp, dp = fleet.gpus_per_node, gpus // fleet.gpus_per_node

    def plan(stage: int, label: str, setup: TrainingSetup = setup) -> MemoryPlan:
        terms = parallel_terms(setup, tp=tp, pp=1, dp=dp, zero_stage=stage)
        return MemoryPlan(
            label=label, terms=terms, verdict=budget_verdict(terms, device_gb=fleet.card.memory_gb)
        )

    every_plan = [
        plan(stage, f"ZeRO-{stage} with {RECOMPUTE_WORDS[other]}", replace(setup, recompute=other))
        for stage in ZERO_PLAN_STAGES
        for other in RECOMPUTE_WORDS
    ]
    fitting = [candidate for candidate in every_plan if candidate.verdict.fits]
    return CapacityContrast(
        tp=tp,
        dp=dp,
        baseline=plan(0, "Replicated (ZeRO-0)"),
        result=plan(zero_stage, f"ZeRO-{zero_stage}"),
        lightest_fit=min(fitting, key=lambda candidate: candidate.verdict.total_gb, default=None),
    )


# How each number column of `plan_rows` is shown: GB to one decimal, the card's HBM whole.
_ONE_DECIMAL = functools.partial(fixed_label, places=1)
PLAN_FORMATS = {
    **{f"{TERM_LABELS[term]} (GB)": _ONE_DECIMAL for term in TERMS},
    "Total (GB)": _ONE_DECIMAL,
    "HBM (GB)": functools.partial(fixed_label, places=0),
}


def plan_rows(plans: tuple[MemoryPlan, ...]) -> list[dict[str, object]]:
    """One table row per plan: each term in GB, the total, HBM and the outcome."""
    return [
        {
            "Plan": plan.label,
            **{f"{TERM_LABELS[term]} (GB)": to_gb(plan.terms.term_bytes(term)) for term in TERMS},
            "Total (GB)": plan.verdict.total_gb,
            "HBM (GB)": plan.verdict.device_gb,
            "Outcome": "fits" if plan.verdict.fits else "out of memory",
        }
        for plan in plans
    ]


def replica_state_gb(*, parameters: float, cases: Cases) -> float:
    """Weights, gradients, master copy and optimizer state of a whole model on one GPU, in GB."""
    return model_state_terms(
        parameters=parameters, precision=precision(cases.precision), optimizer=cases.optimizer
    ).total_gb
