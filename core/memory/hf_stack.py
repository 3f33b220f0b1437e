"""Saved activations and transients of a training step as PyTorch + Hugging Face transformers 5.x run it
on a CUDA GPU, derived from the modeling code of GPT-2 (`modeling_gpt2.py`) and Llama, Mistral and
Qwen2 (`modeling_llama.py` and its copies), and from what each autograd node saves.

Per token, in bytes; w is the bytes of a matmul output (4 in FP32, 2 in BF16 and under autocast),
r the bytes of the residual stream (FP32 under autocast, where the embeddings stay FP32):

- LayerNorm keeps its input and two FP32 statistics; Hugging Face's RMSNorm upcasts to FP32 and keeps
  that copy, 1/rms, and the normalised tensor before the weight (FP32, or its BF16 cast).
- A linear layer keeps its input. Under `torch.autocast` every linear call keeps its own BF16 cast of
  its input (q, k and v each cast the norm's output) and the BF16 copy of its weight.
- GPT-2's `gelu_new` is written in Python: `pow`, `tanh` and two products keep four I-wide tensors
  (FP32 ones under autocast, where CUDA runs `pow` in FP32).
- SwiGLU keeps the gate output, its SiLU, the up projection and their product.
- SDPA on a CUDA GPU runs a flash kernel (BF16) or the memory-efficient kernel (FP32) that keep Q, K,
  V, the output and a log-sum-exp per head; grouped KV heads in FP32 fall back to the math kernel,
  which keeps the FP32 score matrix. Eager attention keeps the softmax (FP32 under autocast and in
  Llama's code) and the copy the next matmul reads; GPT-2 adds dropout's 1-byte mask and output.
- The loss upcasts the logits to FP32 and keeps their log-softmax (4 bytes per vocabulary entry per
  token); backward starts with two more tensors of that size.
- Families whose blocks differ (their modeling files in transformers 5.17): DeepSeek's latent attention
  keeps wider queries and keys than values and the latents' norms; MoE blocks (transformers' grouped_mm
  experts) keep per routed expert what a small gated MLP keeps, plus routing indices; a parallel block
  (Phi, Cohere, StableLM) runs one norm whose output attention and MLP share; OLMo's LayerNorm has no
  weight and Cohere's is written in Python. Checked with saved-tensor hooks on the CPU
  (tests/core/test_hf_stack_families_torch.py).
"""

from __future__ import annotations

from core.memory.count import ActivationCount
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup

FP32 = 4
STAT_BYTES = 4  # one FP32 statistic per token (mean, 1/σ, 1/rms)
LSE_BYTES = 4  # the flash / memory-efficient kernels' FP32 log-sum-exp, one per head and token
MASK_BYTES = 1  # a CUDA dropout mask is bool
ID_BYTES = 8  # int64 token ids and labels


def sdpa_kernel(setup: StepSetup) -> str:
    """The kernel CUDA's SDPA picks: "flash" for 2-byte inputs, "efficient" for FP32, "math" for FP32
    with grouped KV heads (transformers passes enable_gqa, which the memory-efficient kernel lacks)."""
    if setup.convention.compute != "fp32":
        return "flash"
    return "math" if setup.model.kv_heads < setup.model.heads else "efficient"


def _norm_bytes(setup: StepSetup) -> float:
    """Per token, one norm: what it keeps (its output is the next layer's input and counted there)."""
    h, compute = setup.model.hidden, setup.convention.compute
    if setup.model.norm == "layernorm_plain":  # OLMo: F.layer_norm on an FP32 copy, no weight to multiply
        return FP32 * h + 2 * STAT_BYTES
    if setup.model.norm == "layernorm_no_bias":  # Cohere's LayerNorm in Python, all in FP32: x − mean twice
        return 3 * FP32 * h + STAT_BYTES  # (for pow and for the product), 1/σ, the normalised tensor
    if setup.model.norm == "layernorm":
        residual = FP32 if compute in ("fp32", "amp") else 2
        return residual * h + 2 * STAT_BYTES
    # RMSNorm: the FP32 input (an upcast copy in BF16), 1/rms, and the normalised tensor the weight multiplies
    normalised = 2 if compute == "bf16" else FP32
    return FP32 * h + STAT_BYTES + normalised * h


