"""What autograd keeps when weights are frozen: LoRA, QLoRA and frozen blocks, over Hugging Face's count
(`core.memory.hf_stack`), block by block.

Autograd saves a tensor only for a gradient someone needs (PyTorch's generated nodes save each input
only if the gradient that reads it is wanted). So, per token:

- A frozen linear layer (`F.linear`, or GPT-2's `Conv1D` addmm) keeps no input: its input is saved only
  for its weight's gradient; its input's gradient reads the weight, which is no activation. The input
  stays saved where another node keeps the same storage (SDPA's flash and memory-efficient kernels
  keep their output, which is the output projection's input).
- A frozen RMSNorm drops the normalised tensor its weight multiplies (kept only for the weight's
  gradient) but keeps its FP32 input and 1/rms while its input needs a gradient; with neither, nothing.
  LayerNorm's backward is one node for input, weight and bias, so it keeps input and statistics
  whenever any of them needs a gradient.
- peft's LoRA (`peft/tuners/lora/layer.py`, `Linear.forward`; `bnb.py`, `Linear4bit.forward`) casts
  the layer's input to the adapter's FP32 (`_cast_input_dtype`: a new FP32 copy, 4 bytes per input
  feature, unless the input is FP32 already), and `lora_A` keeps that copy, `lora_B` the rank-r FP32
  output of `lora_A` (dropout 0 is `nn.Identity`; the scaling and the sum keep nothing).
- While it adds the branch to the base output, a LoRA layer holds the base output, `lora_B`'s FP32
  output times the scaling and their FP32 sum (QLoRA's `Linear4bit`: the base output's clone, `lora_B`'s
  output and its scaled copy): w + 8 bytes per output feature, a forward transient.
- QLoRA's base layer (`bitsandbytes/autograd/_functions.py`, `MatMul4Bit`) keeps no activation (its
  `ctx.tensors` holds the packed weight only); it dequantizes the weight to BF16 for the matmul on a
  GPU (past the small-batch kernel, in forward) and again in backward (`dequantize_4bit`): a transient
  the size of the layer's BF16 weight, `dequantized_weight`.
- Nothing needs a gradient below the first block that trains: with the embeddings frozen, a block
  whose weights are all frozen and whose input needs no gradient keeps nothing and backward never
  reaches it. Under LoRA the first block's input needs no gradient either, so its first norm keeps
  nothing; the frozen embedding keeps neither its token ids nor (GPT-2) its dropout mask.

Under autocast (`precision="amp"`: FP32 weights, BF16 matmuls) every linear call casts its input and
weight to BF16; the cast of a frozen weight is not cached (torch caches casts of leaf tensors that need
a gradient only), and a node keeps the casts its wanted gradients read:

- A frozen layer keeps no cast of its input, and its weight's BF16 copy only while its input needs a
  gradient (so LoRA's first block makes its input projections' copies for their matmul and drops them).
- peft casts nothing for an input projection (the norm output is FP32 already) and lora_A keeps its own
  BF16 cast (2 bytes per input feature); an output projection's BF16 input becomes peft's FP32 copy,
  which lora_A casts back to BF16 and keeps (the FP32 copy lives until the layer returns). lora_B keeps
  lora_A's BF16 output (2 bytes per rank), and both keep their weights' BF16 copies (2 bytes a value;
  lora_A's only where its input needs a gradient).
- The block norms' normalised tensors are FP32 (the residual stream is), the QK-norms' BF16.

A mixture of experts (transformers' grouped_mm experts, which stay BF16 parameters under QLoRA):
- attention-only LoRA or QLoRA: the frozen router keeps no input, and grouped_mm keeps neither each routed
  expert's gathered input nor its down projection's input (read by the experts' weight gradients only);
  the scores, indices, gate_up and SiLU outputs, each expert's output and its routing weight stay.
- all-linear: peft adapts the experts and routers as parameters (`ParamWrapper`), so they keep what full
  training keeps, plus per block the merged weights W + ΔW they compute with and, outside FP32, the
  experts' lora_A and lora_B cast to the model's dtype; the merged weight's gradient is a backward
  transient.

Counted for the PyTorch + Hugging Face stack in BF16 or FP32, and for LoRA and frozen blocks of dense
RMSNorm models under autocast; on a mixture of experts, LoRA and QLoRA with routed experts only (Mixtral,
Qwen3-MoE, OLMoE).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from core.datafiles import require
from core.memory.count import ActivationCount
from core.memory.finetune import LoraTarget, lora_targets
from core.memory.hf_stack import (
    FP32,
    FP32_ROUTERS,
    GEMMA_NORM,
    ID_BYTES,
    MASK_BYTES,
    STAT_BYTES,
    gemma_embedding_scale_bytes,
    hf_count,
    normalised_value_bytes,
    qk_rms_norm,
    sdpa_kernel,
)
from core.memory.qlora import BF16_BYTES, quantized
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup
from core.memory.sharding import block_of
from core.model_tensors import Tensor, model_tensors

ADAPTER_BYTES = 4  # peft keeps adapters, and the input it casts for them, in FP32
# Leaf names of the layers that write a block's attention or MLP output, in the families we count.
OUTPUT_LEAVES = frozenset({"o_proj", "c_proj", "dense", "out_proj", "down_proj", "dense_4h_to_h", "fc2"})


@dataclass(frozen=True)
class Site:
    """Linear layers of one block that read the same input, and that input's width."""

    names: tuple[str, ...]
    in_features: int
    output: bool  # the attention's or the MLP's output projection
    part: str  # "attention" or "mlp"
    weights: int  # values in the layers' weights (autocast keeps a BF16 copy of each it needs)
    out_features: tuple[int, ...]  # each layer's, in the order of `names`


