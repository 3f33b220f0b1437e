"""What a decoder-only transformer looks like: the fields its parameter count and its memory need.

A `ModelSpec` is built from a preset, from the lesson's sliders or from a pasted `config.json`
(`core/model_config.py`). The first fields are the ones every model has; the ones with defaults
describe what real architectures vary (head width, biases per projection, norms, experts).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require

# layernorm: a weight and a bias per channel; layernorm_no_bias: the weight only; rmsnorm: a weight;
# layernorm_plain: neither, run on an FP32 copy (OLMo's non-parametric LayerNorm); layernorm_no_affine:
# neither, nn.LayerNorm itself (OPT's layer_norm_elementwise_affine false).
NORMS = ("layernorm", "layernorm_no_bias", "rmsnorm", "layernorm_plain", "layernorm_no_affine")
# QK-norm: none; per_head, one head-wide weight shared by every head (Qwen3, Gemma 3);
# per_layer, one weight over the whole query (or key) width (OLMo 2); each_head, a head-wide weight
# of its own for every head (Cohere's heads × head_dim weight, StableLM's LayerNorm per head).
QK_NORMS = ("none", "per_head", "per_layer", "each_head")


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer's shape: everything its parameter count and activations need."""

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int  # width of a dense MLP (for Mixtral, of each expert)
    vocab: int
    positions: int  # rows of a learned position table; 0 when positions are rotary
    tied_embeddings: bool
    gated_mlp: bool
    norm: str
    biases: bool  # the default for every projection's bias; the three fields below override it
    dropout: bool
    published_params: int | None
    source: str
    model_type: str = ""  # the config's model_type; "" for a shape described only by these fields
    explicit_head_dim: int | None = None  # a head width set by the config rather than hidden // heads
    qkv_bias: bool | None = None
    o_bias: bool | None = None
    mlp_bias: bool | None = None
    norms_per_block: int = 2
    qk_norm: str = "none"
    output_bias: bool = False
    experts: int = 0  # routed experts in each MoE layer; 0 for a dense model
    active_experts: int = 0  # experts each token is routed to
    expert_intermediate: int = 0  # width of one routed expert's MLP
    shared_expert_intermediate: int = 0  # width of the expert every token also passes through (0: none)
    dense_layers: tuple[int, ...] = ()  # in an MoE model, the layers that keep a dense MLP
    attention_softcap: bool = False  # tanh soft-capping of the attention scores (Gemma 2's eager attention)
    logit_softcap: bool = False  # tanh soft-capping of the output logits (Gemma 2)
    sliding_window: int = 0  # keys a sliding-window layer sees (0: no layer has a window)
    sliding_layers: int = 0  # layers that attend through that window (Gemma 2 and 3 interleave them)
    # Multi-head latent attention (DeepSeek-V2/V3), when kv_lora_rank > 0: keys and values come up from
    # a kv_lora_rank-wide latent, queries from a q_lora_rank-wide one (0: a plain q_proj); each query
    # and key head is head_dim wide, of which qk_rope_head_dim carry the rotary part; values are
    # v_head_dim wide.
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    position_offset: int = 0  # rows of the position table before position 0 (OPT's 2)
    embedding_width: int = 0  # width of the token embedding when it differs from hidden (OPT's projections)
    embedding_norm: bool = False  # a LayerNorm right after the token embedding (BLOOM)
    final_norm: bool = True  # a norm after the last block (OPT without do_layer_norm_before has none)
    parallel_attn: bool = False  # attention and MLP both read the block input (Falcon, Phi): one residual add
    alibi: bool = False  # ALiBi: a per-head linear bias on the attention scores instead of rotary positions
    attention_dropout: bool | None = None  # dropout on the attention probabilities (None: as `dropout`)
    kv_broadcast: bool = False  # K and V copied out to every head before attention (Falcon's new decoder)

    @property
    def head_dim(self) -> int:
        """Width of one attention head."""
        return self.explicit_head_dim or self.hidden // self.heads

    @property
    def q_width(self) -> int:
        """Width of the query projection (and of the attention output): heads × head width."""
        return self.heads * self.head_dim

    @property
    def kv_width(self) -> int:
        """Width of the key (or value) projection: narrower than the query with grouped-query attention."""
        return self.kv_heads * self.head_dim

    @property
    def qkv_biased(self) -> bool:
        """Whether the query, key and value projections carry biases."""
        return self.biases if self.qkv_bias is None else self.qkv_bias

    @property
    def o_biased(self) -> bool:
        """Whether the attention output projection carries a bias."""
        return self.biases if self.o_bias is None else self.o_bias

    @property
    def mlp_biased(self) -> bool:
        """Whether the MLP's projections carry biases."""
        return self.biases if self.mlp_bias is None else self.mlp_bias

    @property
    def attention_dropped(self) -> bool:
        """Whether dropout runs on the attention probabilities."""
        return self.dropout if self.attention_dropout is None else self.attention_dropout

    @property
    def embed_width(self) -> int:
        """Width of the token embedding (and of the output layer's input)."""
        return self.embedding_width or self.hidden

    @property
    def is_moe(self) -> bool:
        """Whether some layers route each token to a few of many expert MLPs."""
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        """How many layers hold experts (the others keep a dense MLP)."""
        return self.layers - len(self.dense_layers) if self.is_moe else 0

    @property
    def is_mla(self) -> bool:
        """Whether attention is multi-head latent attention (keys and values from a compressed latent)."""
        return self.kv_lora_rank > 0

    @property
    def token_mlp_width(self) -> int:
        """MLP width one token passes through in an MoE layer: its routed experts plus the shared one."""
        return self.active_experts * self.expert_intermediate + self.shared_expert_intermediate