def _attention_bytes(setup: StepSetup) -> tuple[float, float, float]:
    """Per token: (Q, K, V and output kept, scores kept, projection inputs kept or cast)."""
    m, compute = setup.model, setup.convention.compute
    w = COMPUTE_BYTES[compute]
    q, kv, heads, s = m.hidden, m.kv_width, m.heads, setup.seq_len
    gpt2 = m.norm == "layernorm" and m.model_type != "stablelm"  # StableLM has LayerNorms and Llama's q, k, v
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
    return kept, (softmax + after_softmax) * heads * s, inputs


def _latent_norm_bytes(setup: StepSetup, width: int, stored: int) -> float:
    """Per token, an RMSNorm over a `width`-wide latent and the up-projection's input: FP32 input (in FP32 the
    whole `stored`-wide projection output it is a view of), 1/rms, the normalised tensor, its output."""
    compute, w = setup.convention.compute, COMPUTE_BYTES[setup.convention.compute]
    normalised = 2 if compute == "bf16" else FP32
    return FP32 * (stored if compute == "fp32" else width) + STAT_BYTES + normalised * width + w * width


def _latent_attention_bytes(setup: StepSetup) -> tuple[float, float, float]:
    """Per token, DeepSeek's multi-head latent attention (`modeling_deepseek_v3.py`): (kept, scores, input).

    Queries are heads × head_dim wide (no-rope and rotary parts concatenated into a new tensor), keys the
    same (built by copying into `new_empty`), values are a view of kv_b_proj's heads × (nope + v) output;
    the output projection reads heads × v_head_dim. Each latent keeps its RMSNorm and the up-projection's
    input. (V3's interleaved rotary code also keeps a slice of the rotary tables a block: 4 bytes per
    rotary channel and token, uncounted.)"""
    m, compute = setup.model, setup.convention.compute
    w, heads, rope = COMPUTE_BYTES[compute], m.heads, m.qk_rope_head_dim
    qk, values, out = m.q_width, heads * (m.head_dim - rope + m.v_head_dim), heads * m.v_head_dim
    latents = _latent_norm_bytes(setup, m.kv_lora_rank, m.kv_lora_rank + rope)
    if m.q_lora_rank:
        latents += _latent_norm_bytes(setup, m.q_lora_rank, m.q_lora_rank)
    # Under autocast q_a_proj (or q_proj) and kv_a_proj_with_mqa each cast the norm's output to BF16.
    inputs = 2 * 2 * m.hidden if compute == "amp" else w * m.hidden
    if setup.attention == "sdpa" and sdpa_kernel(setup) != "math":
        return w * (2 * qk + values + 2 * out) + LSE_BYTES * heads + latents, 0.0, inputs
    softmax_copy = 0 if compute == "fp32" else 2
    return w * (2 * qk + values + out) + latents, (FP32 + softmax_copy) * heads * setup.seq_len, inputs


# DeepSeek's routers score in FP32: F.linear(hidden.float(), weight.float()) keeps an FP32 copy of the
# input and of the router's weight when the model runs in BF16.
FP32_ROUTERS = ("deepseek_v2", "deepseek_v3")


def _fp32_router(setup: StepSetup) -> bool:
    return setup.model.model_type in FP32_ROUTERS and setup.convention.compute == "bf16"


def _router_weight_copy_bytes(setup: StepSetup) -> float:
    """Per block (the mean over dense and MoE blocks), the FP32 copy of an FP32-scoring router's weight."""
    m = setup.model
    return FP32 * m.experts * m.hidden * m.moe_layers / m.layers if _fp32_router(setup) else 0.0


def _moe_token_bytes(setup: StepSetup) -> float:
    """Per token, what an MoE block keeps (transformers' grouped_mm experts, `integrations/moe.py`): for
    each of its routed experts the gathered input, gate_up output, SiLU output, their product, the expert's
    output and routing weight, with three int64 indices and a bool mask; the router's scores and top-k
    indices; a shared expert's gated MLP."""
    m, w = setup.model, COMPUTE_BYTES[setup.convention.compute]
    h, i, k = m.hidden, m.expert_intermediate, m.active_experts
    routed = k * (w * (2 * h + 4 * i) + FP32 + 3 * ID_BYTES + MASK_BYTES)
    router = FP32 * m.experts + ID_BYTES * k + (FP32 * h if _fp32_router(setup) else 0)
    return routed + router + 4 * w * m.shared_expert_intermediate


