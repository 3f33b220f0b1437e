"""Saved activations and transients of a training step as PyTorch + Hugging Face transformers 5.x run it
on a CUDA GPU, derived from the modeling code of GPT-2 (`modeling_gpt2.py`), Llama, Mistral and Qwen2
(`modeling_llama.py` and its copies), Qwen3 and Gemma 1, 2 and 3, and from what each autograd node saves
(checked block by block with saved-tensor hooks: tests/core/test_hf_stack_saved_tensors.py).

Per token, in bytes; w is the bytes of a matmul output (4 in FP32, 2 in BF16 and under autocast),
r the bytes of the residual stream (FP32 under autocast, where the embeddings stay FP32):

- LayerNorm keeps its input and two FP32 statistics; Hugging Face's RMSNorm upcasts to FP32 and keeps
  that copy, 1/rms, and the normalised tensor before the weight (FP32, or its BF16 cast).
- Gemma's RMSNorm multiplies by `1 + weight` in FP32 before casting back, so it keeps the normalised
  tensor in FP32 at every precision (and `1 + weight`); Gemma 2 and 3 have four norms a block.
- Qwen3 and Gemma 3 run an RMSNorm over each head of Q and K (an FP32 copy, 1/rms per head, the
  normalised tensor); RoPE's products keep only cos and sin.
- A linear layer keeps its input. Under `torch.autocast` every linear call keeps its own BF16 cast of
  its input (q, k and v each cast the norm's output) and the BF16 copy of its weight (not of its bias).
- GPT-2's `gelu_new` is written in Python: `pow`, `tanh` and two products keep four I-wide tensors
  (FP32 ones under autocast, where CUDA runs `pow` in FP32).
- SwiGLU keeps the gate output, its SiLU, the up projection and their product.
- SDPA on a CUDA GPU runs a flash kernel (BF16) or the memory-efficient kernel (FP32) that keep Q, K,
  V, the output and a log-sum-exp per head; grouped KV heads in FP32 fall back to the math kernel,
  which keeps the FP32 score matrix. Eager attention keeps the softmax (FP32 under autocast and in
  Llama's code) and the copy the next matmul reads; GPT-2 adds dropout's 1-byte mask and output, Gemma 2
  the tanh of its soft-capped scores (SDPA is never given the cap). Sliding-window layers (Gemma 2, 3)
  under SDPA, once the sequence reaches the window, keep their mask and K, V repeated to every head.
- The loss upcasts the logits to FP32 and keeps their log-softmax (4 bytes per vocabulary entry per
  token); backward starts with two more tensors of that size. Gemma 2's final soft-capping keeps the
  tanh of the logits besides, in the logits' dtype.
"""

from __future__ import annotations

from core.memory.count import ActivationCount
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup
from core.memory.sharding import block_of
from core.model_tensors import model_tensors

FP32 = 4
STAT_BYTES = 4  # one FP32 statistic per token (mean, 1/σ, 1/rms)
LSE_BYTES = 4  # the flash / memory-efficient kernels' FP32 log-sum-exp, one per head and token
MASK_BYTES = 1  # a CUDA dropout mask is bool
ID_BYTES = 8  # int64 token ids and labels
# GemmaRMSNorm (Gemma, Gemma 2, Gemma 3) multiplies the FP32 normalised tensor by `1 + weight` in FP32 and
# only then casts back, so it keeps that tensor in FP32 at every precision, and `1 + weight` besides.
GEMMA_NORM = ("gemma", "gemma2", "gemma3_text")
# Families whose attention runs an RMSNorm over each head of the queries and keys before RoPE.
QK_RMS_NORM = ("qwen3", "qwen3_moe", "gemma3_text")


def sdpa_kernel(setup: StepSetup) -> str:
    """The kernel CUDA's SDPA picks: "flash" for 2-byte inputs, "efficient" for FP32, "math" for FP32
    with grouped KV heads (transformers passes enable_gqa, which the memory-efficient kernel lacks)."""
    if setup.convention.compute != "fp32":
        return "flash"
    return "math" if setup.model.kv_heads < setup.model.heads else "efficient"


