"""The families that name their fields their own way (Falcon, StarCoder2, BLOOM, OPT, GPT-BigCode): what each
switch reads as, and a refusal a learner can read for every config transformers could not run."""

import pytest

from core.model_config import parse_config

FALCON = {
    "model_type": "falcon",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "vocab_size": 100,
}
BLOOM = {"model_type": "bloom", "hidden_size": 64, "n_layer": 2, "n_head": 8, "vocab_size": 100}
OPT = {
    "model_type": "opt",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "ffn_dim": 256,
    "vocab_size": 100,
}
BIGCODE = {"model_type": "gpt_bigcode", "n_embd": 64, "n_layer": 2, "n_head": 8, "vocab_size": 100}


@pytest.mark.parametrize(
    ("changes", "kv_heads", "norms", "parallel"),
    [
        ({}, 1, 1, True),  # Falcon-7B: multi-query, one input_layernorm both branches read
        ({"multi_query": False}, 8, 1, True),
        ({"parallel_attn": False, "multi_query": False}, 8, 2, False),  # Falcon-RW's sequential block
        ({"new_decoder_architecture": True, "num_kv_heads": 2}, 2, 2, True),  # Falcon-40B: ln_attn, ln_mlp
        ({"new_decoder_architecture": True, "num_ln_in_parallel_attn": 1}, 8, 1, True),
    ],
)
def test_falcon_layouts(changes, kv_heads, norms, parallel):
    spec = parse_config({**FALCON, **changes})
    assert (spec.kv_heads, spec.norms_per_block, spec.parallel_attn) == (kv_heads, norms, parallel)
    assert (spec.intermediate, spec.tied_embeddings, spec.biases, spec.alibi) == (256, True, False, False)


def test_bloom_reads_older_names_and_is_alibi():
    spec = parse_config({**BLOOM, "hidden_size": None, "n_embed": 64})
    assert (spec.hidden, spec.intermediate, spec.alibi, spec.embedding_norm) == (64, 256, True, True)


def test_opt_keeps_two_position_rows_more_and_projects_a_narrower_embedding():
    spec = parse_config({**OPT, "word_embed_proj_dim": 32, "max_position_embeddings": 512})
    assert (spec.positions, spec.position_offset, spec.embed_width) == (512, 2, 32)
    assert parse_config({**OPT, "word_embed_proj_dim": 64}).embedding_width == 0
    assert not parse_config({**OPT, "do_layer_norm_before": False}).final_norm
    assert parse_config({**OPT, "layer_norm_elementwise_affine": False}).norm == "layernorm_no_affine"


def test_gpt_bigcode_is_multi_query_unless_told():
    assert parse_config(BIGCODE).kv_heads == 1
    assert parse_config({**BIGCODE, "multi_query": False}).kv_heads == 8
    assert parse_config(BIGCODE).positions == 1024


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({**FALCON, "new_decoder_architecture": True, "parallel_attn": False}, "builds no ln_attn"),
        ({**FALCON, "num_ln_in_parallel_attn": 2}, "needs new_decoder_architecture"),
        (
            {**FALCON, "num_ln_in_parallel_attn": 3},
            "num_ln_in_parallel_attn must be a whole number from 1 to 2",
        ),
        ({**FALCON, "multi_query": False, "num_kv_heads": 2}, "num_kv_heads below num_attention_heads"),
        ({**FALCON, "new_decoder_architecture": True, "num_kv_heads": 3}, "split evenly into its KV heads"),
        ({**FALCON, "num_attention_heads": 7}, "hidden size must split evenly"),
        ({**FALCON, "hidden_dropout": 2}, "hidden_dropout must be a probability from 0 to 1, not 2"),
        ({**BLOOM, "n_layer": 2, "num_hidden_layers": 3}, "gives n_layer and num_hidden_layers different"),
        ({**BLOOM, "n_head": None}, "needs n_head"),
        ({**OPT, "ffn_dim": None}, "needs ffn_dim"),
        ({**OPT, "enable_bias": "no"}, "enable_bias must be true or false"),
        ({**BIGCODE, "add_cross_attention": True}, "cross-attention is not supported"),
        ({**BIGCODE, "n_positions": 0}, "n_positions must be a whole number"),
        (
            {"model_type": "starcoder2", **{k: v for k, v in OPT.items() if k != "model_type"}},
            "intermediate_size",
        ),
    ],
)
def test_configs_transformers_could_not_run_are_refused_in_a_sentence(config, message):
    with pytest.raises(ValueError, match=message):
        parse_config(config)
