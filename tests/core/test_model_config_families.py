"""The families read beyond Llama's layout: DeepSeek-V2/V3 (latent attention, shared and routed experts),
OLMoE, Cohere (Command-R, Aya), StableLM and OLMo. Counts worked by hand from each modeling file,
figures from the model cards, transformers' defaults, and every refusal's sentence."""

import pytest

from core.datafiles import read_json
from core.model_config import parse_config
from core.model_tensors import model_tensors
from core.models import active_parameter_count, parameter_breakdown, parameter_count

V2_LITE = read_json("models/deepseek-v2-lite.json")
V3 = read_json("configs/deepseek-v3.json")
OLMOE = read_json("models/olmoe-1b-7b-0924.json")
OLMO = read_json("models/olmo-1b-hf.json")
STABLELM = read_json("configs/stablelm-2-1_6b.json")
AYA = read_json("configs/aya-23-8b.json")


def test_deepseek_v2_lite_worked_by_hand():
    # 27 layers, hidden 2,048, 16 heads: a plain q_proj to 16 × (128 + 64); kv_a_proj_with_mqa to the
    # 512-wide latent plus the 64-wide shared rotary key, its RMSNorm, kv_b_proj up to 16 × (128 + 128),
    # o_proj from 16 × 128. Layer 0 has a dense MLP 10,944 wide; the other 26 have 64 experts 1,408 wide,
    # a router and two shared experts (one gated MLP 2,816 wide).
    spec = parse_config(V2_LITE)
    attention = 2048 * 16 * 192 + 2048 * (512 + 64) + 512 + 512 * 16 * 256 + 16 * 128 * 2048
    experts = 64 * 3 * 2048 * 1408
    moe = experts + 64 * 2048 + 3 * 2048 * 2816
    embeddings = 2 * 102_400 * 2048  # input table and output layer, untied
    total = embeddings + 2048 + 27 * (attention + 2 * 2048) + 3 * 2048 * 10_944 + 26 * moe
    assert parameter_count(spec) == total == 15_706_484_224  # the model card: 15.7B
    # One token uses 6 of the 64 experts in each MoE layer, and everything else.
    assert active_parameter_count(spec) == total - 26 * experts + 26 * experts * 6 // 64 == 2_661_150_208


def test_deepseek_v3_counts_what_transformers_builds():
    # 671B in the paper for the main model; its one multi-token-prediction layer (14B more in the
    # checkpoint) is not built by transformers, so not counted. Layers 0-2 are dense, 58 hold experts.
    spec = parse_config(V3)
    assert spec.dense_layers == (0, 1, 2) and spec.moe_layers == 58
    assert spec.shared_expert_intermediate == 2048 and spec.q_lora_rank == 1536
    assert round(parameter_count(spec) / 1e9) == 671
    names = {t.name for t in model_tensors(spec) if t.name.startswith("model.layers.3.")}
    assert "model.layers.3.self_attn.q_a_layernorm.weight" in names
    assert "model.layers.3.mlp.gate.e_score_correction_bias" not in names  # a buffer, not a parameter


def test_olmoe_matches_its_paper_total_and_active():
    # OLMoE-1B-7B: 6.9B parameters, 1.3B active per token (64 experts, 8 per token).
    spec = parse_config(OLMOE)
    assert round(parameter_count(spec) / 1e8) == 69
    assert round(active_parameter_count(spec) / 1e8) == 13
    # Every layer routes: 64 experts of 3 × 2,048 × 1,024 each, 8 of them active.
    experts = 16 * 64 * 3 * 2048 * 1024
    assert parameter_count(spec) - active_parameter_count(spec) == experts - experts * 8 // 64


def test_olmo_norms_hold_no_parameters():
    # OLMo-1B: tied 50,304 × 2,048 table; per block 4 · 2,048² attention and 3 · 2,048 · 8,192 MLP; its
    # LayerNorms have neither weight nor bias.
    spec = parse_config(OLMO)
    assert parameter_breakdown(spec).norms == 0
    assert parameter_count(spec) == 50_304 * 2048 + 16 * (4 * 2048**2 + 3 * 2048 * 8192) == 1_176_764_416


