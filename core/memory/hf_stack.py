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
"""

from __future__ import annotations

from core.memory.count import ActivationCount
from core.memory.settings import COMPUTE_BYTES
from core.memory.setup import StepSetup
from core.model_spec import ModelSpec

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
    return kept, (softmax + after_softmax) * heads * s, inputs


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


def _block_weight_copy_bytes(setup: StepSetup) -> float:
    """Autocast's BF16 copies of one block's linear weights (and biases), kept until its backward."""
    if setup.convention.compute != "amp":
        return 0.0
    per_norm = 2 * setup.model.hidden if setup.model.norm == "layernorm" else setup.model.hidden
    return 2.0 * (setup.block_parameters - 2 * per_norm)


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


def hf_count(setup: StepSetup) -> ActivationCount:
    """What Hugging Face's code keeps and briefly holds in one step of `setup`, by kind (bytes)."""
    m, c = setup.model, setup.convention
    tokens, w = setup.tokens, COMPUTE_BYTES[c.compute]
    attention, scores, attention_inputs = _attention_bytes(setup)
    mlp, mlp_inputs = _mlp_bytes(setup)
    masks = 2 * MASK_BYTES * m.hidden if m.dropout else 0
    amp = c.compute == "amp"
    block = {
        "norms": tokens * 2 * _norm_bytes(setup),
        "attention": tokens * (attention + (0 if amp else attention_inputs)),
        "scores": tokens * scores,
        "mlp": tokens * (mlp + (0 if amp else mlp_inputs)),
        "masks": float(tokens * masks),
        "casts": tokens * (attention_inputs + mlp_inputs if amp else 0.0),
        "weight_copies": _block_weight_copy_bytes(setup),
    }
    own = m.model_type in OWN_LAYOUTS
    if own:
        block = {**_own_block(setup), "weight_copies": block["weight_copies"]}
    residual = FP32 if c.compute in ("fp32", "amp") else 2
    head_input = 2 * m.embed_width if c.compute == "amp" else w * m.embed_width
    embedding_mask = MASK_BYTES * m.hidden if m.dropout else 0
    final_norm = _norm_bytes(setup) if m.final_norm else 0
    held_mask, kept_mask = _own_masks(setup) if own else (0.0, 0.0)
    outside = {
        "loss": float(tokens * FP32 * m.vocab),
        "other": float(
            tokens * (final_norm + head_input + embedding_mask + 2 * ID_BYTES) + _own_outside(setup)
        ),
        "scores": kept_mask,
        "weight_copies": 2.0 * m.vocab * m.hidden if c.compute == "amp" else 0.0,
    }
    logits = tokens * m.vocab * (FP32 if c.compute == "fp32" else 2)
    upcast = 0 if c.compute == "fp32" else tokens * FP32 * m.vocab
    kernel = own_kernel(setup) if own else sdpa_kernel(setup)
    eager = setup.attention == "eager" or kernel in ("eager", "math")
    score_bytes = tokens * m.heads * setup.seq_len * (FP32 if c.compute != "bf16" else 2)
    mlp_transient = 2 * tokens * w * m.intermediate
    causal_mask = setup.batch * setup.seq_len**2 * (2 if c.compute == "bf16" else FP32)
    return ActivationCount(
        block=block,
        block_input_bytes=float(tokens * residual * m.hidden),
        outside=outside,
        forward_block_transient_bytes=float(max(2 * score_bytes if eager else 0, mlp_transient)),
        forward_shared_bytes=float(held_mask if own else (causal_mask if setup.attention == "eager" else 0)),
        loss_forward_transient_bytes=float(logits + upcast),
        loss_backward_transient_bytes=float(2 * tokens * FP32 * m.vocab),
        backward_block_transient_bytes=float(
            max(tokens * m.heads * setup.seq_len * FP32 if eager else 0, mlp_transient)
        ),
    )
