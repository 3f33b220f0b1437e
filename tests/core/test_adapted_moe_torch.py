"""What autograd saves under LoRA and QLoRA on a mixture of experts, measured with saved-tensor hooks on
the CPU against core.memory.adapted: Mixtral, Qwen3-MoE and OLMoE at width 1,024 (two blocks, four
experts, two a token, eager attention, 32 tokens), in BF16 and FP32. Attention-only: frozen router and
experts keep less; all-linear: peft's merged expert and router weights (and, in BF16, the experts' cast
adapters) are kept besides what full training keeps.

Checked as what each block saves less (or more) than full training: block by block, the measurement's
difference equals the count's exactly. (The full-training count leaves out a few tensors the methods do
not change: RoPE's tables, grouped_mm's int32 offsets and, where the top-k weights are renormalised,
those weights before it and their sum.)
"""

from dataclasses import replace
from functools import cache

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
peft = pytest.importorskip("peft", reason="peft is a test-only dependency.")
pytest.importorskip("bitsandbytes", reason="bitsandbytes is a test-only dependency.")
transformers = pytest.importorskip("transformers", reason="transformers is a test-only dependency.")

from core.datafiles import read_json  # noqa: E402
from core.memory.finetune import lora_targets  # noqa: E402
from core.memory.phases import step_inputs  # noqa: E402
from core.memory.setup import StepSetup, TrainingMethod  # noqa: E402
from core.model_config import parse_config  # noqa: E402
from tests.core.test_adapted_torch import _quantize  # noqa: E402
from tests.harness.saved_tensors import one_thread, saved_bytes  # noqa: E402

pytestmark = pytest.mark.torch
transformers.logging.set_verbosity_error()
_one_thread = pytest.fixture(scope="module", autouse=True)(one_thread)

TOKENS = 32
NARROW = {
    "num_hidden_layers": 2,
    "vocab_size": 1024,
    "hidden_size": 1024,
    "intermediate_size": 1024,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "num_experts_per_tok": 2,
}
FAMILIES = {
    "mixtral-8x7b-v0.1": {"num_local_experts": 4},
    "qwen3-30b-a3b": {"num_experts": 4, "moe_intermediate_size": 512},
    "olmoe-1b-7b-0924": {"num_experts": 4},
}
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
ALL_LINEAR = TrainingMethod(method="lora", lora_targets="all-linear")


def _config(name: str) -> dict:
    raw = {k: v for k, v in read_json(f"models/{name}.json").items() if not k.startswith("_")}
    return {**raw, **NARROW, **FAMILIES[name]}


def _setup(name: str, precision: str, training: TrainingMethod) -> StepSetup:
    return StepSetup(
        model=parse_config(_config(name)),
        batch=1,
        seq_len=TOKENS,
        precision=precision,
        attention="eager",
        training=training,
    )


@cache
def _measured(name: str, precision: str, training: TrainingMethod) -> tuple[int, ...]:
    setup = _setup(name, precision, training)
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**_config(name))
    model = transformers.AutoModelForCausalLM.from_config(
        config, dtype=DTYPES[precision], attn_implementation="eager"
    )
    if training.method == "qlora":
        _quantize(model)  # the attention's linear layers; router and experts are no nn.Linear
    blocks = list(model.model.layers)
    if training.adapted:
        attention = sorted({t.tensor.name.rsplit(".", 2)[-2] for t in lora_targets(setup.model, "attention")})
        names = attention if training.lora_targets == "attention" else "all-linear"
        model = peft.get_peft_model(model, peft.LoraConfig(r=training.lora_rank, target_modules=names))
    model.train()
    ids = torch.randint(0, NARROW["vocab_size"], (1, TOKENS))
    measured = saved_bytes(model, blocks, lambda: model(input_ids=ids, labels=ids).loss)
    return tuple(measured.block_bytes(b) for b in range(NARROW["num_hidden_layers"]))


@pytest.mark.parametrize(
    ("name", "precision", "training"),
    [
        ("mixtral-8x7b-v0.1", "bf16", TrainingMethod(method="lora")),
        ("mixtral-8x7b-v0.1", "fp32", TrainingMethod(method="lora")),
        ("mixtral-8x7b-v0.1", "bf16", TrainingMethod(method="qlora")),
        ("qwen3-30b-a3b", "bf16", TrainingMethod(method="lora")),
        ("qwen3-30b-a3b", "fp32", TrainingMethod(method="lora")),
        ("olmoe-1b-7b-0924", "bf16", TrainingMethod(method="lora")),
        ("mixtral-8x7b-v0.1", "bf16", ALL_LINEAR),
        ("mixtral-8x7b-v0.1", "fp32", ALL_LINEAR),
        ("qwen3-30b-a3b", "bf16", replace(ALL_LINEAR, method="qlora")),
    ],
    ids=[
        "mixtral-bf16",
        "mixtral-fp32",
        "mixtral-qlora",
        "qwen3-moe-bf16",
        "qwen3-moe-fp32",
        "olmoe-bf16",
        "mixtral-all-linear-bf16",
        "mixtral-all-linear-fp32",
        "qwen3-moe-all-linear-qlora",
    ],
)
def test_experts_save_as_counted(name, precision, training) -> None:
    def counted(method: TrainingMethod) -> tuple[float, ...]:
        return step_inputs(_setup(name, precision, method))[0].saved_by_block

    full, method = _measured(name, precision, TrainingMethod()), _measured(name, precision, training)
    measured_drop = [f - m for f, m in zip(full, method, strict=True)]
    counted_drop = [f - m for f, m in zip(counted(TrainingMethod()), counted(training), strict=True)]
    assert measured_drop == counted_drop


def test_qlora_dequantizes_the_widest_attention_layer_not_an_expert() -> None:
    # Routed experts are parameters of their own module, which bitsandbytes leaves in BF16: the widest NF4
    # weight is the query projection (16 heads × 64 × 1,024), not an expert's gate_up (4 × 2,048 × 1,024).
    setup = _setup("mixtral-8x7b-v0.1", "bf16", TrainingMethod(method="qlora"))
    assert step_inputs(setup)[0].dequantized_weight_bytes == 2 * 16 * 64 * 1024
