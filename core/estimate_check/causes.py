"""The known causes of a gap between the detailed estimate and PyTorch's bytes, computed from the shapes of a
measured run: each says how many bytes of the gap it accounts for."""

from __future__ import annotations

from dataclasses import dataclass

from core.estimate_check.setups import FUSED_ATTENTION_KINDS, PRECISION_OF_DTYPE, weight_tensor_count
from core.measured import MeasuredRun
from core.memory.settings import precision

# Every known cause of a gap, by key; what each is in words is in data/lessons/memory/sentences.toml.
CAUSES = ("cpu_rmsnorm", "qkv_view", "softmax_statistics", "norm_statistics", "token_ids", "step_counters")
# Causes that come from unfused Python code (the CPU runs here, and transformers' RMSNorm on a GPU as well)
# rather than from the fused-kernel stack this estimate models; core.memory.hf_stack counts them.
PLATFORM_CAUSES = ("cpu_rmsnorm",)

FP32_BYTES = 4
INDEX_BYTES = 8  # int64, how PyTorch keeps token ids and positions


@dataclass(frozen=True)
class Cause:
    """Part of a gap, computed from the shapes: measured minus estimated bytes it accounts for."""

    key: str
    explained_bytes: int


def _cause(key: str, explained_bytes: int) -> Cause:
    return Cause(key, explained_bytes)


def _value_bytes(run: MeasuredRun) -> int:
    return precision(PRECISION_OF_DTYPE[run.dtype]).activation_bytes


def _norm_causes(run: MeasuredRun, norms: int) -> list[Cause]:
    """What `norms` norms over every token keep beyond their input (the only thing the estimate counts)."""
    tokens, h, size = run.batch * run.seq_len, run.spec.hidden, _value_bytes(run)
    if run.spec.norm == "rmsnorm":
        # FP32 copies of input and output (the input itself when it is FP32 already) and 1/rms per token.
        extra = (2 * FP32_BYTES - size) * h + FP32_BYTES
        return [_cause("cpu_rmsnorm", norms * tokens * extra)]
    # A pure-precision LayerNorm on the CPU keeps its mean and 1/σ in the input's dtype.
    return [_cause("norm_statistics", norms * tokens * 2 * size)]


def layer_causes(run: MeasuredRun) -> list[Cause]:
    """What the blocks keep beyond the estimate's count, all layers together."""
    if run.recompute == "full":
        return []  # a recomputed block keeps its input only, exactly what the estimate counts
    spec, tokens, size = run.spec, run.batch * run.seq_len, _value_bytes(run)
    causes = _norm_causes(run, 2)
    fused = run.attention in FUSED_ATTENTION_KINDS and run.recompute == "none"
    if fused:
        causes.append(_cause("softmax_statistics", tokens * spec.heads * FP32_BYTES))
    if spec.positions == 0 and (fused or run.recompute == "selective"):
        causes.append(_cause("qkv_view", tokens * (spec.hidden + spec.kv_width) * size))
    return [_cause(c.key, spec.layers * c.explained_bytes) for c in causes]


def other_causes(run: MeasuredRun) -> list[Cause]:
    """What the rest of the model keeps beyond the estimate's count: the final norm's extras and token ids."""
    tokens = run.batch * run.seq_len
    positions = run.seq_len if run.spec.positions else 0
    ids = INDEX_BYTES * (2 * tokens + positions)  # inputs and targets per token, one position index per place
    return [*_norm_causes(run, 1), _cause("token_ids", ids)]


def step_causes(run: MeasuredRun) -> list[Cause]:
    """Adam's step counters, which the estimate leaves out."""
    if run.optimizer != "adam":
        return []
    return [_cause("step_counters", FP32_BYTES * weight_tensor_count(run.spec))]