def normalised_value_bytes(setup: StepSetup, input_bytes: int) -> int:
    """Bytes of a value of the normalised tensor an RMSNorm keeps for its weight's product: Llama's code
    casts it back to the input's dtype first (`input_bytes`), Gemma's keeps it in FP32."""
    return FP32 if setup.model.model_type in GEMMA_NORM else input_bytes


def _norm_bytes(setup: StepSetup) -> float:
    """Per token, one norm: what it keeps (its output is the next layer's input and counted there)."""
    h, compute = setup.model.hidden, setup.convention.compute
    residual = FP32 if compute in ("fp32", "amp") else 2
    if setup.model.norm == "layernorm":
        return residual * h + 2 * STAT_BYTES
    # RMSNorm: the FP32 input (an upcast copy in BF16), 1/rms, and the normalised tensor the weight multiplies
    return FP32 * h + STAT_BYTES + normalised_value_bytes(setup, residual) * h


def _qk_norm_bytes(setup: StepSetup) -> float:
    """Per token, the per-head RMSNorms on queries and keys (Qwen3, Gemma 3): over the query and key widths
    an FP32 copy of the projection's output (the output itself in FP32), one 1/rms per head, and the
    normalised tensor. Their outputs go to RoPE, whose products keep only cos and sin."""
    m = setup.model
    if m.model_type not in QK_RMS_NORM:
        return 0.0
    width = m.q_width + m.kv_width
    normalised = normalised_value_bytes(setup, COMPUTE_BYTES[setup.convention.compute])
    return FP32 * width + STAT_BYTES * (m.heads + m.kv_heads) + normalised * width


def _gemma_norm_weight_bytes(setup: StepSetup) -> float:
    """One block's FP32 `1 + weight` tensors, one per GemmaRMSNorm (QK-norms included)."""
    m = setup.model
    if m.model_type not in GEMMA_NORM:
        return 0.0
    qk = 2 * m.head_dim if m.model_type in QK_RMS_NORM else 0
    return float(FP32 * (m.norms_per_block * m.hidden + qk))


def _attention_bytes(setup: StepSetup) -> tuple[float, float, float]:
    """Per token: (Q, K, V and output kept, scores kept, projection inputs kept or cast)."""
    m, compute = setup.model, setup.convention.compute
    w = COMPUTE_BYTES[compute]
    q, kv, heads, s = m.q_width, m.kv_width, m.heads, setup.seq_len
    gpt2 = m.norm == "layernorm"
    # Inputs of the projections: one shared input, or under autocast one BF16 cast per linear call.
    calls = 1 if gpt2 else 3
    inputs = 2 * m.hidden * calls if compute == "amp" else w * m.hidden
    if setup.attention == "sdpa":
        kernel = sdpa_kernel(setup)
        if kernel == "math":  # scaled Q and K, V repeated to every head, output and its transposed copy
            return w * 5 * q, w * heads * s, inputs
        lse = LSE_BYTES * heads
        kept = w * (3 * q if gpt2 else q + 2 * kv) + w * q + lse
        return kept, 0.0, inputs
    # Eager: matmul keeps contiguous Q, K, V (GPT-2 copies its views; grouped KV heads are repeated), and
    # the output is transposed into a contiguous copy for the output projection.
    kv_kept = q if (gpt2 or m.kv_heads < m.heads) else kv
    kept = w * (q + 2 * kv_kept) + w * q
    # The softmax output (FP32 under autocast, and always in Llama's code), then the copy the next matmul
    # reads: a BF16 cast, or with dropout its 1-byte mask and output.
    softmax = FP32 if (compute == "amp" or not gpt2) else w
    after_softmax = 0 if compute == "fp32" else 2
    if m.dropout:
        after_softmax = (2 if compute == "amp" else w) + MASK_BYTES
    # Gemma 2's soft-capping (eager only: SDPA is never given the cap) keeps tanh of the scaled scores.
    softcap = w if m.attention_softcap else 0
    return kept, (softmax + after_softmax + softcap) * heads * s, inputs