@dataclass(frozen=True)
class BlockTraining:
    """What one block trains: its base weights or none, which layers carry adapters (rank each), and
    whether its input needs a gradient."""

    weights_train: bool
    adapters: dict[str, int]  # tensor name -> LoRA ranks on it
    input_grad: bool


@dataclass(frozen=True)
class MethodCount:
    """The saved activations of a step under a training method, block by block."""

    count: ActivationCount  # kinds of the last block, the outside and the transients
    saved_by_block: tuple[float, ...]  # what each block keeps for backward, the first block first
    backward_blocks: int  # blocks backward runs through, counted from the last
    dequantized_weight_bytes: float  # QLoRA: one layer's BF16 weight, in forward and backward

    @classmethod
    def uniform(cls, count: ActivationCount, layers: int) -> MethodCount:
        """Full training: every block keeps the same, and backward runs through them all."""
        return cls(count, (count.block_bytes,) * layers, layers, 0.0)


def _leaf(name: str) -> str:
    return name.rsplit(".", 2)[-2]


def _sites(layer_tensors: list[Tensor]) -> list[Site]:
    """A block's linear layers grouped by the input they read: input and output projections."""
    sites: dict[tuple[str, bool], list[Tensor]] = {}
    for tensor in layer_tensors:
        sites.setdefault((tensor.part, _leaf(tensor.name) in OUTPUT_LEAVES), []).append(tensor)
    return [
        Site(
            tuple(t.name for t in group),
            group[0].features[0],
            output,
            part,
            sum(t.numel for t in group),
            tuple(t.features[1] for t in group),
        )
        for (part, output), group in sites.items()
    ]


def _block_layers(setup: StepSetup) -> dict[int, list[Tensor]]:
    layers: dict[int, list[Tensor]] = {}
    for tensor in model_tensors(setup.model):
        block = block_of(tensor.name)
        if tensor.layer and block is not None:
            layers.setdefault(block, []).append(tensor)
    return layers


def _block_training(setup: StepSetup, block: int) -> BlockTraining:
    t = setup.training
    if t.adapted:
        ranks = {
            target.tensor.name: target.rank_multiple * t.lora_rank
            for target in lora_targets(setup.model, t.lora_targets)
            if block_of(target.tensor.name) == block
        }
        return BlockTraining(weights_train=False, adapters=ranks, input_grad=block > 0)
    k = t.freeze_blocks
    return BlockTraining(weights_train=block >= k, adapters={}, input_grad=k == 0 or block > k)


def _residual_bytes(setup: StepSetup) -> int:
    """Bytes of a value of the residual stream: FP32 in FP32 and under autocast, BF16 in BF16."""
    return FP32 if setup.convention.compute in ("fp32", "amp") else BF16_BYTES