def test_cohere_block_has_one_norm_and_ties_by_default():
    # Aya-23-8B: one bias-free LayerNorm a block (attention and MLP in parallel), tied embeddings.
    spec = parse_config(AYA)
    assert spec.tied_embeddings and spec.norms_per_block == 1 and spec.norm == "layernorm_no_bias"
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024  # q and o; k and v for 8 KV heads of 128
    block = attention + 3 * 4096 * 14_336 + 4096
    assert parameter_count(spec) == 256_000 * 4096 + 32 * block + 4096 == 8_028_033_024
    normed = parse_config({**AYA, "use_qk_norm": True})
    shapes = {t.name: t.shape for t in model_tensors(normed)}
    assert shapes["model.layers.0.self_attn.q_norm.weight"] == (32, 128)
    assert shapes["model.layers.0.self_attn.k_norm.weight"] == (8, 128)


def test_stablelm_switches():
    # StableLM 2 1.6B: LayerNorms with biases, biases on q, k and v only, head width hidden / heads.
    spec = parse_config({**STABLELM, "head_dim": 7})  # transformers' StableLM reads no head_dim
    block = 4 * 2048**2 + 3 * 2048 + 3 * 2048 * 5632 + 2 * 2 * 2048
    assert parameter_count(spec) == 2 * 100_352 * 2048 + 24 * block + 2 * 2048 == 1_644_515_328
    parallel = parse_config({**STABLELM, "use_parallel_residual": True, "qk_layernorm": True})
    names = [t.name for t in model_tensors(parallel) if t.name.startswith("model.layers.0.")]
    assert "model.layers.0.post_attention_layernorm.weight" not in names
    assert "model.layers.0.self_attn.q_layernorm.norms.31.weight" in names
    assert "model.layers.0.self_attn.k_layernorm.norms.31.weight" in names


def test_deepseek_query_latent_defaults_and_null():
    # Absent, q_lora_rank is transformers' default 1,536; null (V2-Lite) means a plain q_proj.
    absent = {k: v for k, v in V2_LITE.items() if k != "q_lora_rank"}
    assert parse_config(absent).q_lora_rank == 1536
    assert parse_config(V2_LITE).q_lora_rank == 0
    assert "model.layers.0.self_attn.q_proj.weight" in {t.name for t in model_tensors(parse_config(V2_LITE))}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({**V2_LITE, "moe_layer_freq": 2}, "moe_layer_freq is 2; transformers builds an MoE block in every"),
        ({**V2_LITE, "num_key_value_heads": 8}, "num_key_value_heads must equal num_attention_heads"),
        (
            {k: v for k, v in V2_LITE.items() if k != "num_experts_per_tok"},
            "The config needs num_experts_per_tok",
        ),
        ({**V2_LITE, "q_lora_rank": 0}, "q_lora_rank must be a whole number from 1"),
        ({**V3, "first_k_dense_replace": -1}, "first_k_dense_replace must be a whole number from 0"),
        ({**V3, "n_routed_experts": 4}, "num_experts_per_tok must be a whole number from 1 to 4, not 8"),
        ({**OLMOE, "head_dim": 64}, "head_dim must be hidden_size / num_attention_heads"),
        ({**OLMOE, "clip_qkv": -1}, "clip_qkv must be a positive number or null, not -1"),
        ({**OLMO, "clip_qkv": "8"}, "clip_qkv must be a positive number or null"),
        ({**STABLELM, "use_parallel_residual": "yes"}, "use_parallel_residual must be true or false"),
        ({**AYA, "use_qk_norm": 1}, "use_qk_norm must be true or false"),
    ],
)
def test_bad_fields_are_refused_with_a_sentence_naming_them(config, message):
    with pytest.raises(ValueError, match=message):
        parse_config(config)
