"""LoRA and frozen blocks under autocast (`precision="amp"`: FP32 weights, forward under torch.autocast
BF16, the Hugging Face Trainer's `bf16=True` on an FP32 model), measured with saved-tensor hooks on the
CPU at real width (two blocks, 2 × 16 tokens) against core.memory.adapted, block by block and outside.

The CPU's autocast lowers the same ops as CUDA's for these models (linear layers, matmuls, SDPA; the
norms, softmax and loss stay FP32), as tests/core/test_hf_stack_saved_tensors.py checks for full
training. One difference in peft: its bnb layer asks `torch.is_autocast_enabled()` (CUDA's) only, which
QLoRA would need; QLoRA under autocast is refused.

Each block's count equals the measurement exactly but for RoPE's FP32 cos and sin tables, which the
first block that saves anything keeps; outside the blocks the count equals it but for the loss's FP32
normaliser (4 bytes), as for full training. One BF16 run checks the outside for Gemma, whose frozen
embedding drops the scale its product keeps and whose frozen final norm its FP32 normalised tensor.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is a test-only dependency (requirements-torch.txt).")
peft = pytest.importorskip("peft", reason="peft is a test-only dependency.")
transformers = pytest.importorskip("transformers", reason="transformers is a test-only dependency.")

from core.datafiles import read_json  # noqa: E402
from core.memory.phases import step_inputs  # noqa: E402
from core.memory.setup import StepSetup, TrainingMethod  # noqa: E402
from core.model_config import parse_config  # noqa: E402
from tests.harness.saved_tensors import OUTSIDE, one_thread, saved_bytes  # noqa: E402

pytestmark = pytest.mark.torch
BATCH, SEQ = 2, 16
LOSS_SCALAR_BYTES = 4
DTYPES = {"bf16": torch.bfloat16, "amp": torch.float32}  # amp: an FP32 model under autocast
TRAININGS = {
    "freeze-1": TrainingMethod(freeze_blocks=1),
    "lora-attention": TrainingMethod(method="lora"),
    "lora-all-linear": TrainingMethod(method="lora", lora_targets="all-linear"),
}


def _raw(file_name: str) -> dict:
    raw = {**read_json(f"models/{file_name}.json"), "num_hidden_layers": 2, "vocab_size": 1024}
    raw.pop("_preset")
    return raw


_one_thread = pytest.fixture(scope="module", autouse=True)(one_thread)


def _measure(raw: dict, training: TrainingMethod, precision: str, attention: str):
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**raw)
    model = transformers.AutoModelForCausalLM.from_config(
        config, dtype=DTYPES[precision], attn_implementation=attention
    )
    if training.adapted:
        targets = (
            ["q_proj", "k_proj", "v_proj", "o_proj"] if training.lora_targets == "attention" else "all-linear"
        )
        model = peft.get_peft_model(model, peft.LoraConfig(r=training.lora_rank, target_modules=targets))
        blocks = list(model.base_model.model.model.layers)
    else:
        blocks = list(model.model.layers)
        for frozen in (model.model.embed_tokens, *blocks[: training.freeze_blocks]):
            frozen.requires_grad_(False)
    model.train()
    ids = torch.randint(0, raw["vocab_size"], (BATCH, SEQ))

    def loss():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "amp"):
            return model(input_ids=ids, labels=ids).loss

    return saved_bytes(model, blocks, loss)


RUNS = [
    ("llama-3.2-1b", "amp", "sdpa"),
    ("llama-3.2-1b", "amp", "eager"),
    ("qwen3-0.6b", "amp", "eager"),
    ("qwen2.5-0.5b", "amp", "eager"),  # q, k and v biases: their BF16 copies are kept by nothing
    ("gemma-2-2b", "amp", "eager"),
    ("gemma-2-2b", "bf16", "eager"),  # outside the blocks: a frozen Gemma embedding and final norm
]


@pytest.mark.parametrize(("file_name", "precision", "attention"), RUNS, ids=["-".join(run) for run in RUNS])
@pytest.mark.parametrize("name", list(TRAININGS))
def test_frozen_weights_save_what_the_count_says(
    file_name: str, precision: str, attention: str, name: str
) -> None:
    raw, training = _raw(file_name), TRAININGS[name]
    setup = StepSetup(
        model=parse_config(raw),
        batch=BATCH,
        seq_len=SEQ,
        precision=precision,
        attention=attention,
        training=training,
    )
    method, _ = step_inputs(setup)
    measured = _measure(raw, training, precision, attention)
    head_dim = raw.get("head_dim") or raw["hidden_size"] // raw["num_attention_heads"]
    rope = 2 * SEQ * head_dim * DTYPES[precision].itemsize
    first_saving = next(b for b, size in enumerate(method.saved_by_block) if size)
    got = [measured.block_bytes(b) - (rope if b == first_saving else 0) for b in range(2)]
    assert got == list(method.saved_by_block)
    assert measured.block_bytes(OUTSIDE) == method.count.outside_bytes + LOSS_SCALAR_BYTES
