"""Every weight tensor of a model, named and shaped the way its transformers modeling file builds it.

One function per family reads like that family's `modeling_<family>.py`: the same modules, in the
same order, with the same names, so a reader can check a count against the model file side by
side (and the tests compare the lists with `named_parameters()` of models built on the meta
device). The helpers at the top are what the families truly share: a linear layer, a norm, the
Llama-style attention and gated MLP, and the output layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.model_spec import ModelSpec

# Where a tensor sits, for the breakdown: "experts" are the routed experts' weights, the only
# part of an MoE model a token uses a fraction of.
PARTS = ("embeddings", "attention", "mlp", "experts", "norms", "output_layer")


@dataclass(frozen=True)
class Tensor:
    """One weight tensor: its name in the model, its shape, and which part of the model it belongs to."""

    name: str
    shape: tuple[int, ...]
    part: str
    # The weight of a layer LoRA can target: "linear" (an nn.Linear), "conv1d" (GPT-2's Conv1D) or
    # "linear_subclass" (a subclass of nn.Linear, Falcon's FalconLinear); "" for any other tensor.
    layer: str = ""

    @property
    def numel(self) -> int:
        """How many values it holds."""
        return math.prod(self.shape)

    @property
    def features(self) -> tuple[int, int]:
        """A linear or Conv1D layer's (in, out) features: nn.Linear stores out × in, Conv1D in × out."""
        out_in = self.shape[::-1] if self.layer == "conv1d" else self.shape
        return out_in[1], out_in[0]


Tensors = Iterator[Tensor]


def linear(
    name: str, in_features: int, out_features: int, *, bias: bool, part: str, layer: str = "linear"
) -> Tensors:
    """`nn.Linear(in_features, out_features, bias=bias)` (or a subclass, `layer`): weight stored out × in."""
    yield Tensor(f"{name}.weight", (out_features, in_features), part, layer)
    if bias:
        yield Tensor(f"{name}.bias", (out_features,), part)


def conv1d(name: str, in_features: int, out_features: int) -> Tensors:
    """GPT-2's `Conv1D(out_features, in_features)`: a linear layer stored in × out, always with a bias."""
    part = "attention" if ".attn." in name else "mlp"
    yield Tensor(f"{name}.weight", (in_features, out_features), part, "conv1d")
    yield Tensor(f"{name}.bias", (out_features,), part)


def norm(name: str, width: int, kind: str) -> Tensors:
    """A LayerNorm (weight and bias, or the weight only) or an RMSNorm (a weight) over `width` channels;
    OLMo's non-parametric LayerNorm and OPT's LayerNorm without affine parameters hold nothing."""
    if kind in ("layernorm_plain", "layernorm_no_affine"):
        return
    yield Tensor(f"{name}.weight", (width,), "norms")
    if kind == "layernorm":
        yield Tensor(f"{name}.bias", (width,), "norms")


def embedding(name: str, rows: int, width: int) -> Tensors:
    """`nn.Embedding(rows, width)`."""
    yield Tensor(f"{name}.weight", (rows, width), "embeddings")


def lm_head(spec: ModelSpec) -> Tensors:
    """The output layer, unless it shares the input embedding's weight."""
    if not spec.tied_embeddings:
        yield from linear("lm_head", spec.embed_width, spec.vocab, bias=spec.output_bias, part="output_layer")
    elif spec.output_bias:
        yield Tensor("lm_head.bias", (spec.vocab,), "output_layer")


