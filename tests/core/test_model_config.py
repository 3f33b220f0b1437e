"""Reading a pasted config.json: what is accepted, the defaults transformers uses, and every refusal's
sentence."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.datafiles import DATA_DIR
from core.model_config import (
    FAMILIES,
    MAX_CONFIG_CHARS,
    MAX_DEPTH,
    decode_config_file,
    load_config_text,
    parse_config,
)
from core.models import parameter_count

QWEN3 = json.loads((DATA_DIR / "models" / "qwen3-0.6b.json").read_text())
LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 96,
    "vocab_size": 100,
}


def test_a_published_config_reads_as_its_model():
    spec = load_config_text(json.dumps(QWEN3), name="Qwen3-0.6B")
    assert (spec.name, spec.model_type, spec.head_dim, spec.q_width, spec.kv_width) == (
        "Qwen3-0.6B",
        "qwen3",
        128,
        2048,  # 16 heads of 128: wider than the 1,024 hidden size
        1024,
    )
    assert (spec.qk_norm, spec.tied_embeddings, spec.qkv_biased, spec.norms_per_block) == (
        "per_head",
        True,
        False,
        2,
    )
    assert parameter_count(spec) == 596_049_920


def test_unknown_fields_are_ignored_and_missing_ones_take_transformers_defaults():
    spec = parse_config({**LLAMA, "rope_scaling": {"type": "linear", "factor": 2.0}, "my_note": [1, 2]})
    # LlamaConfig: as many KV heads as heads, head width hidden / heads, no biases, untied.
    assert (spec.kv_heads, spec.head_dim, spec.biases, spec.tied_embeddings) == (4, 16, False, False)
    # Qwen3Config: 32 KV heads and 128-wide heads when the config leaves them out.
    qwen3 = parse_config({**LLAMA, "model_type": "qwen3", "num_attention_heads": 32})
    assert (qwen3.kv_heads, qwen3.head_dim) == (32, 128)
    # Qwen2 always has q, k, v biases and no o bias; Gemma ties its embeddings.
    qwen2 = parse_config({**LLAMA, "model_type": "qwen2", "num_key_value_heads": 2})
    assert (qwen2.qkv_biased, qwen2.o_biased) == (True, False)
    assert parse_config({**LLAMA, "model_type": "gemma", "num_key_value_heads": 4}).tied_embeddings
    # null, as some published configs write an unset field, is the same as leaving it out.
    nulls = parse_config(
        {**LLAMA, "num_key_value_heads": None, "head_dim": None, "tie_word_embeddings": None}
    )
    assert nulls == parse_config(LLAMA)


def test_qwen_moe_layers_follow_the_sparse_step_and_the_dense_list():
    config = {**LLAMA, "model_type": "qwen3_moe", "num_hidden_layers": 6, "num_key_value_heads": 4}
    spec = parse_config({**config, "num_experts": 8, "decoder_sparse_step": 2, "mlp_only_layers": [1]})
    # Layers 0, 2 and 4 skip the step ((i + 1) % 2 != 0) and layer 1 is listed: 3 layers keep experts.
    assert spec.dense_layers == (0, 1, 2, 4)
    assert (spec.moe_layers, spec.experts, spec.active_experts, spec.expert_intermediate) == (2, 8, 8, 768)


def test_mlp_only_layers_is_a_set_no_longer_than_the_layer_count():
    config = {**LLAMA, "model_type": "qwen3_moe", "num_hidden_layers": 6, "num_key_value_heads": 4}
    # Repeats and layers past the last change nothing: the list names a set of layers.
    listed = parse_config({**config, "mlp_only_layers": [1, 1, 3, 99]})
    assert listed.dense_layers == (1, 3)
    with pytest.raises(ValueError, match="lists 7 layers; the model has 6"):
        parse_config({**config, "mlp_only_layers": [0] * 7})


def test_the_reviews_49000_entry_list_is_refused_in_one_sentence():
    config = {**LLAMA, "model_type": "qwen3_moe", "num_hidden_layers": 48, "num_key_value_heads": 4}
    text = json.dumps({**config, "mlp_only_layers": [0] * 49_000}, separators=(",", ":"))
    assert len(text) <= MAX_CONFIG_CHARS  # small enough to be read: the list itself must be refused
    with pytest.raises(ValueError, match="lists 49,000 layers; the model has 48"):
        load_config_text(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x" * (MAX_CONFIG_CHARS + 1), "characters long; a config.json is at most 100,000"),
        ("{'model_type': 'llama'}", "not valid JSON \\(line 1, column 2\\)"),
        ("[1, 2]", "one JSON object, in braces"),
        ('{"model_type": "llama", "model_type": "gpt2"}', "gives the field 'model_type' twice"),
        ('{"model_type": "llama", "hidden_size": NaN}', "holds NaN"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"deeper than {MAX_DEPTH} levels"),
        ("[" * 5000 + "]" * 5000, f"deeper than {MAX_DEPTH} levels"),
    ],
)
def test_text_that_is_not_a_config_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        load_config_text(text)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"model_type": "bert"},
            "model_type 'bert' is not one we can count; supported: gpt2, gpt_neox, llama",
        ),
        ({"model_type": None}, "model_type None is not one we can count"),
        ({"model_type": "x" * 1000}, r"model_type 'x{36}\.\.\. is not one"),
        ({"hidden_size": None}, "needs hidden_size, a whole number"),
        ({"hidden_size": 0}, "hidden_size must be a whole number from 1 to 65,536, not 0"),
        ({"hidden_size": 64.0}, "hidden_size must be a whole number"),
        ({"num_hidden_layers": True}, "num_hidden_layers must be a whole number"),
        ({"vocab_size": "100"}, "vocab_size must be a whole number"),
        ({"intermediate_size": 10**9}, "intermediate_size must be a whole number from 1 to 1,048,576"),
        ({"num_attention_heads": 5}, "hidden_size must split evenly into num_attention_heads"),
        ({"num_key_value_heads": 3}, "num_attention_heads must split evenly into num_key_value_heads"),
        ({"num_key_value_heads": 8}, "num_key_value_heads must be a whole number from 1 to 4, not 8"),
        ({"head_dim": 0}, "head_dim must be a whole number"),
        ({"tie_word_embeddings": "yes"}, "tie_word_embeddings must be true or false, not 'yes'"),
        (
            {
                "model_type": "mixtral",
                "num_key_value_heads": 4,
                "num_local_experts": 2,
                "num_experts_per_tok": 3,
            },
            "num_experts_per_tok must be a whole number from 1 to 2, not 3",
        ),
        (
            {"model_type": "qwen3_moe", "num_key_value_heads": 4, "mlp_only_layers": "all"},
            "mlp_only_layers must be a list",
        ),
        ({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4}, None),
        (
            {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 5},
            "n_embd must split evenly into n_head",
        ),
        (
            {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "add_cross_attention": True},
            "cross-attention is not supported",
        ),
    ],
)
def test_bad_fields_are_refused_with_a_sentence_naming_them(change, message):
    config = {**LLAMA, **change}
    if message is None:  # the control case: a valid config of that family is accepted
        assert parse_config(config).model_type == change["model_type"]
        return
    with pytest.raises(ValueError, match=message):
        parse_config(config)


def test_uploaded_files_must_be_small_utf8_text():
    assert load_config_text(decode_config_file(b"\xef\xbb\xbf" + json.dumps(LLAMA).encode())).hidden == 64
    with pytest.raises(ValueError, match="not UTF-8 text"):
        decode_config_file(b"\xff\xfe{}")
    with pytest.raises(ValueError, match="bytes; a config.json is at most"):
        decode_config_file(b" " * (4 * MAX_CONFIG_CHARS + 1))


@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_any_text_gives_a_model_or_a_value_error(text):
    try:
        spec = load_config_text(text)
    except ValueError as err:
        assert str(err).endswith(".")
    else:
        assert spec.model_type in FAMILIES


@pytest.mark.parametrize(
    ("model_type", "change", "caps"),
    [
        ("gemma2", {}, (True, True)),  # Gemma2Config caps scores at 50 and logits at 30 by default
        ("gemma2", {"attn_logit_softcapping": None}, (False, True)),  # null turns a cap off
        ("gemma2", {"final_logit_softcapping": None}, (True, False)),
        ("gemma3_text", {}, (False, False)),  # Gemma3TextConfig caps nothing by default
        ("gemma3_text", {"final_logit_softcapping": 30.0, "attn_logit_softcapping": 50}, (True, True)),
        ("gemma", {"final_logit_softcapping": 30.0}, (False, False)),  # Gemma (1) has no soft-capping
    ],
)
def test_gemma_soft_capping_follows_the_config_and_its_defaults(model_type, change, caps):
    spec = parse_config({**LLAMA, "model_type": model_type, "num_key_value_heads": 4, **change})
    assert (spec.attention_softcap, spec.logit_softcap) == caps


@pytest.mark.parametrize("cap", [0, -30.0, "30", True])
def test_a_soft_cap_that_is_not_a_positive_number_is_refused(cap):
    with pytest.raises(ValueError, match="final_logit_softcapping must be a positive number or null"):
        parse_config(
            {**LLAMA, "model_type": "gemma2", "num_key_value_heads": 4, "final_logit_softcapping": cap}
        )


@pytest.mark.parametrize(
    ("model_type", "change", "window"),
    [
        ("gemma2", {"num_hidden_layers": 5}, (4096, 3)),  # layers 1, 3, 5 (counting from 1) slide
        ("gemma3_text", {"num_hidden_layers": 13}, (4096, 11)),  # every sixth layer is global
        ("gemma3_text", {"num_hidden_layers": 13, "sliding_window_pattern": 2}, (4096, 7)),
        (
            "gemma3_text",
            {"layer_types": ["full_attention", "sliding_attention"], "sliding_window": 512},
            (512, 1),
        ),
        ("gemma2", {"sliding_window": None}, (0, 0)),  # no window: no layer slides
        ("gemma", {"sliding_window": 512}, (0, 0)),  # Gemma (1) has no sliding layers
    ],
)
def test_sliding_layers_follow_layer_types_or_the_family_pattern(model_type, change, window):
    spec = parse_config({**LLAMA, "model_type": model_type, "num_key_value_heads": 4, **change})
    assert (spec.sliding_window, spec.sliding_layers) == window


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sliding_window": 0}, "sliding_window must be a whole number, 1 or more, or null"),
        ({"layer_types": ["full_attention"]}, "layer_types must list sliding_attention or full_attention"),
        ({"layer_types": ["full_attention", "chunked"]}, "layer_types must list"),
    ],
)
def test_bad_sliding_fields_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        parse_config({**LLAMA, "model_type": "gemma2", "num_key_value_heads": 4, **change})
