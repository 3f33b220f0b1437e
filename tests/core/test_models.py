"""Model presets: every exact parameter count from the architecture, the custom shape, and bad data."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.models import (
    CUSTOM,
    custom_model,
    load_models,
    model_names,
    parameter_breakdown,
    parameter_count,
    parse_models,
    parse_preset,
    preset,
    resolve_model,
)

# Published counts of the released weights (sources in data/models.json): keras-hub's preset
# metadata for GPT-2, Llama-2-7B, Llama-3-8B and Mistral-7B; the Hugging Face / checkpoint counts
# for the others.
PUBLISHED = {
    "GPT-2 small": 124_439_808,
    "GPT-2 medium": 354_823_168,
    "GPT-2 large": 774_030_080,
    "GPT-2 XL": 1_557_611_200,
    "Llama-2-7B": 6_738_415_616,
    "Llama-2-13B": 13_015_864_320,
    "Llama-2-70B": 68_976_648_192,
    "Llama-3-8B": 8_030_261_248,
    "Llama-3-70B": 70_553_706_496,
    "Llama-3.2-1B": 1_235_814_400,
    "Mistral-7B": 7_241_732_096,
}

LLAMA_2_7B = {
    "name": "Llama-2-7B",
    "hidden": 4096,
    "layers": 32,
    "heads": 32,
    "kv_heads": 32,
    "intermediate": 11008,
    "vocab": 32000,
    "positions": 0,
    "tied_embeddings": False,
    "gated_mlp": True,
    "norm": "rmsnorm",
    "biases": False,
    "dropout": False,
    "published_params": 6_738_415_616,
    "source": "a config",
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_every_preset_counts_to_its_published_figure(name):
    assert parameter_count(preset(name)) == PUBLISHED[name]


def test_the_model_picker_lists_every_preset_then_custom():
    assert model_names() == (*PUBLISHED, CUSTOM)
    assert load_models() is load_models()


def test_gpt2_small_worked_by_hand():
    parts = parameter_breakdown(preset("GPT-2 small"))
    # Token table 50,257 × 768 plus 1,024 learned positions × 768; the output layer reuses the tokens.
    assert parts.embeddings == 50_257 * 768 + 1_024 * 768 == 39_383_808
    assert parts.output_layer == 0
    # Per block: attention 4·768² weights + 4·768 biases; MLP 2·768·3072 + 3072 + 768; two LayerNorms 2·2·768.
    assert parts.attention == 12 * (4 * 768**2 + 4 * 768)
    assert parts.mlp == 12 * (2 * 768 * 3072 + 3072 + 768)
    assert parts.norms == (2 * 12 + 1) * 2 * 768
    assert parts.total == 124_439_808


def test_llama_2_7b_worked_by_hand():
    parts = parameter_breakdown(preset("Llama-2-7B"))
    # Untied: 32,000 × 4096 for the input table and again for the output layer.
    assert parts.embeddings == parts.output_layer == 131_072_000
    # Per block: q, k, v, o are 4096² each (32 KV heads = full width); SwiGLU has three 4096 × 11,008
    # matrices.
    assert parts.attention + parts.mlp == 32 * (4 * 4096**2 + 3 * 4096 * 11008) == 6_476_005_376
    # RMSNorm has a weight only: 2 per block plus the final one.
    assert parts.norms == 65 * 4096
    assert parts.total == 6_738_415_616


def test_grouped_query_attention_narrows_k_and_v():
    spec = preset("Llama-3-8B")
    # 8 KV heads of 128: K and V are 4096 × 1024 each, Q and O 4096 × 4096.
    assert spec.kv_width == 1024
    assert parameter_breakdown(spec).attention == 32 * (2 * 4096**2 + 2 * 4096 * 1024)


def test_custom_shape_worked_by_hand_against_the_lessons_rule():
    model = resolve_model(CUSTOM, hidden=2048, layers=16)
    assert (model.heads, model.intermediate, model.published_params) == (16, 8192, None)
    # 12·H² + 13·H per block (weights, biases, two LayerNorms), the 50,257-token table, a final LayerNorm.
    per_block = 12 * 2048**2 + 13 * 2048
    assert parameter_count(model) == 16 * per_block + 50_257 * 2048 + 2 * 2048 == 908_662_784
    assert 16 * 12 * 2048**2 == 805_306_368  # the lesson's rule leaves the rest out


@given(hidden=st.sampled_from([1024, 2048, 4096, 8192]), layers=st.integers(1, 64))
def test_each_extra_block_adds_the_same_parameters(hidden, layers):
    one_more = parameter_count(custom_model(hidden=hidden, layers=layers + 1))
    assert (
        one_more - parameter_count(custom_model(hidden=hidden, layers=layers)) == 12 * hidden**2 + 13 * hidden
    )


def test_unknown_presets_are_refused_readably():
    with pytest.raises(ValueError, match="no model preset called 'GPT-5'"):
        preset("GPT-5")
    with pytest.raises(ValueError, match="multiple of 128"):
        custom_model(hidden=1000, layers=4)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"heads": 30}, "split evenly into the attention heads"),
        ({"kv_heads": 5}, "split evenly into the KV heads"),
        ({"hidden": 0}, "hidden must be a positive whole number"),
        ({"norm": "batchnorm"}, "norm must be one of"),
        ({"gated_mlp": "yes"}, "gated_mlp must be true or false"),
        ({"source": " "}, "needs a source"),
        ({"published_params": 7_000_000_000}, "not the published 7,000,000,000"),
        ({"name": CUSTOM}, "reserved name"),
    ],
)
def test_bad_presets_fail_at_load(change, message):
    with pytest.raises(ValueError, match=message):
        parse_preset({**LLAMA_2_7B, **change})


def test_repeated_presets_and_a_missing_custom_recipe_fail_at_load():
    recipe = {
        "head_dim": 128,
        "mlp_ratio": 4,
        "vocab": 100,
        "positions": 0,
        "tied_embeddings": True,
        "gated_mlp": False,
        "norm": "layernorm",
        "biases": True,
        "dropout": False,
        "source": "ours",
    }
    assert len(parse_models({"presets": [LLAMA_2_7B], "custom": recipe}).presets) == 1
    with pytest.raises(ValueError, match="repeats a preset name"):
        parse_models({"presets": [LLAMA_2_7B, LLAMA_2_7B], "custom": recipe})
    with pytest.raises(ValueError, match="'custom' recipe"):
        parse_models({"presets": [LLAMA_2_7B]})
    with pytest.raises(ValueError, match="norm must be one of"):
        parse_models({"presets": [LLAMA_2_7B], "custom": {**recipe, "norm": "none"}})