def attention(prefix: str, spec: ModelSpec) -> Tensors:
    """Llama-style attention: separate q, k, v and o projections, then the QK-norm if there is one."""
    h, q, kv = spec.hidden, spec.q_width, spec.kv_width
    yield from linear(f"{prefix}q_proj", h, q, bias=spec.qkv_biased, part="attention")
    yield from linear(f"{prefix}k_proj", h, kv, bias=spec.qkv_biased, part="attention")
    yield from linear(f"{prefix}v_proj", h, kv, bias=spec.qkv_biased, part="attention")
    yield from linear(f"{prefix}o_proj", q, h, bias=spec.o_biased, part="attention")
    if spec.qk_norm == "per_head":
        yield from norm(f"{prefix}q_norm", spec.head_dim, spec.norm)
        yield from norm(f"{prefix}k_norm", spec.head_dim, spec.norm)
    elif spec.qk_norm == "per_layer":
        yield from norm(f"{prefix}q_norm", q, spec.norm)
        yield from norm(f"{prefix}k_norm", kv, spec.norm)


def latent_attention(prefix: str, spec: ModelSpec) -> Tensors:
    """DeepSeek's multi-head latent attention: queries straight from q_proj or up from a q_lora_rank latent
    (with its RMSNorm); keys and values up from one kv_lora_rank latent (with its RMSNorm), which
    kv_a_proj_with_mqa makes together with the rotary key part every head shares."""
    h, heads, v = spec.hidden, spec.heads, spec.v_head_dim
    nope = spec.head_dim - spec.qk_rope_head_dim
    if spec.q_lora_rank:
        yield from linear(f"{prefix}q_a_proj", h, spec.q_lora_rank, bias=spec.qkv_biased, part="attention")
        yield from norm(f"{prefix}q_a_layernorm", spec.q_lora_rank, spec.norm)
        yield from linear(f"{prefix}q_b_proj", spec.q_lora_rank, spec.q_width, bias=False, part="attention")
    else:
        yield from linear(f"{prefix}q_proj", h, spec.q_width, bias=False, part="attention")
    latent = spec.kv_lora_rank + spec.qk_rope_head_dim
    yield from linear(f"{prefix}kv_a_proj_with_mqa", h, latent, bias=spec.qkv_biased, part="attention")
    yield from norm(f"{prefix}kv_a_layernorm", spec.kv_lora_rank, spec.norm)
    yield from linear(
        f"{prefix}kv_b_proj", spec.kv_lora_rank, heads * (nope + v), bias=False, part="attention"
    )
    yield from linear(f"{prefix}o_proj", heads * v, h, bias=spec.o_biased, part="attention")


def gated_mlp(prefix: str, hidden: int, intermediate: int, *, bias: bool) -> Tensors:
    """Llama-style gated MLP: gate and up projections to `intermediate`, down back to `hidden`."""
    yield from linear(f"{prefix}gate_proj", hidden, intermediate, bias=bias, part="mlp")
    yield from linear(f"{prefix}up_proj", hidden, intermediate, bias=bias, part="mlp")
    yield from linear(f"{prefix}down_proj", intermediate, hidden, bias=bias, part="mlp")


def experts(prefix: str, spec: ModelSpec) -> Tensors:
    """Routed experts stored as two 3-D tensors (gate and up fused), as transformers 5 keeps them."""
    e, h, i = spec.experts, spec.hidden, spec.expert_intermediate
    yield Tensor(f"{prefix}gate_up_proj", (e, 2 * i, h), "experts")
    yield Tensor(f"{prefix}down_proj", (e, h, i), "experts")


def router(name: str, spec: ModelSpec) -> Tensors:
    """The router: one score per expert for each token, no bias."""
    yield Tensor(f"{name}.weight", (spec.experts, spec.hidden), "mlp")


def norms(prefix: str, names: tuple[str, ...], spec: ModelSpec) -> Tensors:
    """The block's own norms over the hidden size, in the order the block creates them."""
    for name in names:
        yield from norm(f"{prefix}{name}", spec.hidden, spec.norm)


LLAMA_NORMS = ("input_layernorm", "post_attention_layernorm")
GEMMA2_NORMS = (*LLAMA_NORMS, "pre_feedforward_layernorm", "post_feedforward_layernorm")


def _layers(spec: ModelSpec, prefix: str) -> Iterator[tuple[int, str]]:
    for i in range(spec.layers):
        yield i, f"{prefix}{i}."