def _norm_drop(setup: StepSetup, training: BlockTraining) -> float:
    """Per token: what the block's norms stop keeping (Gemma's four; Qwen3's and Gemma 3's QK-norms)."""
    m = setup.model
    if m.norm != "rmsnorm":  # LayerNorm keeps everything unless nothing in it needs a gradient
        nothing = not training.weights_train and not training.input_grad
        return _residual_bytes(setup) * m.hidden + 2 * STAT_BYTES if nothing else 0.0
    # The first norm's FP32 input and 1/rms are kept for the block input's gradient only; every other
    # norm reads a tensor that depends on something trained.
    upcast = FP32 * m.hidden + STAT_BYTES
    # The normalised tensor (FP32 in Gemma's code) is kept for the weight's gradient only; Gemma's FP32
    # `1 + weight` stays, kept for the input's gradient. A block norm's is in the residual's dtype, a
    # QK-norm's in the projection output's (BF16 under autocast).
    block_value = normalised_value_bytes(setup, _residual_bytes(setup))
    qk_value = normalised_value_bytes(setup, COMPUTE_BYTES[setup.convention.compute])
    qk_width = m.q_width + m.kv_width if qk_rms_norm(m) else 0
    normalised = block_value * m.norms_per_block * m.hidden + qk_value * qk_width
    drop = 0.0 if training.input_grad else upcast
    return drop + (0.0 if training.weights_train else normalised)


@dataclass(frozen=True)
class SiteChange:
    """What one site keeps less (or more) than full training: per token, and autocast's weight copies."""

    kind: str  # the kind its input was counted under
    dropped: float  # per token: its input, no longer kept
    adapters: float  # per token: what its adapters keep
    weight_copies: float  # the whole batch: autocast's BF16 weight copies kept, less (or more)


def _site_input_grad(site: Site, training: BlockTraining) -> bool:
    """Whether the site's input needs a gradient: all do but the first norm's output in a block whose
    input and norm weights are frozen (LoRA's first block)."""
    return training.input_grad or training.weights_train or site.part != "attention" or site.output


def _site_change(setup: StepSetup, site: Site, training: BlockTraining) -> SiteChange:
    """What a site keeps less than full training, and what its adapters keep."""
    compute = setup.convention.compute
    ranks = [training.adapters[name] for name in site.names if name in training.adapters]
    eager = setup.attention == "eager" or sdpa_kernel(setup) == "math"
    kernel_keeps = site.output and site.part == "attention" and not eager
    kind = site.part if site.part in ("attention", "mlp") else "mlp"
    if compute == "amp":
        return _amp_site_change(setup, site, training, kind=kind, kernel_keeps=kernel_keeps)
    fp32 = compute == "fp32"
    adapters = sum((0 if fp32 else ADAPTER_BYTES * site.in_features) + ADAPTER_BYTES * r for r in ranks)
    kept = training.weights_train or (fp32 and bool(ranks)) or kernel_keeps
    width = COMPUTE_BYTES[compute] * site.in_features
    return SiteChange(kind, 0.0 if kept else float(width), float(adapters), 0.0)


def _amp_site_change(
    setup: StepSetup, site: Site, training: BlockTraining, *, kind: str, kernel_keeps: bool
) -> SiteChange:
    """Under autocast every linear call casts its input and weight to BF16 (a frozen weight's cast is not
    cached, so each call makes its own). A frozen layer keeps neither its input's cast nor, unless its
    input needs a gradient, its weight's. An input projection reads the FP32 norm output, so peft casts
    nothing and lora_A keeps its own BF16 cast; an output projection reads BF16, which peft copies to
    FP32 and lora_A casts back: the BF16 cast is kept, the FP32 copy is not. lora_B keeps lora_A's BF16
    output, and both keep their weights' cached BF16 copies where their input needs a gradient."""
    ranks = [
        (training.adapters[n], out)
        for n, out in zip(site.names, site.out_features, strict=True)
        if n in training.adapters
    ]
    grad = _site_input_grad(site, training)
    adapters = sum(BF16_BYTES * (site.in_features + r) for r, _ in ranks)
    adapter_copies = sum(BF16_BYTES * r * (out + (site.in_features if grad else 0)) for r, out in ranks)
    if training.weights_train:
        return SiteChange(kind, 0.0, float(adapters), float(adapter_copies))
    if site.output:  # a BF16 input already, which autocast does not copy
        dropped = 0.0 if kernel_keeps else float(BF16_BYTES * site.in_features)
        return SiteChange(kind, dropped, float(adapters), float(adapter_copies))
    base_copies = 0.0 if grad else BF16_BYTES * site.weights
    casts = BF16_BYTES * site.in_features * len(site.names)
    return SiteChange("casts", float(casts), float(adapters), float(adapter_copies - base_copies))


