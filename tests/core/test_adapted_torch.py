"""What autograd saves under LoRA, QLoRA and frozen blocks, measured with saved-tensor hooks on the CPU at
Llama 3.2 1B's width (two blocks, BF16, eager attention, 32 tokens), against core.memory.adapted; and
bitsandbytes' AdamW8bit state, created on the CPU, against core.memory.model_state.

Each block's count equals the measurement exactly, but for one shared pair of tensors: RoPE's cos and
sin tables (2 × tokens × head width, BF16) are computed once outside the blocks and first saved by the
first block that saves anything, so that block's measurement holds them too.

GPT-2 (LayerNorm, Conv1D, dropout) at its real width in FP32: what each method saves less than full
training, block by block, equals the measurement exactly. The absolute count is the CUDA one (1-byte
dropout masks), checked against the H200 reference in test_memory_phases; the CPU keeps other masks.
"""

from dataclasses import replace

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
peft = pytest.importorskip("peft", reason="peft is a test-only dependency.")
bnb = pytest.importorskip("bitsandbytes", reason="bitsandbytes is a test-only dependency.")
transformers = pytest.importorskip("transformers", reason="transformers is a test-only dependency.")

from core.datafiles import read_json  # noqa: E402
from core.memory.model_state import run_model_state  # noqa: E402
from core.memory.phases import step_inputs  # noqa: E402
from core.memory.setup import StepSetup, TrainingMethod  # noqa: E402
from core.model_config import parse_config  # noqa: E402
from tests.harness.saved_tensors import saved_bytes  # noqa: E402

pytestmark = pytest.mark.torch
CONFIG = {**read_json("configs/llama-3.2-1b.json"), "num_hidden_layers": 2, "vocab_size": 1024}
TOKENS, HEAD_WIDTH = 32, 64
ROPE_TABLES = 2 * TOKENS * HEAD_WIDTH * 2  # cos and sin in BF16
ATTENTION = ["q_proj", "k_proj", "v_proj", "o_proj"]


def _quantize(model) -> None:
    """Every block's linear layers as transformers' load_in_4bit makes them: NF4, double quantization."""
    for block in model.model.layers:
        for parent in (block.self_attn, block.mlp):
            for name, layer in list(parent.named_children()):
                if isinstance(layer, torch.nn.Linear):
                    four = bnb.nn.Linear4bit(
                        layer.in_features,
                        layer.out_features,
                        bias=False,
                        compute_dtype=torch.bfloat16,
                        quant_type="nf4",
                        compress_statistics=True,
                    )
                    four.weight = bnb.nn.Params4bit(
                        layer.weight.data, requires_grad=False, quant_type="nf4", compress_statistics=True
                    )
                    setattr(parent, name, four.to("cpu"))  # quantized on the move
    model.is_loaded_in_4bit = True  # peft then wraps them in its bnb Linear4bit


def _model(training: TrainingMethod) -> tuple:
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**CONFIG)
    config._attn_implementation = "eager"
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    if training.method == "qlora":
        _quantize(model)
    if training.adapted:
        targets = ATTENTION if training.lora_targets == "attention" else "all-linear"
        model = peft.get_peft_model(model, peft.LoraConfig(r=training.lora_rank, target_modules=targets))
        return model, list(model.base_model.model.model.layers)
    model.model.embed_tokens.requires_grad_(training.freeze_blocks == 0)
    for block in model.model.layers[: training.freeze_blocks]:
        block.requires_grad_(False)
    return model, list(model.model.layers)


@pytest.mark.parametrize(
    "training",
    [
        TrainingMethod(),
        TrainingMethod(freeze_blocks=1),
        TrainingMethod(method="lora"),
        TrainingMethod(method="lora", lora_targets="all-linear"),
        TrainingMethod(method="qlora"),
    ],
    ids=["full", "freeze-1", "lora-attention", "lora-all-linear", "qlora-attention"],
)
def test_saved_activations_equal_the_hooks(training) -> None:
    setup = StepSetup(
        model=parse_config(CONFIG),
        batch=1,
        seq_len=TOKENS,
        attention="eager",
        training=training,
    )
    counted = step_inputs(setup)[0].saved_by_block
    model, blocks = _model(training)
    model.train()
    ids = torch.randint(0, CONFIG["vocab_size"], (1, TOKENS))
    measured = saved_bytes(model, blocks, lambda: model(input_ids=ids, labels=ids).loss)
    first_saving = next(b for b, size in enumerate(counted) if size)
    for block, size in enumerate(counted):
        rope = ROPE_TABLES if block == first_saving else 0
        assert measured.block_bytes(block) == size + rope, block


GPT2 = {**read_json("configs/gpt2-small.json"), "n_layer": 2, "vocab_size": 1000}