def _mlp_bytes(setup: StepSetup) -> tuple[float, float]:
    """Per token: (MLP intermediates kept, MLP inputs kept or cast)."""
    m, compute = setup.model, setup.convention.compute
    w, h, i = COMPUTE_BYTES[compute], m.hidden, m.intermediate
    if m.gated_mlp:
        inputs = 2 * 2 * h if compute == "amp" else w * h
        return 4 * w * i, inputs
    if compute == "amp":  # pow's FP32 input and tanh, 0.5·x in BF16, 1 + tanh in FP32; c_proj's BF16 cast
        return (4 + 4 + 2 + 4) * i + 2 * i, 2 * h
    return 4 * w * i + w * i, w * h


def _linear_bias_values(setup: StepSetup) -> int:
    """Values in one block's linear-layer biases (the first block's; norms' biases are not counted)."""
    return sum(
        t.numel
        for t in model_tensors(setup.model)
        if block_of(t.name) == 0 and t.name.endswith(".bias") and t.part != "norms"
    )


def _block_weight_copy_bytes(setup: StepSetup) -> float:
    """Autocast's BF16 copies of one block's linear weights, kept until its backward. A bias's copy is
    made (and cached) too, but no node keeps it: addmm's bias gradient is a sum that reads nothing."""
    if setup.convention.compute != "amp":
        return 0.0
    per_norm = 2 * setup.model.hidden if setup.model.norm == "layernorm" else setup.model.hidden
    return 2.0 * (setup.block_parameters - 2 * per_norm - _linear_bias_values(setup))


def _windowed(setup: StepSetup) -> bool:
    """Whether transformers builds a sliding-window mask for SDPA: some layers have a window, and the
    sequence reaches it (below it the window hides nothing and SDPA runs causal, with no mask)."""
    m = setup.model
    return setup.attention == "sdpa" and m.sliding_layers > 0 and setup.seq_len >= m.sliding_window


def _sliding_window_bytes(setup: StepSetup) -> float:
    """A block's share of what its sliding-window layers keep beyond a causal layer under SDPA (whole
    batch). Each such layer hands SDPA the mask, which SDPA converts to the queries' dtype and the kernel
    keeps (flash kernels take no mask, so CUDA runs the memory-efficient one, keeping the same Q, K, V,
    output and log-sum-exp); transformers then repeats grouped KV heads to every head itself, a copy of
    K and V at the query width (with one KV head the repeat is a view). FP32 with grouped KV heads is
    counted as the math kernel in every layer, which keeps the whole score matrix already."""
    m = setup.model
    if not _windowed(setup) or sdpa_kernel(setup) == "math":
        return 0.0
    w = COMPUTE_BYTES[setup.convention.compute]
    mask = setup.batch * setup.seq_len**2 * w
    repeated = 2 * w * (m.q_width - m.kv_width) * setup.tokens if m.kv_heads > 1 else 0
    return m.sliding_layers / m.layers * (mask + repeated)


def _shared_mask_bytes(setup: StepSetup) -> float:
    """Masks held through the forward: eager attention's additive causal mask (Gemma 2 and 3 build a
    sliding-window one beside it), or under SDPA the boolean sliding-window mask once it is needed (one
    sequence's, broadcast over the batch)."""
    m, s = setup.model, setup.seq_len
    if setup.attention == "eager":
        masks = 2 if m.sliding_window else 1
        return masks * setup.batch * s**2 * (2 if setup.convention.compute == "bf16" else FP32)
    return float(s**2) if _windowed(setup) else 0.0