def _frozen_experts_drop(setup: StepSetup, training: BlockTraining) -> float:
    """Per token (the mean over dense and MoE blocks, as `hf_stack` counts MoE blocks): what a block's
    frozen router and routed experts stop keeping (Mixtral, Qwen3-MoE, OLMoE: no shared expert reads the
    router's input). The router's `F.linear` keeps its input only for its weight's gradient; grouped_mm
    (`integrations/moe.py`) keeps each routed expert's gathered input and its down projection's input
    only for the experts' weight gradients. The scores, indices, gate_up and SiLU outputs (kept for the
    input's gradient), each expert's output and its routing weight stay."""
    m = setup.model
    if not m.is_moe or training.weights_train or _parameter_targets(setup):
        return 0.0
    w = COMPUTE_BYTES[setup.convention.compute]
    routed = m.active_experts * w * (m.hidden + m.expert_intermediate)
    return (w * m.hidden + routed) * m.moe_layers / m.layers


def _parameter_targets(setup: StepSetup) -> list[LoraTarget]:
    """The weights LoRA adapts as parameters (peft's `target_parameters`, all-linear on a mixture of
    experts): routed experts and routers, which are no linear layers."""
    t = setup.training
    return [x for x in lora_targets(setup.model, t.lora_targets) if not x.tensor.layer] if t.adapted else []


def _merged_parameter_bytes(setup: StepSetup, block: int) -> float:
    """What peft's `ParamWrapper` keeps for an adapted parameter (`_activate_lora`): the merged weight
    W + ΔW its module computes with, in the model's dtype (kept as grouped_mm's or the router's F.linear's
    weight, read by the input's gradient). The experts' ΔW is folded in by `baddbmm` from lora_A and
    lora_B cast to the model's dtype, which it keeps (no copy in FP32); a router's ΔW is B @ A in FP32,
    cast afterwards, which keeps nothing."""
    w = COMPUTE_BYTES[setup.convention.compute]
    total = 0.0
    for target in (x for x in _parameter_targets(setup) if block_of(x.tensor.name) == block):
        total += w * target.tensor.numel
        if target.copies > 1 and w != FP32:
            total += w * target.parameters(setup.training.lora_rank)
    return total


def _block_kinds(setup: StepSetup, full: ActivationCount, sites: list[Site], block: int) -> dict[str, float]:
    """What block `block` keeps, by kind (bytes for the micro-batch)."""
    training = _block_training(setup, block)
    if not training.weights_train and not training.adapters and not training.input_grad:
        return {kind: 0.0 for kind in full.block}
    tokens = setup.tokens
    kinds = dict(full.block)
    kinds["norms"] -= tokens * _norm_drop(setup, training)
    if not training.input_grad and setup.model.model_type in GEMMA_NORM:
        kinds["norms"] -= (
            FP32 * setup.model.hidden
        )  # the first norm's `1 + weight`, kept for its input's gradient
    kinds["mlp"] -= tokens * _frozen_experts_drop(setup, training)
    kinds["adapters"] = 0.0
    for site in sites:
        change = _site_change(setup, site, training)
        kinds[change.kind] -= tokens * change.dropped
        kinds["adapters"] += tokens * change.adapters
        kinds["weight_copies"] += change.weight_copies
    kinds["weight_copies"] += _merged_parameter_bytes(setup, block)
    return kinds


def _outside(setup: StepSetup, full: ActivationCount, head_trains: bool) -> dict[str, float]:
    """What the rest of the model stops keeping: a frozen final norm's normalised tensor, a frozen output
    layer's input, a frozen embedding's token ids, dropout mask and (Gemma) the scale its product keeps."""
    m, t = setup.model, setup.training
    drop = 0.0
    if t.adapted and m.norm == "rmsnorm":
        drop += normalised_value_bytes(setup, _residual_bytes(setup)) * m.hidden
    if not head_trains:  # its input, or under autocast its input's BF16 cast
        drop += COMPUTE_BYTES[setup.convention.compute] * m.hidden
    frozen_embedding = t.adapted or bool(t.freeze_blocks)
    if frozen_embedding:
        drop += ID_BYTES + (MASK_BYTES * m.hidden if m.dropout else 0)
    scale = gemma_embedding_scale_bytes(setup) if frozen_embedding else 0
    return {**full.outside, "other": full.outside["other"] - setup.tokens * drop - scale}


def _lora_transient_bytes(setup: StepSetup, target: LoraTarget) -> float:
    """Per token: what a LoRA layer holds while it adds its branch. In BF16 or FP32: the base output,
    lora_B's FP32 output times the scaling and their FP32 sum. Under autocast all three are BF16, and an
    output projection holds peft's FP32 copy of its BF16 input besides (kept by nothing, alive until the
    layer returns)."""
    if setup.convention.compute != "amp":
        return float((COMPUTE_BYTES[setup.convention.compute] + 2 * ADAPTER_BYTES) * target.out_features)
    fp32_copy = FP32 * target.in_features if _leaf(target.tensor.name) in OUTPUT_LEAVES else 0
    return float(fp32_copy + 3 * BF16_BYTES * target.out_features)