def _gpt2_saved(training: TrainingMethod) -> list[int]:
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**GPT2)
    config._attn_implementation = "eager"
    model = transformers.AutoModelForCausalLM.from_config(config)
    if training.adapted:
        targets = ["c_attn", "attn.c_proj"] if training.lora_targets == "attention" else "all-linear"
        model = peft.get_peft_model(model, peft.LoraConfig(r=training.lora_rank, target_modules=targets))
        blocks = list(model.base_model.model.transformer.h)
    else:
        blocks = list(model.transformer.h)
        for frozen in (model.transformer.wte, model.transformer.wpe, *blocks[: training.freeze_blocks]):
            frozen.requires_grad_(training.freeze_blocks == 0)
    model.train()
    ids = torch.randint(0, GPT2["vocab_size"], (1, TOKENS))
    measured = saved_bytes(model, blocks, lambda: model(input_ids=ids, labels=ids).loss)
    return [measured.block_bytes(b) for b in range(len(blocks))]


@pytest.mark.parametrize(
    "training",
    [
        TrainingMethod(freeze_blocks=1),
        TrainingMethod(method="lora"),
        TrainingMethod(method="lora", lora_targets="all-linear"),
    ],
    ids=["freeze-1", "lora-attention", "lora-all-linear"],
)
def test_gpt2_saves_less_than_full_training_as_counted(training) -> None:
    def counted(method: TrainingMethod) -> tuple[float, ...]:
        setup = StepSetup(
            model=parse_config(GPT2),
            batch=1,
            seq_len=TOKENS,
            precision="fp32",
            attention="eager",
            training=method,
        )
        return step_inputs(setup)[0].saved_by_block

    full, method = _gpt2_saved(TrainingMethod()), _gpt2_saved(training)
    ours = counted(training)
    expected = [f - m if m else -1 for f, m in zip(counted(TrainingMethod()), ours, strict=True)]
    # A block below the first that trains keeps nothing at all (-1 marks it).
    assert [f - m if c else -1 for f, m, c in zip(full, method, ours, strict=True)] == expected
    assert [m for m, c in zip(method, ours, strict=True) if not c] == [0] * ours.count(0.0)


def test_adamw8bit_state_equals_bitsandbytes() -> None:
    # A small Llama whose tensors straddle min_8bit_size: norms of 48 values, matrices of 2,304 to 4,848.
    config = {
        "model_type": "llama",
        "hidden_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 101,
        "vocab_size": 300,
    }
    model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(**config))
    optimizer = bnb.optim.AdamW8bit(model.parameters())
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    optimizer.step()
    storages = {
        v.untyped_storage().data_ptr(): v.untyped_storage().nbytes()
        for state in optimizer.state.values()
        for v in state.values()
        if torch.is_tensor(v) and v.dim() > 0  # the step count is a number, not state
    }
    setup = replace(
        StepSetup(model=parse_config(config), batch=1, seq_len=8, precision="fp32"), optimizer="adamw8bit"
    )
    assert run_model_state(setup, TrainingMethod()).per_gpu.optimizer_state == sum(storages.values())


def _preset(file_name: str) -> dict:
    raw = {**read_json(f"models/{file_name}.json"), "num_hidden_layers": 2, "vocab_size": 1024}
    raw.pop("_preset")
    return raw


@pytest.mark.parametrize("file_name", ["qwen3-0.6b", "gemma-3-1b-pt", "gemma-2-2b"])
@pytest.mark.parametrize(
    "training",
    [TrainingMethod(freeze_blocks=1), TrainingMethod(method="lora", lora_targets="all-linear")],
    ids=["freeze-1", "lora-all-linear"],
)
def test_qk_norms_and_gemmas_four_norms_drop_what_only_a_weight_gradient_reads(file_name, training) -> None:
    raw = _preset(file_name)
    setup = StepSetup(
        model=parse_config(raw), batch=2, seq_len=TOKENS // 2, attention="eager", training=training
    )
    counted = step_inputs(setup)[0].saved_by_block
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**raw)
    model = transformers.AutoModelForCausalLM.from_config(
        config, dtype=torch.bfloat16, attn_implementation="eager"
    )
    if training.adapted:
        model = peft.get_peft_model(model, peft.LoraConfig(r=training.lora_rank, target_modules="all-linear"))
        blocks = list(model.base_model.model.model.layers)
    else:
        blocks = list(model.model.layers)
        for frozen in (model.model.embed_tokens, blocks[0]):
            frozen.requires_grad_(False)
    model.train()
    ids = torch.randint(0, raw["vocab_size"], (2, TOKENS // 2))
    measured = saved_bytes(model, blocks, lambda: model(input_ids=ids, labels=ids).loss)
    head_dim = raw.get("head_dim") or raw["hidden_size"] // raw["num_attention_heads"]
    first_saving = next(b for b, size in enumerate(counted) if size)
    for block, size in enumerate(counted):
        rope = 2 * (TOKENS // 2) * head_dim * 2 if block == first_saving else 0  # one row per position
        assert measured.block_bytes(block) == size + rope, block
