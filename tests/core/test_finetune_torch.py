"""LoRA trainable-parameter counts against peft itself: every family built on the meta device, both targets.

peft wraps the layers of a transformers model built on the meta device (shapes, no storage) and
`get_nb_trainable_parameters()` counts what it made trainable; ours must be the same number.
The `attention` target set is given to peft as the names of the linear layers inside each block's
attention module, read from the built model, so the two sides agree on which layers only if our
count picks exactly the layers the model has.
"""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
peft = pytest.importorskip(
    "peft", reason="peft is a test-only dependency (pip install -r requirements-torch.txt)."
)
transformers = pytest.importorskip(
    "transformers", reason="transformers is a test-only dependency (pip install -r requirements-torch.txt)."
)

from transformers.pytorch_utils import Conv1D  # noqa: E402

from core.datafiles import DATA_DIR, read_json  # noqa: E402
from core.memory.finetune import LORA_TARGETS, lora_parameters, lora_targets  # noqa: E402
from core.model_config import FAMILIES, parse_config  # noqa: E402
from tests.core.test_model_tensors_torch import (  # noqa: E402
    NO_SPECIAL_TOKENS,
    SMALL,
    hf_model,
    random_configs,
    small_config,
)

pytestmark = pytest.mark.torch
ATTENTION_MODULES = ("self_attn", "attn", "attention", "self_attention")  # each family's attention module


def _attention_linears(model) -> list[str]:
    """Full names of the linear layers inside a block's attention module."""
    return [
        name
        for name, module in model.named_modules()
        if isinstance(module, (torch.nn.Linear, Conv1D))
        and set(name.split(".")[:-1]) & set(ATTENTION_MODULES)
    ]


def peft_trainable(config: dict[str, Any], rank: int, targets: str) -> int:
    """What peft's get_nb_trainable_parameters() reports for LoRA of `rank` on `targets`."""
    model = hf_model(config)
    modules: Any = "all-linear" if targets == "all-linear" else _attention_linears(model)
    lora = peft.LoraConfig(r=rank, target_modules=modules, lora_dropout=0.0, bias="none")
    trainable, _ = peft.get_peft_model(model, lora).get_nb_trainable_parameters()
    return int(trainable)


def ours(config: dict[str, Any], rank: int, targets: str) -> int:
    return lora_parameters(parse_config(config), rank, targets)


@pytest.mark.parametrize("targets", LORA_TARGETS)
@pytest.mark.parametrize("model_type", list(SMALL))
def test_each_family_trains_what_peft_makes_trainable(model_type, targets):
    config = small_config(model_type)
    assert ours(config, 8, targets) == peft_trainable(config, 8, targets)


def test_every_family_is_checked():
    assert set(SMALL) == set(FAMILIES)


@pytest.mark.parametrize("model_type", list(FAMILIES))
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_random_configs_of_every_family_train_what_peft_makes_trainable(model_type, data):
    config = data.draw(random_configs(model_type))
    rank = data.draw(st.integers(1, 16))
    targets = data.draw(st.sampled_from(LORA_TARGETS))
    assert ours(config, rank, targets) == peft_trainable(config, rank, targets)


def test_llama_attention_lora_by_hand():
    # Small Llama: hidden 48, 4 heads of 16 (q and o 64 wide), 2 KV heads (k and v 32 wide), 2 blocks.
    # Rank 8 per block: q 8·(48+64) + k 8·(48+32) + v 8·(48+32) + o 8·(64+48) = 896 + 640 + 640 + 896.
    spec = parse_config(small_config("llama"))
    assert [t.tensor.name for t in lora_targets(spec, "attention")][:4] == [
        "model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.self_attn.v_proj.weight",
        "model.layers.0.self_attn.o_proj.weight",
    ]
    assert lora_parameters(spec, 8, "attention") == 2 * (896 + 640 + 640 + 896)


def test_peft_keeps_adapters_in_fp32_over_a_bf16_base():
    # core.memory.model_state counts 4 bytes an adapter parameter (and so its gradient and AdamW state).
    fields = {k: v for k, v in small_config("llama").items() if not k.startswith("_")}
    hf_config = transformers.AutoConfig.for_model(**{**fields, **NO_SPECIAL_TOKENS})
    model = transformers.AutoModelForCausalLM.from_config(hf_config).to(torch.bfloat16)
    lora = peft.get_peft_model(model, peft.LoraConfig(r=4, target_modules="all-linear"))
    trainable = {p.dtype for p in lora.parameters() if p.requires_grad}
    frozen = {p.dtype for p in lora.parameters() if not p.requires_grad}
    assert (trainable, frozen) == ({torch.float32}, {torch.bfloat16})


def _smallest_config_of_each_family() -> list[str]:
    """One shipped config a model_type, its smallest: a larger one of the same family repeats the same
    layers more times and wider, and building 70B models on the meta device under peft takes seconds each."""
    smallest: dict[str, tuple[int, str]] = {}
    for path in sorted(p for d in ("configs", "models") for p in (DATA_DIR / d).glob("*.json")):
        name = f"{path.parent.name}/{path.name}"
        config = read_json(name)
        size = int(config.get("num_hidden_layers", config.get("n_layer", 0))) * int(
            config.get("hidden_size", config.get("n_embd", 0))
        )
        family = str(config["model_type"])
        if family not in smallest or size < smallest[family][0]:
            smallest[family] = (size, name)
    return sorted(name for _, name in smallest.values())


# DeepSeek-V3's 58 MoE layers of 256 experts take peft minutes to wrap even on the meta device; its
# first four layers (three dense, then one MoE) hold every kind of layer it has, at full width.
DEPTH_CAP = {"configs/deepseek-v3.json": 4}


@pytest.mark.parametrize("targets", LORA_TARGETS)
@pytest.mark.parametrize("file_name", _smallest_config_of_each_family())
def test_published_configs_at_full_size_train_what_peft_makes_trainable(file_name, targets):
    config = read_json(file_name)
    if file_name in DEPTH_CAP:
        config = {**config, "num_hidden_layers": DEPTH_CAP[file_name]}
    assert ours(config, 16, targets) == peft_trainable(config, 16, targets)
