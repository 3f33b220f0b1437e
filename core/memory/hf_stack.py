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
  which keeps the FP32 score matrix. Eager attention keeps Q, K and V, grouped KV heads repeated to every
  head (one KV head at batch 1 stays a view at its own width), the softmax (FP32 under autocast and in
  Llama's code) and the copy the next matmul reads; GPT-2 adds dropout's 1-byte mask and output, Gemma 2
  the tanh of its soft-capped scores (SDPA is never given the cap). Sliding-window layers (Gemma 2, 3)
  under SDPA, once the sequence reaches the window, keep their mask and K, V repeated to every head.
- Outside the blocks: the token ids, and the labels the loss shifts (at batch 1 their row padded by one).
- The loss upcasts the logits to FP32 and keeps their log-softmax (4 bytes per vocabulary entry per
  token); backward starts with two more tensors of that size. Gemma 2's final soft-capping keeps the
  tanh of the logits besides, in the logits' dtype.
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
from core.memory.sharding import block_of
from core.model_spec import ModelSpec
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
# Families whose RMSNorm multiplies its weight in FP32 and casts afterwards (Gemma's `1 + weight`, OLMo 2's
# `(weight * x).to(dtype)`), so the normalised tensor kept for the weight's gradient is FP32.
FP32_NORMALISED = (*GEMMA_NORM, "olmo2")


def sdpa_kernel(setup: StepSetup) -> str:
    """The kernel CUDA's SDPA picks: "flash" for 2-byte inputs, "efficient" for FP32, "math" for FP32
    with grouped KV heads (transformers passes enable_gqa, which the memory-efficient kernel lacks)."""
    if setup.convention.compute != "fp32":
        return "flash"
    return "math" if setup.model.kv_heads < setup.model.heads else "efficient"


def normalised_value_bytes(setup: StepSetup, input_bytes: int) -> int:
    """Bytes of a value of the normalised tensor an RMSNorm keeps for its weight's product: Llama's code
    casts it back to the input's dtype first (`input_bytes`), Gemma's keeps it in FP32."""
    return FP32 if setup.model.model_type in FP32_NORMALISED else input_bytes


def _norm_bytes(setup: StepSetup) -> float:
    """Per token, one norm: what it keeps (its output is the next layer's input and counted there)."""
    h, compute = setup.model.hidden, setup.convention.compute
    residual = FP32 if compute in ("fp32", "amp") else 2
    if setup.model.norm == "layernorm_plain":  # OLMo: F.layer_norm on an FP32 copy, no weight to multiply
        return FP32 * h + 2 * STAT_BYTES
    if setup.model.norm == "layernorm_no_bias":  # Cohere's LayerNorm in Python, all in FP32: x − mean twice
        return 3 * FP32 * h + STAT_BYTES  # (for pow and for the product), 1/σ, the normalised tensor
    if setup.model.norm == "layernorm":
        return residual * h + 2 * STAT_BYTES
    # RMSNorm: the FP32 input (an upcast copy in BF16), 1/rms, and the normalised tensor the weight multiplies
    return FP32 * h + STAT_BYTES + normalised_value_bytes(setup, residual) * h


def qk_rms_norm(spec: ModelSpec) -> bool:
    """Whether queries and keys pass an RMSNorm before attention: per head (Qwen3, Gemma 3) or over the whole
    query and key width (OLMo 2, OLMoE). Phi's, Cohere's and StableLM's QK LayerNorms are not counted."""
    return spec.norm == "rmsnorm" and spec.qk_norm in ("per_head", "per_layer")


def _qk_norm_bytes(setup: StepSetup) -> float:
    """Per token, the RMSNorms on queries and keys: over the query and key widths an FP32 copy of the
    projection's output (the output itself in FP32), one 1/rms per head (per_head) or per token (per_layer),
    and the normalised tensor. Their outputs go to RoPE, whose products keep only cos and sin."""
    m = setup.model
    if not qk_rms_norm(m):
        return 0.0
    width = m.q_width + m.kv_width
    normalised = normalised_value_bytes(setup, COMPUTE_BYTES[setup.convention.compute])
    statistics = m.heads + m.kv_heads if m.qk_norm == "per_head" else 2
    return FP32 * width + STAT_BYTES * statistics + normalised * width


def _gemma_norm_weight_bytes(setup: StepSetup) -> float:
    """One block's FP32 `1 + weight` tensors, one per GemmaRMSNorm (QK-norms included)."""
    m = setup.model
    if m.model_type not in GEMMA_NORM:
        return 0.0
    qk = 2 * m.head_dim if qk_rms_norm(m) else 0
    return float(FP32 * (m.norms_per_block * m.hidden + qk))


def _eager_kv_width(setup: StepSetup) -> int:
    """The width per token at which eager attention's matmuls keep K and V. `repeat_kv` expands grouped KV
    heads to every head and reshapes: a copy at the query width, except with one KV head, where the
    reshape is a view. `torch.matmul` then reshapes its 4-D operands to the 3-D ones `bmm` saves; that
    merges batch and heads, which the view's zero head stride allows only when the batch is 1, so with
    one KV head matmul keeps a query-width copy, or at batch 1 a view of K and V at their own width.
    (matmul is the same composite on every device, so CUDA keeps what the CPU keeps.)"""
    m = setup.model
    if m.kv_heads == m.heads or (m.kv_heads == 1 and setup.batch == 1):
        return m.kv_width
    return m.q_width


def _attention_bytes(setup: StepSetup) -> tuple[float, float, float]:
    """Per token: (Q, K, V and output kept, scores kept, projection inputs kept or cast)."""
    m, compute = setup.model, setup.convention.compute
    w = COMPUTE_BYTES[compute]
    q, kv, heads, s = m.q_width, m.kv_width, m.heads, setup.seq_len
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
    # Eager: matmul keeps Q, K and V (a copy or a view of the same size; K and V as `_eager_kv_width`
    # says), and the output is transposed into a contiguous copy for the output projection.
    kept = w * (q + 2 * _eager_kv_width(setup)) + w * q
    # The softmax output (FP32 under autocast, and always in Llama's code), then the copy the next matmul
    # reads: a BF16 cast, or with dropout its 1-byte mask and output.
    softmax = FP32 if (compute == "amp" or not gpt2) else w
    after_softmax = 0 if compute == "fp32" else 2
    if m.dropout:
        after_softmax = (2 if compute == "amp" else w) + MASK_BYTES
    # Gemma 2's soft-capping (eager only: SDPA is never given the cap) keeps tanh of the scaled scores.
    softcap = w if m.attention_softcap else 0
    return kept, (softmax + after_softmax + softcap) * heads * s, inputs


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


# LayerNorm families with layouts of their own (modeling_falcon, _bloom, _opt, _starcoder2, _gpt_bigcode),
# counted from their code; checked with saved-tensor hooks in tests/core/test_hf_stack_families_torch.py.
OWN_LAYOUTS = ("falcon", "bloom", "opt", "starcoder2", "gpt_bigcode")
SOFTMAX_IN_FP32 = ("bloom", "opt", "starcoder2", "gpt_bigcode")  # Falcon's softmax runs in the input dtype
RELU_MLP = ("opt",)  # ReLU keeps its output, which is also the next layer's input; GELU keeps its input


def own_kernel(setup: StepSetup) -> str:
    """How one of OWN_LAYOUTS computes attention: "eager" (BLOOM always builds its scores), "math" (Falcon's
    single KV head broadcast to every head, which only SDPA's math kernel accepts), or SDPA's kernel. Falcon
    always passes a mask, so it never gets the flash kernel."""
    m = setup.model
    if setup.attention == "eager" or m.model_type == "bloom":
        return "eager"
    if m.model_type == "falcon":
        return "math" if (m.kv_heads < m.heads and not m.kv_broadcast) else "efficient"
    return sdpa_kernel(setup)


def _own_kv_kept(m: ModelSpec, batch: int) -> float:
    """Key and value widths eager attention keeps beside the query. With more than one sequence, matmul
    copies Q, K and V out to every head. With one, the reshapes to (heads, s, d) are views: a query sliced
    from a fused projection keeps that projection's whole output (BLOOM, GPT-BigCode, Falcon's ALiBi path)
    beside copies of K and V, and a single KV head stays one head wide."""
    if batch > 1 or m.kv_broadcast:  # Falcon's new decoder broadcasts K and V to every head and flattens them
        return 2 * m.q_width
    if m.model_type in ("bloom", "gpt_bigcode") or (m.model_type == "falcon" and m.alibi):
        return 4 * m.kv_width  # fused output (q + 2·kv) kept by the query's view, then K and V copies
    if m.model_type == "starcoder2" and m.kv_heads < m.heads:
        return 2 * m.q_width  # Llama's eager code repeats K and V to every head
    return 2 * m.kv_width


def _own_attention(setup: StepSetup) -> tuple[float, float]:
    """Per token: (Q, K, V and what the kernel keeps, score matrices kept) for OWN_LAYOUTS."""
    m, compute = setup.model, setup.convention.compute
    w, heads, s = COMPUTE_BYTES[compute], m.heads, setup.seq_len
    kernel = own_kernel(setup)
    if kernel in ("flash", "efficient"):
        kv = m.q_width if m.kv_broadcast else m.kv_width
        # Falcon's boolean causal mask becomes a float one in every SDPA call (ALiBi's is shared, outside).
        mask = w * s if (m.model_type == "falcon" and not m.alibi) else 0
        return w * (m.q_width + 2 * kv) + LSE_BYTES * heads + mask, 0.0
    if kernel == "math" and m.model_type != "falcon":
        return w * 5 * m.q_width, w * heads * s  # transformers' enable_gqa path, as for Llama
    if kernel == "math":  # Falcon-7B: scaled Q, scaled K and V one head wide, the softmax in the input dtype
        return w * (m.q_width + 2 * m.kv_width), w * heads * s
    softmax = FP32 if (compute == "amp" or m.model_type in SOFTMAX_IN_FP32) else w
    after_softmax = 2 if (softmax == FP32 and compute != "fp32") else 0  # the cast the next matmul reads
    dropout = (MASK_BYTES + w) if m.attention_dropped else 0
    return w * (m.q_width + _own_kv_kept(m, setup.batch)), (softmax + after_softmax + dropout) * heads * s


def _own_block(setup: StepSetup) -> dict[str, float]:
    """By kind, what one block of OWN_LAYOUTS keeps for the step's tokens: its norms' inputs and statistics
    (Falcon's parallel block reads one input), the linear layers' inputs (one shared by attention and MLP
    after Falcon-7B's single norm), attention, and the MLP's activation."""
    m, compute = setup.model, setup.convention.compute
    w, h, amp = COMPUTE_BYTES[compute], m.hidden, compute == "amp"
    residual = FP32 if compute in ("fp32", "amp") else 2
    norm_inputs = 1 if m.parallel_attn else 2
    shared_input = m.parallel_attn and m.norms_per_block == 1
    attention, scores = _own_attention(setup)
    calls = 3 if m.model_type in ("opt", "starcoder2") else 1  # separate q, k, v projections cast apart
    attention_input = 2 * h * calls if amp else w * h
    mlp_input = 2 * h if amp else (0 if shared_input else w * h)
    activation = (1 if m.model_type in RELU_MLP else 2) * w * m.intermediate
    per_token = {
        "norms": norm_inputs * residual * h + 2 * m.norms_per_block * STAT_BYTES,
        "attention": attention + w * m.q_width + (0 if amp else attention_input),
        "scores": scores,
        "mlp": activation + (0 if amp else mlp_input),
        "masks": 2 * MASK_BYTES * h if m.dropout else 0,
        "casts": attention_input + mlp_input if amp else 0.0,
    }
    block = {kind: float(setup.tokens * b) for kind, b in per_token.items()}
    return block | {"attention": block["attention"] + _own_index_bytes(m)}


def _own_outside(setup: StepSetup) -> float:
    """What OWN_LAYOUTS keep outside the blocks beyond the shared count: BLOOM's norm after the embedding,
    OPT's project_in and project_out inputs, the position ids a learned table is read with (OPT computes
    them per sequence, GPT-BigCode one row for the batch)."""
    m, w, tokens = setup.model, COMPUTE_BYTES[setup.convention.compute], setup.tokens
    residual = FP32 if setup.convention.compute in ("fp32", "amp") else 2
    embedding_norm = residual * m.hidden + 2 * STAT_BYTES if m.embedding_norm else 0
    projections = w * (m.embed_width + m.hidden) if m.embedding_width else 0
    position_ids = {"opt": tokens, "gpt_bigcode": setup.seq_len}.get(m.model_type, 0) * ID_BYTES
    return float(tokens * (embedding_norm + projections) + position_ids)


def _own_index_bytes(m: ModelSpec) -> float:
    """Falcon picks K and V out of its fused projection with `[-2]` and `[-1]` (multi-query and the new
    decoder): indexing keeps the two one-value int64 index tensors."""
    return 2.0 * ID_BYTES if m.model_type == "falcon" and (m.kv_broadcast or m.kv_heads < m.heads) else 0.0


def _own_masks(setup: StepSetup) -> tuple[float, float]:
    """(held through the forward, kept for backward): Falcon and BLOOM always build their causal mask, Falcon
    with its ALiBi folded in, one per head (BLOOM adds its ALiBi apart); under SDPA Falcon's ALiBi mask is
    kept by every layer until backward."""
    m, c = setup.model, setup.convention
    mask_bytes = 2 if c.compute == "bf16" else FP32
    per_head = m.alibi and m.model_type == "falcon"
    rows = setup.batch * setup.seq_len**2 * (m.heads if per_head else 1)
    if own_kernel(setup) == "eager":
        return float(rows * mask_bytes), 0.0
    if m.model_type == "falcon":
        return (0.0, float(rows * mask_bytes)) if m.alibi else (float(rows * MASK_BYTES), 0.0)
    return 0.0, 0.0


def token_id_bytes(setup: StepSetup) -> int:
    """The int64 ids kept outside the blocks: the embedding's token ids, and the labels the loss keeps.
    `ForCausalLMLoss` pads the labels by one ignored position and makes `labels[..., 1:]` contiguous: a
    copy of batch × seq ids, but at batch 1 the slice is contiguous already, so the padded row
    (seq + 1 ids) is what stays."""
    labels = setup.seq_len + 1 if setup.batch == 1 else setup.tokens
    return ID_BYTES * (setup.tokens + labels)


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
        "norms": tokens * (m.norms_per_block * _norm_bytes(setup) + _qk_norm_bytes(setup))
        + _gemma_norm_weight_bytes(setup),
        "attention": tokens * (attention + (0 if amp else attention_inputs)) + _sliding_window_bytes(setup),
        "scores": tokens * scores,
        "mlp": tokens * (mlp + (0 if amp or parallel else mlp_inputs)),
        "masks": float(tokens * masks),
        "casts": tokens * (attention_inputs + mlp_inputs if amp else 0.0),
        "weight_copies": _block_weight_copy_bytes(setup) + _router_weight_copy_bytes(setup),
    }
    own = m.model_type in OWN_LAYOUTS
    if own:
        block = {**_own_block(setup), "weight_copies": block["weight_copies"]}
    residual = FP32 if c.compute in ("fp32", "amp") else 2
    head_input = 2 * m.embed_width if c.compute == "amp" else w * m.embed_width
    embedding_mask = MASK_BYTES * m.hidden if m.dropout else 0
    # A learned position table's lookup keeps its int64 position ids: one row, shared by the batch (the
    # families with layouts of their own count theirs in `_own_outside`).
    position_ids = ID_BYTES * setup.seq_len if m.positions and not own else 0
    final_norm = _norm_bytes(setup) if m.final_norm else 0
    held_mask, kept_mask = _own_masks(setup) if own else (0.0, 0.0)
    outside = {
        "loss": float(tokens * (FP32 + _logit_softcap_bytes(setup)) * m.vocab),
        "other": float(tokens * (final_norm + head_input + embedding_mask) + token_id_bytes(setup))
        + _gemma_outside_bytes(setup)
        + position_ids
        + _own_outside(setup),
        "scores": kept_mask,
        "weight_copies": 2.0 * m.vocab * m.hidden if c.compute == "amp" else 0.0,
    }
    logits = tokens * m.vocab * (FP32 if c.compute == "fp32" else 2)
    upcast = 0 if c.compute == "fp32" else tokens * FP32 * m.vocab
    kernel = own_kernel(setup) if own else sdpa_kernel(setup)
    eager = setup.attention == "eager" or kernel in ("eager", "math")
    score_bytes = tokens * m.heads * setup.seq_len * (FP32 if c.compute != "bf16" else 2)
    mlp_transient = 2 * tokens * w * m.intermediate
    return ActivationCount(
        block=block,
        block_input_bytes=float(tokens * residual * m.hidden),
        outside=outside,
        forward_block_transient_bytes=float(max(2 * score_bytes if eager else 0, mlp_transient)),
        forward_shared_bytes=float(held_mask if own else _shared_mask_bytes(setup)),
        loss_forward_transient_bytes=float(logits + upcast),
        loss_backward_transient_bytes=float(2 * tokens * FP32 * m.vocab),
        backward_block_transient_bytes=float(
            max(tokens * m.heads * setup.seq_len * FP32 if eager else 0, mlp_transient)
        ),
    )
