"""Model presets: every exact parameter count from the architecture, MoE active counts, the custom shape."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.datafiles import DATA_DIR, read_json
from core.model_config import parse_config
from core.model_tensors import model_tensors
from core.models import (
    CUSTOM,
    CUSTOM_RECIPE,
    active_parameter_count,
    custom_model,
    llama_mlp_width,
    load_models,
    model_names,
    parameter_breakdown,
    parameter_count,
    parse_models,
    parse_preset,
    preset,
    resolve_model,
)

# Published counts of the released weights (each file's _preset.source says where): keras-hub's
# preset metadata (GPT-2, Llama-2-7B, Llama-3-8B, Mistral-7B, Mixtral, Gemma 1/2/3, Phi-3, Falcon-RW,
# BLOOM; OPT's plus the 2 position rows transformers adds), the Pythia suite's table, and the Hugging Face
# Hub's safetensors totals for the others (OLMo-1B, OLMoE and DeepSeek-V2-Lite as public tools that read
# those safetensors report them); StarCoder2-3B's is transformers' own sum (no published total).
PUBLISHED = {
    "GPT-2 small": 124_439_808,
    "GPT-2 medium": 354_823_168,
    "GPT-2 large": 774_030_080,
    "GPT-2 XL": 1_557_611_200,
    "Pythia-160M": 162_322_944,
    "Pythia-6.9B": 6_857_302_016,
    "Llama-3.2-1B": 1_235_814_400,
    "Llama-2-7B": 6_738_415_616,
    "Llama-3-8B": 8_030_261_248,
    "Llama-2-13B": 13_015_864_320,
    "Llama-2-70B": 68_976_648_192,
    "Llama-3-70B": 70_553_706_496,
    "Mistral-7B": 7_241_732_096,
    "Mixtral-8x7B": 46_702_792_704,
    "Qwen2.5-0.5B": 494_032_768,
    "Qwen2.5-7B": 7_615_616_512,
    "Qwen3-0.6B": 596_049_920,
    "Qwen3-30B-A3B": 30_532_122_624,
    "Gemma-2B": 2_506_172_416,
    "Gemma-7B": 8_537_680_896,
    "Gemma-2-2B": 2_614_341_888,
    "Gemma-2-9B": 9_241_705_984,
    "Gemma-2-27B": 27_227_128_320,
    "Gemma-3-1B": 999_885_952,
    "Phi-2": 2_779_683_840,
    "Phi-3-mini-4k": 3_821_079_552,
    "OLMo-2-7B": 7_298_617_344,
    "OLMo-1B": 1_176_764_416,
    "OLMoE-1B-7B": 6_919_161_856,
    "DeepSeek-V2-Lite": 15_706_484_224,
    "Falcon-RW-1B": 1_311_625_216,
    "StarCoder2-3B": 3_030_371_328,
    "BLOOM-560M": 559_214_592,
    "OPT-125M": 125_239_296,
    "StarCoderBase-1B": 1_137_207_296,
}

LLAMA_2_7B = json.loads((DATA_DIR / "models" / "llama-2-7b.json").read_text())


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_every_preset_counts_to_its_published_figure(name):
    assert parameter_count(preset(name)) == PUBLISHED[name]


def test_presets_come_by_family_then_size_then_custom():
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


def test_custom_shape_is_llama_2_at_its_size():
    # The recipe is Llama 2's block, so hidden 4,096 and 32 layers is Llama-2-7B to the parameter.
    assert parameter_count(custom_model(hidden=4096, layers=32)) == PUBLISHED["Llama-2-7B"]
    model = resolve_model(CUSTOM, hidden=2048, layers=16)
    # MLP width: int(2·4·2048/3) = 5,461, rounded up to a multiple of 256.
    assert (model.heads, model.kv_heads, model.intermediate, model.published_params) == (16, 16, 5632, None)
    per_block = 4 * 2048**2 + 3 * 2048 * 5632 + 2 * 2048
    assert parameter_count(model) == 16 * per_block + 2 * 32_000 * 2048 + 2048 == 953_223_168
    assert 16 * 12 * 2048**2 == 805_306_368  # the lesson's rule: 12·H² a block and nothing else


@given(hidden=st.sampled_from([1024, 2048, 4096, 8192]), layers=st.integers(1, 64))
def test_each_extra_block_adds_the_same_parameters(hidden, layers):
    one_more = parameter_count(custom_model(hidden=hidden, layers=layers + 1))
    width = llama_mlp_width(hidden, 256)
    assert one_more - parameter_count(custom_model(hidden=hidden, layers=layers)) == (
        4 * hidden**2 + 3 * hidden * width + 2 * hidden
    )


def test_a_gated_mlp_with_biases_has_two_intermediate_biases_and_one_hidden():
    # gate_proj and up_proj each add an I-wide bias, down_proj an H-wide one: 2·I + H.
    plain = parse_config({**LLAMA_2_7B, "mlp_bias": False})
    biased = parse_config({**LLAMA_2_7B, "mlp_bias": True})
    assert parameter_breakdown(biased).mlp - parameter_breakdown(plain).mlp == 32 * (2 * 11008 + 4096)


def test_mixture_of_experts_active_parameters_worked_by_hand():
    mixtral = preset("Mixtral-8x7B")
    parts = parameter_breakdown(mixtral)
    expert = 3 * 4096 * 14336  # gate, up and down of one expert
    assert parts.experts == 32 * 8 * expert
    assert parts.mlp == 32 * 8 * 4096  # the routers
    # A token uses everything but the experts, and 2 of the 8 experts in each layer.
    assert active_parameter_count(mixtral) == PUBLISHED["Mixtral-8x7B"] - 32 * 6 * expert == 12_879_925_248
    qwen = preset("Qwen3-30B-A3B")
    assert (
        active_parameter_count(qwen)
        == PUBLISHED["Qwen3-30B-A3B"] - 48 * 120 * 3 * 2048 * 768
        == 3_353_032_704
    )
    assert (qwen.moe_layers, qwen.token_mlp_width) == (48, 8 * 768)
    dense = preset("Llama-3-8B")
    assert active_parameter_count(dense) == parameter_count(dense)


@pytest.mark.parametrize("name", [*PUBLISHED, CUSTOM])
def test_the_count_by_kind_of_block_equals_every_tensor_listed(name):
    spec = resolve_model(name, hidden=2048, layers=16)
    assert parameter_count(spec) == sum(t.numel for t in model_tensors(spec))


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_norms_per_block_counts_the_blocks_own_norms(name):
    # The memory estimate reads norms_per_block; the tensor list is what the model builds.
    spec = preset(name)
    block = [
        t for t in model_tensors(spec) if ".0." in t.name and t.part == "norms" and t.name.endswith("weight")
    ]
    if spec.norm in ("layernorm_plain", "layernorm_no_affine"):  # these LayerNorms hold no weight
        assert block == []
        return
    own = [t for t in block if "self_attn." not in t.name and "attn." not in t.name]  # QK-norms sit inside
    latent = [t for t in block if "_a_layernorm" in t.name]  # DeepSeek's latent norms, inside attention
    assert len(own) == spec.norms_per_block
    assert len(block) - len(own) - len(latent) == (0 if spec.qk_norm == "none" else 2)


def test_unknown_presets_are_refused_readably():
    with pytest.raises(ValueError, match="no model preset called 'GPT-5'"):
        preset("GPT-5")
    with pytest.raises(ValueError, match="multiple of 128"):
        custom_model(hidden=1000, layers=4)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"_preset": None}, "needs a _preset object"),
        ({"_preset": {**LLAMA_2_7B["_preset"], "source": " "}}, "needs a source"),
        (
            {"_preset": {**LLAMA_2_7B["_preset"], "published_params": 7_000_000_000}},
            "not the published 7,000,000,000",
        ),
        ({"_preset": {**LLAMA_2_7B["_preset"], "published_params": True}}, "published parameter count"),
        ({"_preset": {**LLAMA_2_7B["_preset"], "name": CUSTOM}}, "cannot be called 'custom'"),
        ({"num_key_value_heads": 5}, "split evenly into num_key_value_heads"),
        ({"model_type": "bert"}, "model_type 'bert' is not one we can count"),
    ],
)
def test_bad_presets_fail_at_load(change, message):
    with pytest.raises(ValueError, match=message):
        parse_preset({**LLAMA_2_7B, **change}, "llama-2-7b.json")


def test_repeated_presets_and_a_bad_custom_recipe_fail_at_load():
    recipe = read_json(CUSTOM_RECIPE)
    assert len(parse_models({"a.json": LLAMA_2_7B}, recipe).presets) == 1
    with pytest.raises(ValueError, match="share a name"):
        parse_models({"a.json": LLAMA_2_7B, "b.json": LLAMA_2_7B}, recipe)
    with pytest.raises(ValueError, match="must hold an object"):
        parse_models({"a.json": LLAMA_2_7B}, [])
    with pytest.raises(ValueError, match="positive head_dim"):
        parse_models({"a.json": LLAMA_2_7B}, {**recipe, "head_dim": 0})
    with pytest.raises(ValueError, match="model_type 'gpt3'"):
        parse_models({"a.json": LLAMA_2_7B}, {**recipe, "config": {**recipe["config"], "model_type": "gpt3"}})