def gpt2(spec: ModelSpec) -> Tensors:
    """`GPT2LMHeadModel`: learned positions, fused c_attn, LayerNorms with biases, Conv1D layers."""
    yield from embedding("transformer.wte", spec.vocab, spec.hidden)
    yield from embedding("transformer.wpe", spec.positions, spec.hidden)
    for _, p in _layers(spec, "transformer.h."):
        yield from norm(f"{p}ln_1", spec.hidden, spec.norm)
        yield from conv1d(f"{p}attn.c_attn", spec.hidden, 3 * spec.hidden)
        yield from conv1d(f"{p}attn.c_proj", spec.hidden, spec.hidden)
        yield from norm(f"{p}ln_2", spec.hidden, spec.norm)
        yield from conv1d(f"{p}mlp.c_fc", spec.hidden, spec.intermediate)
        yield from conv1d(f"{p}mlp.c_proj", spec.intermediate, spec.hidden)
    yield from norm("transformer.ln_f", spec.hidden, spec.norm)
    yield from lm_head(spec)


def gpt_neox(spec: ModelSpec) -> Tensors:
    """`GPTNeoXForCausalLM`: fused query_key_value, plain MLP with biases, rotary positions."""
    h = spec.hidden
    yield from embedding("gpt_neox.embed_in", spec.vocab, h)
    for _, p in _layers(spec, "gpt_neox.layers."):
        yield from norms(p, LLAMA_NORMS, spec)
        yield from linear(f"{p}attention.query_key_value", h, 3 * h, bias=spec.qkv_biased, part="attention")
        yield from linear(f"{p}attention.dense", h, h, bias=spec.o_biased, part="attention")
        yield from linear(f"{p}mlp.dense_h_to_4h", h, spec.intermediate, bias=spec.mlp_biased, part="mlp")
        yield from linear(f"{p}mlp.dense_4h_to_h", spec.intermediate, h, bias=spec.mlp_biased, part="mlp")
    yield from norm("gpt_neox.final_layer_norm", h, spec.norm)
    yield from lm_head(spec)


def _gated_blocks(spec: ModelSpec, block_norms: tuple[str, ...]) -> Tensors:
    """The Llama layout: embedding, then attention, a gated MLP and `block_norms` in every block, a final
    norm and the output layer."""
    yield from embedding("model.embed_tokens", spec.vocab, spec.hidden)
    for _, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        yield from gated_mlp(f"{p}mlp.", spec.hidden, spec.intermediate, bias=spec.mlp_biased)
        yield from norms(p, block_norms, spec)
    yield from norm("model.norm", spec.hidden, spec.norm)
    yield from lm_head(spec)


def llama(spec: ModelSpec) -> Tensors:
    """`LlamaForCausalLM` (also Mistral, Qwen2, Qwen3, Gemma): attention, gated MLP, two norms a block."""
    return _gated_blocks(spec, LLAMA_NORMS)


def gemma2(spec: ModelSpec) -> Tensors:
    """`Gemma2ForCausalLM` (also Gemma 3): Llama's block with a norm before and after attention and MLP."""
    return _gated_blocks(spec, GEMMA2_NORMS)


def olmo2(spec: ModelSpec) -> Tensors:
    """`Olmo2ForCausalLM`: QK-norm over the whole width and norms after attention and MLP only."""
    return _gated_blocks(spec, ("post_attention_layernorm", "post_feedforward_layernorm"))


def phi3(spec: ModelSpec) -> Tensors:
    """`Phi3ForCausalLM`: fused qkv_proj and gate_up_proj, no biases."""
    h, i = spec.hidden, spec.intermediate
    yield from embedding("model.embed_tokens", spec.vocab, h)
    for _, p in _layers(spec, "model.layers."):
        yield from linear(f"{p}self_attn.o_proj", spec.q_width, h, bias=False, part="attention")
        qkv = spec.q_width + 2 * spec.kv_width
        yield from linear(f"{p}self_attn.qkv_proj", h, qkv, bias=False, part="attention")
        yield from linear(f"{p}mlp.gate_up_proj", h, 2 * i, bias=False, part="mlp")
        yield from linear(f"{p}mlp.down_proj", i, h, bias=False, part="mlp")
        yield from norms(p, LLAMA_NORMS, spec)
    yield from norm("model.norm", h, spec.norm)
    yield from lm_head(spec)