def _frozen_copy_bytes(setup: StepSetup) -> float:
    """Under autocast, the largest BF16 copy of a frozen weight that nothing keeps: it exists for its
    layer's matmul only (frozen blocks below the first trained one; LoRA's first block's input
    projections)."""
    t = setup.training
    if setup.convention.compute != "amp" or not (t.adapted or t.freeze_blocks):
        return 0.0
    first = _block_layers(setup).get(0, [])
    transient = [
        s for s in _sites(first) if t.freeze_blocks or not _site_input_grad(s, _block_training(setup, 0))
    ]
    return float(
        BF16_BYTES * max((t.numel for s in transient for t in first if t.name in s.names), default=0)
    )


def _forward_transient(setup: StepSetup, full: ActivationCount) -> float:
    """A block's briefest tensors in forward: Hugging Face's, a LoRA layer adding its branch, or under
    autocast a frozen weight's BF16 copy."""
    t = setup.training
    lora = 0.0
    if t.adapted:
        targets = [target for target in lora_targets(setup.model, t.lora_targets) if target.tensor.layer]
        lora = setup.tokens * max(_lora_transient_bytes(setup, target) for target in targets)
    return max(full.forward_block_transient_bytes, lora, _frozen_copy_bytes(setup))


def _backward_transient(setup: StepSetup, full: ActivationCount) -> float:
    """A block's briefest tensors in backward: Hugging Face's, or the gradient of the widest merged weight
    peft's `ParamWrapper` computes with (its module's backward makes it whole before `baddbmm`'s backward
    turns it into lora_A's and lora_B's gradients)."""
    w = COMPUTE_BYTES[setup.convention.compute]
    merged = max((w * target.tensor.numel for target in _parameter_targets(setup)), default=0)
    return max(full.backward_block_transient_bytes, float(merged))


def _dequantized_weight_bytes(setup: StepSetup) -> float:
    if setup.training.method != "qlora":
        return 0.0
    return float(BF16_BYTES * max((t.numel for t in model_tensors(setup.model) if quantized(t)), default=0))


def check_counted(setup: StepSetup) -> None:
    """A ValueError a learner can read unless the phase model counts `setup`'s training method."""
    t = setup.training
    if t.method == "full" and t.freeze_blocks == 0:
        return
    require(
        setup.stack == "hf",
        "LoRA, QLoRA and frozen blocks are counted for PyTorch + Hugging Face, not on the fused stack.",
    )
    amp = setup.convention.compute == "amp"
    require(not (amp and t.method == "qlora"), "QLoRA under autocast is not counted; QLoRA in BF16 is.")
    require(
        not amp or (setup.model.norm == "rmsnorm" and not setup.model.experts),
        "Under autocast, LoRA and frozen blocks are counted for dense RMSNorm models, not for GPT-2's "
        "LayerNorm or a mixture of experts.",
    )
    m = setup.model
    require(
        not (t.adapted and m.experts) or not (m.shared_expert_intermediate or m.model_type in FP32_ROUTERS),
        "LoRA and QLoRA are counted on a mixture of experts with routed experts only (Mixtral, Qwen3-MoE, "
        "OLMoE), not yet with shared experts (Qwen2-MoE, DeepSeek).",
    )


def _block_sequence(setup: StepSetup, full: ActivationCount) -> Iterator[dict[str, float]]:
    layers = _block_layers(setup)
    for block in range(setup.model.layers):
        yield _block_kinds(setup, full, _sites(layers.get(block, [])), block)


def method_count(setup: StepSetup, *, head_trains: bool) -> MethodCount:
    """The saved activations and transients of one step of `setup` under its training method."""
    check_counted(setup)
    full = hf_count(setup)
    t = setup.training
    if t.method == "full" and t.freeze_blocks == 0:
        return MethodCount.uniform(full, setup.model.layers)
    blocks = list(_block_sequence(setup, full))
    count = replace(
        full,
        block=blocks[-1],
        outside=_outside(setup, full, head_trains),
        forward_block_transient_bytes=_forward_transient(setup, full),
        backward_block_transient_bytes=_backward_transient(setup, full),
    )
    return MethodCount(
        count=count,
        saved_by_block=tuple(float(sum(kinds.values())) for kinds in blocks),
        backward_blocks=setup.model.layers - (t.freeze_blocks if t.method == "full" else 0),
        dequantized_weight_bytes=_dequantized_weight_bytes(setup),
    )