def _whole(value: object, *, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def check_spec(spec: ModelSpec) -> ModelSpec:
    """`spec` if its sizes are consistent; else a ValueError saying which one is not."""
    where = f"Model {spec.name!r}"
    sizes = {
        "hidden": spec.hidden,
        "layers": spec.layers,
        "heads": spec.heads,
        "kv_heads": spec.kv_heads,
        "intermediate": spec.intermediate,
        "vocab": spec.vocab,
    }
    for field, value in sizes.items():
        require(_whole(value, least=1), f"{where}: {field} must be a positive whole number.")
    require(_whole(spec.positions, least=0), f"{where}: positions must be 0 or more.")
    require(_whole(spec.position_offset, least=0), f"{where}: position_offset must be 0 or more.")
    require(_whole(spec.embedding_width, least=0), f"{where}: embedding_width must be 0 or more.")
    if spec.explicit_head_dim is None:
        require(
            spec.hidden % spec.heads == 0,
            f"{where}: the hidden size must split evenly into the attention heads.",
        )
    else:
        require(
            _whole(spec.explicit_head_dim, least=1), f"{where}: head_dim must be a positive whole number."
        )
    require(
        spec.heads % spec.kv_heads == 0, f"{where}: the attention heads must split evenly into the KV heads."
    )
    require(spec.norm in NORMS, f"{where}: norm must be one of {', '.join(NORMS)}.")
    require(spec.qk_norm in QK_NORMS, f"{where}: qk_norm must be one of {', '.join(QK_NORMS)}.")
    require(_whole(spec.norms_per_block, least=0), f"{where}: norms_per_block must be 0 or more.")
    require(_whole(spec.sliding_window, least=0), f"{where}: sliding_window must be 0 or more.")
    require(
        _whole(spec.sliding_layers, least=0) and spec.sliding_layers <= spec.layers,
        f"{where}: sliding_layers must be between 0 and its {spec.layers} layers.",
    )
    if spec.is_moe:
        require(
            1 <= spec.active_experts <= spec.experts,
            f"{where}: each token must be routed to between 1 and {spec.experts} experts.",
        )
        require(_whole(spec.expert_intermediate, least=1), f"{where}: expert_intermediate must be positive.")
        require(
            all(0 <= i < spec.layers for i in spec.dense_layers),
            f"{where}: every dense layer must be one of its {spec.layers} layers.",
        )
    if spec.is_mla:
        require(
            _whole(spec.qk_rope_head_dim, least=1) and spec.qk_rope_head_dim < spec.head_dim,
            f"{where}: the rotary part of a latent-attention head must be narrower than the head.",
        )
        require(_whole(spec.v_head_dim, least=1), f"{where}: v_head_dim must be a positive whole number.")
        require(_whole(spec.q_lora_rank, least=0), f"{where}: q_lora_rank must be 0 or more.")
    return spec