def _logit_softcap_bytes(setup: StepSetup) -> int:
    """Per vocabulary entry and token: Gemma 2's final soft-capping (logits / cap, tanh, × cap) keeps the
    tanh, in the logits' dtype; dividing and multiplying by a number keep nothing."""
    if not setup.model.logit_softcap:
        return 0
    return FP32 if setup.convention.compute == "fp32" else 2


def gemma_embedding_scale_bytes(setup: StepSetup) -> int:
    """Gemma's √hidden scale of its embeddings, cast to the embedding's dtype and kept by the product for
    the embedding's gradient (the embedding's output itself is not kept); 0 for other families."""
    if setup.model.model_type not in GEMMA_NORM:
        return 0
    return 2 if setup.convention.compute == "bf16" else FP32


def _gemma_outside_bytes(setup: StepSetup) -> float:
    """Gemma's final norm's FP32 `1 + weight`, and the scale of its embeddings."""
    if setup.model.model_type not in GEMMA_NORM:
        return 0.0
    return float(FP32 * setup.model.hidden + gemma_embedding_scale_bytes(setup))


def hf_count(setup: StepSetup) -> ActivationCount:
    """What Hugging Face's code keeps and briefly holds in one step of `setup`, by kind (bytes)."""
    m, c = setup.model, setup.convention
    tokens, w = setup.tokens, COMPUTE_BYTES[c.compute]
    attention, scores, attention_inputs = _attention_bytes(setup)
    mlp, mlp_inputs = _mlp_bytes(setup)
    masks = 2 * MASK_BYTES * m.hidden if m.dropout else 0
    amp = c.compute == "amp"
    block = {
        "norms": tokens * (m.norms_per_block * _norm_bytes(setup) + _qk_norm_bytes(setup))
        + _gemma_norm_weight_bytes(setup),
        "attention": tokens * (attention + (0 if amp else attention_inputs)) + _sliding_window_bytes(setup),
        "scores": tokens * scores,
        "mlp": tokens * (mlp + (0 if amp else mlp_inputs)),
        "masks": float(tokens * masks),
        "casts": tokens * (attention_inputs + mlp_inputs if amp else 0.0),
        "weight_copies": _block_weight_copy_bytes(setup),
    }
    residual = FP32 if c.compute in ("fp32", "amp") else 2
    head_input = 2 * m.hidden if c.compute == "amp" else w * m.hidden
    embedding_mask = MASK_BYTES * m.hidden if m.dropout else 0
    # A learned position table's lookup keeps its int64 position ids: one row, shared by the batch.
    position_ids = ID_BYTES * setup.seq_len if m.positions else 0
    outside = {
        "loss": float(tokens * (FP32 + _logit_softcap_bytes(setup)) * m.vocab),
        "other": float(tokens * (_norm_bytes(setup) + head_input + embedding_mask + 2 * ID_BYTES))
        + _gemma_outside_bytes(setup)
        + position_ids,
        "weight_copies": 2.0 * m.vocab * m.hidden if c.compute == "amp" else 0.0,
    }
    logits = tokens * m.vocab * (FP32 if c.compute == "fp32" else 2)
    upcast = 0 if c.compute == "fp32" else tokens * FP32 * m.vocab
    eager = setup.attention == "eager" or sdpa_kernel(setup) == "math"
    score_bytes = tokens * m.heads * setup.seq_len * (FP32 if c.compute != "bf16" else 2)
    mlp_transient = 2 * tokens * w * m.intermediate
    return ActivationCount(
        block=block,
        block_input_bytes=float(tokens * residual * m.hidden),
        outside=outside,
        forward_block_transient_bytes=float(max(2 * score_bytes if eager else 0, mlp_transient)),
        forward_shared_bytes=_shared_mask_bytes(setup),
        loss_forward_transient_bytes=float(logits + upcast),
        loss_backward_transient_bytes=float(2 * tokens * FP32 * m.vocab),
        backward_block_transient_bytes=float(
            max(tokens * m.heads * setup.seq_len * FP32 if eager else 0, mlp_transient)
        ),
    )