def _mlp_bytes(setup: StepSetup) -> tuple[float, float]:
    """Per token: (MLP intermediates kept, MLP inputs kept or cast); for an MoE model the mean over its
    dense and MoE blocks."""
    m, compute = setup.model, setup.convention.compute
    w, h, i = COMPUTE_BYTES[compute], m.hidden, m.intermediate
    if m.is_moe:
        dense = len(m.dense_layers)
        kept = (dense * 4 * w * i + m.moe_layers * _moe_token_bytes(setup)) / m.layers
        return kept, 2 * 2 * h if compute == "amp" else w * h
    if m.gated_mlp:
        inputs = 2 * 2 * h if compute == "amp" else w * h
        return 4 * w * i, inputs
    if compute == "amp":  # pow's FP32 input and tanh, 0.5·x in BF16, 1 + tanh in FP32; c_proj's BF16 cast
        return (4 + 4 + 2 + 4) * i + 2 * i, 2 * h
    return 4 * w * i + w * i, w * h


def _block_weight_copy_bytes(setup: StepSetup) -> float:
    """Autocast's BF16 copies of one block's linear weights (and biases), kept until its backward."""
    if setup.convention.compute != "amp":
        return 0.0
    per_norm = 2 * setup.model.hidden if setup.model.norm == "layernorm" else setup.model.hidden
    return 2.0 * (setup.block_parameters - 2 * per_norm)


def hf_count(setup: StepSetup) -> ActivationCount:
    """What Hugging Face's code keeps and briefly holds in one step of `setup`, by kind (bytes)."""
    m, c = setup.model, setup.convention
    tokens, w = setup.tokens, COMPUTE_BYTES[c.compute]
    attention, scores, attention_inputs = (_latent_attention_bytes if m.is_mla else _attention_bytes)(setup)
    mlp, mlp_inputs = _mlp_bytes(setup)
    masks = 2 * MASK_BYTES * m.hidden if m.dropout else 0
    amp = c.compute == "amp"
    # A parallel block (Phi, Cohere, StableLM's parallel residual) runs one norm whose output attention and
    # MLP both read: outside autocast the MLP keeps the very tensor attention keeps.
    parallel = m.norms_per_block == 1
    block = {
        "norms": tokens * (1 if parallel else 2) * _norm_bytes(setup),
        "attention": tokens * (attention + (0 if amp else attention_inputs)),
        "scores": tokens * scores,
        "mlp": tokens * (mlp + (0 if amp or parallel else mlp_inputs)),
        "masks": float(tokens * masks),
        "casts": tokens * (attention_inputs + mlp_inputs if amp else 0.0),
        "weight_copies": _block_weight_copy_bytes(setup) + _router_weight_copy_bytes(setup),
    }
    residual = FP32 if c.compute in ("fp32", "amp") else 2
    head_input = 2 * m.hidden if c.compute == "amp" else w * m.hidden
    embedding_mask = MASK_BYTES * m.hidden if m.dropout else 0
    outside = {
        "loss": float(tokens * FP32 * m.vocab),
        "other": float(tokens * (_norm_bytes(setup) + head_input + embedding_mask + 2 * ID_BYTES)),
        "weight_copies": 2.0 * m.vocab * m.hidden if c.compute == "amp" else 0.0,
    }
    logits = tokens * m.vocab * (FP32 if c.compute == "fp32" else 2)
    upcast = 0 if c.compute == "fp32" else tokens * FP32 * m.vocab
    eager = setup.attention == "eager" or sdpa_kernel(setup) == "math"
    score_bytes = tokens * m.heads * setup.seq_len * (FP32 if c.compute != "bf16" else 2)
    mlp_transient = 2 * tokens * w * m.intermediate
    causal_mask = setup.batch * setup.seq_len**2 * (2 if c.compute == "bf16" else FP32)
    return ActivationCount(
        block=block,
        block_input_bytes=float(tokens * residual * m.hidden),
        outside=outside,
        forward_block_transient_bytes=float(max(2 * score_bytes if eager else 0, mlp_transient)),
        forward_shared_bytes=float(causal_mask if setup.attention == "eager" else 0),
        loss_forward_transient_bytes=float(logits + upcast),
        loss_backward_transient_bytes=float(2 * tokens * FP32 * m.vocab),
        backward_block_transient_bytes=float(
            max(tokens * m.heads * setup.seq_len * FP32 if eager else 0, mlp_transient)
        ),
    )