def phi(spec: ModelSpec) -> Tensors:
    """`PhiForCausalLM` (Phi-1.5, Phi-2): attention and MLP in parallel after one LayerNorm, biases
    everywhere, an optional per-head QK LayerNorm, and an output layer with a bias."""
    h, q, kv = spec.hidden, spec.q_width, spec.kv_width
    yield from embedding("model.embed_tokens", spec.vocab, h)
    for _, p in _layers(spec, "model.layers."):
        yield from linear(f"{p}self_attn.q_proj", h, q, bias=True, part="attention")
        yield from linear(f"{p}self_attn.k_proj", h, kv, bias=True, part="attention")
        yield from linear(f"{p}self_attn.v_proj", h, kv, bias=True, part="attention")
        yield from linear(f"{p}self_attn.dense", q, h, bias=True, part="attention")
        if spec.qk_norm == "per_head":  # sized hidden // heads in transformers, even with its own head_dim
            yield from norm(f"{p}self_attn.q_layernorm", h // spec.heads, spec.norm)
            yield from norm(f"{p}self_attn.k_layernorm", h // spec.heads, spec.norm)
        yield from linear(f"{p}mlp.fc1", h, spec.intermediate, bias=True, part="mlp")
        yield from linear(f"{p}mlp.fc2", spec.intermediate, h, bias=True, part="mlp")
        yield from norm(f"{p}input_layernorm", h, spec.norm)
    yield from norm("model.final_layernorm", h, spec.norm)
    yield from lm_head(spec)


def cohere(spec: ModelSpec) -> Tensors:
    """`CohereForCausalLM` (Command-R, Aya): attention and gated MLP in parallel after one bias-free
    LayerNorm; with use_qk_norm one LayerNorm weight of heads × head_dim for queries (keys alike)."""
    h = spec.hidden
    yield from embedding("model.embed_tokens", spec.vocab, h)
    for _, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        if spec.qk_norm == "each_head":
            yield Tensor(f"{p}self_attn.q_norm.weight", (spec.heads, spec.head_dim), "norms")
            yield Tensor(f"{p}self_attn.k_norm.weight", (spec.kv_heads, spec.head_dim), "norms")
        yield from gated_mlp(f"{p}mlp.", h, spec.intermediate, bias=False)
        yield from norm(f"{p}input_layernorm", h, spec.norm)
    yield from norm("model.norm", h, spec.norm)
    yield from lm_head(spec)


def _head_layernorms(name: str, heads: int, width: int) -> Tensors:
    """StableLM's `StableLmLayerNormPerHead`: a bias-free nn.LayerNorm for every head."""
    for i in range(heads):
        yield from norm(f"{name}.norms.{i}", width, "layernorm_no_bias")


def stablelm(spec: ModelSpec) -> Tensors:
    """`StableLmForCausalLM`: LayerNorms with biases, a LayerNorm per query and key head with qk_layernorm,
    and no post-attention norm when attention and MLP run in parallel (use_parallel_residual)."""
    h = spec.hidden
    yield from embedding("model.embed_tokens", spec.vocab, h)
    for _, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        if spec.qk_norm == "each_head":
            yield from _head_layernorms(f"{p}self_attn.q_layernorm", spec.heads, spec.head_dim)
            yield from _head_layernorms(f"{p}self_attn.k_layernorm", spec.kv_heads, spec.head_dim)
        yield from gated_mlp(f"{p}mlp.", h, spec.intermediate, bias=False)
        yield from norms(p, LLAMA_NORMS[: spec.norms_per_block], spec)
    yield from norm("model.norm", h, spec.norm)
    yield from lm_head(spec)


def deepseek(spec: ModelSpec) -> Tensors:
    """`DeepseekV2ForCausalLM` and `DeepseekV3ForCausalLM`: latent attention; a dense MLP in the first
    layers, then routed experts, their router and the shared experts every token passes through."""
    h = spec.hidden
    yield from embedding("model.embed_tokens", spec.vocab, h)
    for i, p in _layers(spec, "model.layers."):
        yield from latent_attention(f"{p}self_attn.", spec)
        if i in spec.dense_layers:
            yield from gated_mlp(f"{p}mlp.", h, spec.intermediate, bias=spec.mlp_biased)
        else:
            yield from experts(f"{p}mlp.experts.", spec)
            yield from router(f"{p}mlp.gate", spec)
            shared = spec.shared_expert_intermediate
            yield from gated_mlp(f"{p}mlp.shared_experts.", h, shared, bias=spec.mlp_biased)
        yield from norms(p, LLAMA_NORMS, spec)
    yield from norm("model.norm", h, spec.norm)
    yield from lm_head(spec)


def mixtral(spec: ModelSpec) -> Tensors:
    """`MixtralForCausalLM` (also OLMoE): the attention, then a router and the experts in every layer."""
    yield from embedding("model.embed_tokens", spec.vocab, spec.hidden)
    for _, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        yield from router(f"{p}mlp.gate", spec)
        yield from experts(f"{p}mlp.experts.", spec)
        yield from norms(p, LLAMA_NORMS, spec)
    yield from norm("model.norm", spec.hidden, spec.norm)
    yield from lm_head(spec)


def qwen3_moe(spec: ModelSpec) -> Tensors:
    """`Qwen3MoeForCausalLM`: Qwen3's attention; experts and router, or a dense MLP in `mlp_only_layers`."""
    yield from embedding("model.embed_tokens", spec.vocab, spec.hidden)
    for i, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        if i in spec.dense_layers:
            yield from gated_mlp(f"{p}mlp.", spec.hidden, spec.intermediate, bias=False)
        else:
            yield from experts(f"{p}mlp.experts.", spec)
            yield from router(f"{p}mlp.gate", spec)
        yield from norms(p, LLAMA_NORMS, spec)
    yield from norm("model.norm", spec.hidden, spec.norm)
    yield from lm_head(spec)


def qwen2_moe(spec: ModelSpec) -> Tensors:
    """`Qwen2MoeForCausalLM`: router and experts, plus a gated shared expert every token uses."""
    h = spec.hidden
    yield from embedding("model.embed_tokens", spec.vocab, h)
    for i, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        if i in spec.dense_layers:
            yield from gated_mlp(f"{p}mlp.", h, spec.intermediate, bias=False)
        else:
            yield from router(f"{p}mlp.gate", spec)
            yield from experts(f"{p}mlp.experts.", spec)
            yield from gated_mlp(f"{p}mlp.shared_expert.", h, spec.shared_expert_intermediate, bias=False)
            yield from linear(f"{p}mlp.shared_expert_gate", h, 1, bias=False, part="mlp")
        yield from norms(p, LLAMA_NORMS, spec)
    yield from norm("model.norm", h, spec.norm)
    yield from lm_head(spec)


def _fused_attention(prefix: str, spec: ModelSpec, qkv: str, out: str, layer: str = "linear") -> Tensors:
    """Attention with one fused projection to queries, keys and values (`qkv`) and an output one (`out`)."""
    h, fused = spec.hidden, spec.q_width + 2 * spec.kv_width
    yield from linear(f"{prefix}{qkv}", h, fused, bias=spec.qkv_biased, part="attention", layer=layer)
    yield from linear(f"{prefix}{out}", spec.q_width, h, bias=spec.o_biased, part="attention", layer=layer)


def _plain_mlp(prefix: str, spec: ModelSpec, up: str, down: str, layer: str = "linear") -> Tensors:
    """A plain MLP: `up` to the intermediate width, an activation, `down` back to hidden."""
    h, i = spec.hidden, spec.intermediate
    yield from linear(f"{prefix}{up}", h, i, bias=spec.mlp_biased, part="mlp", layer=layer)
    yield from linear(f"{prefix}{down}", i, h, bias=spec.mlp_biased, part="mlp", layer=layer)


def falcon_norms(spec: ModelSpec) -> tuple[str, ...]:
    """Falcon's block norms: one both branches read, ln_attn and ln_mlp side by side, or two in sequence."""
    if not spec.parallel_attn:
        return LLAMA_NORMS
    return ("ln_attn", "ln_mlp") if spec.norms_per_block == 2 else ("input_layernorm",)


FALCON_LINEAR = "linear_subclass"  # FalconLinear(nn.Linear): adds its bias after the matmul


def falcon(spec: ModelSpec) -> Tensors:
    """`FalconForCausalLM`: a fused query_key_value (grouped, multi-query or one KV head a head), a plain
    MLP, the block's norms (`falcon_norms`); no position table (rotary or ALiBi)."""
    yield from embedding("transformer.word_embeddings", spec.vocab, spec.hidden)
    for _, p in _layers(spec, "transformer.h."):
        yield from _fused_attention(f"{p}self_attention.", spec, "query_key_value", "dense", FALCON_LINEAR)
        yield from _plain_mlp(f"{p}mlp.", spec, "dense_h_to_4h", "dense_4h_to_h", FALCON_LINEAR)
        yield from norms(p, falcon_norms(spec), spec)
    yield from norm("transformer.ln_f", spec.hidden, spec.norm)
    yield from lm_head(spec)


def starcoder2(spec: ModelSpec) -> Tensors:
    """`Starcoder2ForCausalLM`: Llama's attention and norms' names, LayerNorms, a plain MLP (c_fc, c_proj)."""
    yield from embedding("model.embed_tokens", spec.vocab, spec.hidden)
    for _, p in _layers(spec, "model.layers."):
        yield from attention(f"{p}self_attn.", spec)
        yield from _plain_mlp(f"{p}mlp.", spec, "c_fc", "c_proj")
        yield from norms(p, LLAMA_NORMS, spec)
    yield from norm("model.norm", spec.hidden, spec.norm)
    yield from lm_head(spec)


def bloom(spec: ModelSpec) -> Tensors:
    """`BloomForCausalLM`: a LayerNorm after the embedding, a fused query_key_value, ALiBi (no parameters)."""
    yield from embedding("transformer.word_embeddings", spec.vocab, spec.hidden)
    yield from norm("transformer.word_embeddings_layernorm", spec.hidden, spec.norm)
    for _, p in _layers(spec, "transformer.h."):
        yield from norm(f"{p}input_layernorm", spec.hidden, spec.norm)
        yield from _fused_attention(f"{p}self_attention.", spec, "query_key_value", "dense")
        yield from norm(f"{p}post_attention_layernorm", spec.hidden, spec.norm)
        yield from _plain_mlp(f"{p}mlp.", spec, "dense_h_to_4h", "dense_4h_to_h")
    yield from norm("transformer.ln_f", spec.hidden, spec.norm)
    yield from lm_head(spec)


def opt(spec: ModelSpec) -> Tensors:
    """`OPTForCausalLM`: learned positions with 2 rows before position 0, project_in and project_out when the
    embedding is narrower than the blocks, and the final norm only when the blocks norm first."""
    h, e = spec.hidden, spec.embed_width
    yield from embedding("model.decoder.embed_tokens", spec.vocab, e)
    yield from embedding("model.decoder.embed_positions", spec.positions + spec.position_offset, h)
    if e != h:
        yield from linear("model.decoder.project_out", h, e, bias=False, part="embeddings")
        yield from linear("model.decoder.project_in", e, h, bias=False, part="embeddings")
    if spec.final_norm:
        yield from norm("model.decoder.final_layer_norm", h, spec.norm)
    for _, p in _layers(spec, "model.decoder.layers."):
        yield from linear(f"{p}self_attn.k_proj", h, h, bias=spec.qkv_biased, part="attention")
        yield from linear(f"{p}self_attn.v_proj", h, h, bias=spec.qkv_biased, part="attention")
        yield from linear(f"{p}self_attn.q_proj", h, h, bias=spec.qkv_biased, part="attention")
        yield from linear(f"{p}self_attn.out_proj", h, h, bias=spec.o_biased, part="attention")
        yield from norm(f"{p}self_attn_layer_norm", h, spec.norm)
        yield from _plain_mlp(p, spec, "fc1", "fc2")
        yield from norm(f"{p}final_layer_norm", h, spec.norm)
    yield from lm_head(spec)


def gpt_bigcode(spec: ModelSpec) -> Tensors:
    """`GPTBigCodeForCausalLM`: GPT-2's layout with nn.Linear layers and a c_attn one KV head wide when
    multi_query."""
    yield from embedding("transformer.wte", spec.vocab, spec.hidden)
    yield from embedding("transformer.wpe", spec.positions, spec.hidden)
    for _, p in _layers(spec, "transformer.h."):
        yield from norm(f"{p}ln_1", spec.hidden, spec.norm)
        yield from _fused_attention(f"{p}attn.", spec, "c_attn", "c_proj")
        yield from norm(f"{p}ln_2", spec.hidden, spec.norm)
        yield from _plain_mlp(f"{p}mlp.", spec, "c_fc", "c_proj")
    yield from norm("transformer.ln_f", spec.hidden, spec.norm)
    yield from lm_head(spec)


def decoder(spec: ModelSpec) -> Tensors:
    """A block described only by the spec's fields (the measuring tool's models): learned positions if
    any, Llama-style attention, a plain or gated MLP, `norms_per_block` norms."""
    h, i = spec.hidden, spec.intermediate
    yield from embedding("embed_tokens", spec.vocab, h)
    if spec.positions:
        yield from embedding("embed_positions", spec.positions, h)
    for _, p in _layers(spec, "layers."):
        yield from attention(f"{p}attn.", spec)
        if spec.gated_mlp:
            yield from gated_mlp(f"{p}mlp.", h, i, bias=spec.mlp_biased)
        else:
            yield from linear(f"{p}mlp.up_proj", h, i, bias=spec.mlp_biased, part="mlp")
            yield from linear(f"{p}mlp.down_proj", i, h, bias=spec.mlp_biased, part="mlp")
        yield from norms(p, tuple(f"norm_{n}" for n in range(spec.norms_per_block)), spec)
    yield from norm("norm", h, spec.norm)
    yield from lm_head(spec)


FAMILY_TENSORS: dict[str, Callable[[ModelSpec], Tensors]] = {
    "gpt2": gpt2,
    "gpt_neox": gpt_neox,
    "llama": llama,
    "mistral": llama,
    "qwen2": llama,
    "qwen3": llama,
    "gemma": llama,
    "gemma2": gemma2,
    "gemma3_text": gemma2,
    "olmo2": olmo2,
    "phi": phi,
    "phi3": phi3,
    "mixtral": mixtral,
    "qwen2_moe": qwen2_moe,
    "qwen3_moe": qwen3_moe,
    "olmo": llama,
    "olmoe": mixtral,
    "cohere": cohere,
    "stablelm": stablelm,
    "deepseek_v2": deepseek,
    "deepseek_v3": deepseek,
    "falcon": falcon,
    "starcoder2": starcoder2,
    "bloom": bloom,
    "opt": opt,
    "gpt_bigcode": gpt_bigcode,
}


def model_tensors(spec: ModelSpec) -> Tensors:
    """Every weight tensor of `spec`, each shared tensor once, in the order its model creates them."""
    return FAMILY_TENSORS.get(spec.model_type, decoder)(spec)
