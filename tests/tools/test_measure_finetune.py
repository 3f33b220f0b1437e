"""The fine-tuning measurement run dry on the CPU: its command line and refusals, peft's LoRA and
bitsandbytes' NF4 base as the tool builds them (checked against core's counts), frozen blocks, AdamW8bit,
the plan a GPU session runs, and the CSV rows. Only the allocator readings need a CUDA GPU."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
pytest.importorskip("transformers", reason="transformers is a test-only dependency (requirements-torch.txt).")
pytest.importorskip("peft", reason="peft is a test-only dependency (requirements-torch.txt).")
bnb = pytest.importorskip(
    "bitsandbytes", reason="bitsandbytes is a test-only dependency (requirements-torch.txt)."
)

from core.memory.finetune import LORA_TARGETS, lora_parameters, lora_targets  # noqa: E402
from core.memory.model_state import run_model_state  # noqa: E402
from core.memory.qlora import quantized  # noqa: E402
from core.memory.setup import StepSetup, TrainingMethod  # noqa: E402
from core.model_config import parse_config  # noqa: E402
from core.model_tensors import model_tensors  # noqa: E402
from core.models import parameter_count  # noqa: E402
from tests.tools.test_measure_gpu import counting_readers  # noqa: E402
from tools.finetune_csv import FINETUNE_COLUMNS, MODEL_CONFIGS  # noqa: E402
from tools.finetune_model import make_optimizer, parameter_counts  # noqa: E402
from tools.measure_gpu import (  # noqa: E402
    GpuSetup,
    build_model,
    finetune_plan,
    main,
    measure_setups,
    parse_setups,
    published_config,
    reference_setups,
)

pytestmark = pytest.mark.torch
CPU = torch.device("cpu")
PLAN_MODELS = ("GPT-2 small", "Llama-3.2-1B", "Qwen2.5-0.5B", "Qwen3-0.6B")
LLAMA_STYLE = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 256,
}
# The published configs, narrowed so that a shared CPU builds and steps them in a moment.
NARROW = {
    "GPT-2 small": {"n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 256},
    "Llama-3.2-1B": {**LLAMA_STYLE, "head_dim": 16},
    "Qwen2.5-0.5B": LLAMA_STYLE,
    "Qwen3-0.6B": {**LLAMA_STYLE, "head_dim": 16},
}
NO_SPECIAL_TOKENS = {"pad_token_id": None, "bos_token_id": None, "eos_token_id": None}


def narrow(model: str) -> dict:
    return {**published_config(model), **NARROW[model], **NO_SPECIAL_TOKENS}


def setup(model: str = "Llama-3.2-1B", training: TrainingMethod | None = None, **changes) -> GpuSetup:
    fields = {"mode": "bf16", "optimizer_impl": "foreach", **changes}
    mode, impl = fields.pop("mode"), fields.pop("optimizer_impl")
    return GpuSetup(model, 1, 8, mode, "sdpa", "none", impl, training or TrainingMethod(), **fields)


def adapted_modules(model) -> set[str]:
    """The base model's layers peft gave an adapter, by their names in the base model."""
    prefix = "base_model.model."
    return {
        name.removeprefix(prefix) for name, m in model.named_modules() if hasattr(m, "lora_A") and m.lora_A
    }


def test_a_lora_command_line_is_one_setup():
    argv = ["--model", "Qwen3-0.6B", "--batch", "2", "--seq", "64", "--method", "lora", "--lora-rank", "8"]
    setups, output = parse_setups([*argv, "--lora-targets", "all-linear", "--output", "x.csv"])
    lora = TrainingMethod("lora", 8, "all-linear")
    assert setups == (GpuSetup("Qwen3-0.6B", 2, 64, "bf16", "sdpa", "none", "foreach", lora),)
    assert output == Path("x.csv")


def test_adamw8bit_steps_one_tensor_at_a_time_unless_told_otherwise():
    argv = ["--model", "GPT-2 small", "--batch", "1", "--seq", "8", "--optimizer", "adamw8bit"]
    ((one,), _) = parse_setups(argv)
    assert (one.optimizer, one.optimizer_impl) == ("adamw8bit", "loop")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--lora-rank", "8"], "--lora-rank and --lora-targets need --method lora or qlora."),
        (["--method", "qlora", "--mode", "amp"], "QLoRA computes in BF16 over its NF4 base"),
        (["--method", "lora", "--prepare-kbit"], "prepare_kbit is a QLoRA setting."),
        (["--method", "lora", "--freeze-blocks", "2"], "Freezing blocks is a choice for full training"),
        (["--method", "lora", "--lora-rank", "0"], "The LoRA rank must be a whole number from 1"),
        (["--optimizer", "adamw8bit", "--optimizer-impl", "fused"], "its optimizer_impl is loop"),
        (["--plan", "finetune"], "leave out --model"),
    ],
)
def test_a_setup_that_cannot_be_measured_is_refused_in_one_line(extra, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_setups(["--model", "Llama-3.2-1B", "--batch", "1", "--seq", "8", *extra])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_setup_needs_a_model_and_a_shape(capsys):
    with pytest.raises(SystemExit):
        parse_setups(["--method", "lora"])
    assert "Name --model, --batch and --seq, or a --plan." in capsys.readouterr().err


def test_without_cuda_the_command_says_so_in_one_sentence(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as exit_:
        main(["--plan", "finetune"])
    assert str(exit_.value) == "Measuring a training step needs a CUDA GPU; none is visible to PyTorch."


def test_the_plan_measures_four_methods_per_shape_and_checks_full_training_on_the_reference():
    plan = finetune_plan()
    assert len(plan) == 4 * 2 * 4 + 3 and len(set(plan)) == len(plan)
    assert {s.model for s in plan} == set(PLAN_MODELS) <= set(MODEL_CONFIGS)
    for s in plan:
        spec = parse_config(published_config(s.model))
        assert spec.positions == 0 or s.seq <= spec.positions
    shapes = {(s.model, s.batch, s.seq) for s in plan}
    methods: dict[tuple[str, int, int], set[tuple[str, str]]] = {
        (s.model, s.batch, s.seq): set() for s in plan
    }
    for s in plan:
        methods[(s.model, s.batch, s.seq)].add((s.training.method, s.training.lora_targets))
    assert all(
        {("full", "attention"), ("lora", "attention"), ("qlora", "all-linear")} <= m for m in methods.values()
    )
    measured = {(r.model, r.batch, r.seq) for r in reference_setups()}
    assert {
        shape for shape in shapes if shape[0] in ("GPT-2 small", "Llama-3.2-1B", "Qwen2.5-0.5B")
    } & measured == {
        ("GPT-2 small", 4, 1024),
        ("Llama-3.2-1B", 2, 2048),
        ("Llama-3.2-1B", 8, 512),
        ("Qwen2.5-0.5B", 4, 1024),
    }


@pytest.mark.parametrize("targets", LORA_TARGETS)
@pytest.mark.parametrize("model", PLAN_MODELS)
def test_peft_adapts_the_layers_core_lists_and_trains_what_core_counts(model, targets):
    config = narrow(model)
    spec = parse_config(config)
    built = build_model(setup(model, TrainingMethod("lora", 4, targets)), CPU, config)
    assert adapted_modules(built) == {
        t.tensor.name.removesuffix(".weight") for t in lora_targets(spec, targets)
    }
    assert parameter_counts(built) == (parameter_count(spec), lora_parameters(spec, 4, targets))
    trainable = {p.dtype for p in built.parameters() if p.requires_grad}
    assert trainable == {torch.float32}  # peft's adapters in FP32 over the BF16 base


@pytest.mark.parametrize("model", ("GPT-2 small", "Qwen3-0.6B"))
def test_qlora_stores_in_nf4_exactly_the_weights_core_quantizes(model):
    config = narrow(model)
    spec = parse_config(config)
    built = build_model(setup(model, TrainingMethod("qlora", 4, "all-linear")), CPU, config)
    layers = {
        name.removeprefix("base_model.model.").removesuffix(".base_layer"): m
        for name, m in built.named_modules()
        if isinstance(m, bnb.nn.Linear4bit)
    }
    assert {f"{name}.weight" for name in layers} == {t.name for t in model_tensors(spec) if quantized(t)}
    for layer in layers.values():
        state = layer.weight.quant_state
        assert (state.quant_type, state.blocksize, state.nested, state.state2.blocksize) == (
            "nf4",
            64,
            True,
            256,
        )
        assert layer.compute_dtype == torch.bfloat16
    rest = {p.dtype for n, p in built.named_parameters() if not p.requires_grad and "lora" not in n}
    assert rest == {torch.uint8, torch.bfloat16}  # NF4 codes, and BF16 embeddings and norms
    assert parameter_counts(built) == (parameter_count(spec), lora_parameters(spec, 4, "all-linear"))


def held_bytes(model) -> int:
    """Bytes of every storage the model holds: parameters, and each NF4 layer's quantization state."""
    tensors = list(model.parameters())
    for layer in model.modules():
        if isinstance(layer, bnb.nn.Linear4bit):
            state = layer.weight.quant_state
            tensors += [state.absmax, state.code, state.offset, state.state2.absmax, state.state2.code]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values())


@pytest.mark.parametrize("method", ("lora", "qlora"))
@pytest.mark.parametrize("model", ("GPT-2 small", "Qwen3-0.6B"))
def test_the_built_model_holds_the_weights_the_estimate_counts(model, method):
    # What memory_allocated() reads after building on a GPU, less the allocator's rounding to 512 bytes:
    # the base in BF16 (QLoRA: NF4 with its statistics and BF16 for the rest) and FP32 adapters.
    config = narrow(model)
    training = TrainingMethod(method, 4, "all-linear")
    built = build_model(setup(model, training), CPU, config)
    step = StepSetup(model=parse_config(config), batch=1, seq_len=8, precision="bf16")
    assert held_bytes(built) == run_model_state(step, training).per_gpu.weights


def test_prepare_for_kbit_training_upcasts_what_is_not_nf4():
    # Why the CSV records it: the phase model counts the BF16 rest, which peft's preparation makes FP32.
    config = narrow("Qwen3-0.6B")
    qlora = TrainingMethod("qlora", 4, "attention")
    built = build_model(setup("Qwen3-0.6B", qlora, prepare_kbit=True), CPU, config)
    rest = {p.dtype for n, p in built.named_parameters() if not p.requires_grad and "lora" not in n}
    assert rest == {torch.uint8, torch.float32}


def test_freezing_the_first_block_of_two_trains_the_second_and_the_final_norm():
    # Narrow Llama, hidden 64, 4 heads of 16 (q and o 64 wide), 2 KV heads (k and v 32 wide), MLP 128.
    # Block 1: q 64·64 + k 64·32 + v 64·32 + o 64·64 = 12,288; MLP 3·64·128 = 24,576; two norms 128.
    # The final norm adds 64; the output layer is the tied embedding, frozen with it.
    built = build_model(setup(training=TrainingMethod(freeze_blocks=1)), CPU, narrow("Llama-3.2-1B"))
    assert parameter_counts(built)[1] == 12_288 + 24_576 + 128 + 64


def test_adamw8bit_keeps_one_byte_a_state_value_and_an_fp32_absmax_per_256():
    weight = torch.nn.Parameter(torch.randn(64, 128))
    optimizer = make_optimizer([weight], "adamw8bit", "loop")
    weight.grad = torch.randn_like(weight)
    optimizer.step()
    state = optimizer.state[weight]
    assert {k: (v.dtype, v.numel()) for k, v in state.items() if k in ("state1", "state2", "absmax1")} == {
        "state1": (torch.uint8, 8192),
        "state2": (torch.uint8, 8192),
        "absmax1": (torch.float32, 8192 // 256),
    }


def test_a_dry_run_writes_each_row_as_measured_and_reports_a_failure_in_one_line(tmp_path):
    readers = counting_readers()
    setups = (
        setup("Qwen2.5-0.5B", TrainingMethod("lora", 4, "attention")),
        setup("GPT-2 small", TrainingMethod(freeze_blocks=5)),  # the narrow GPT-2 has two blocks
        setup("Qwen3-0.6B", TrainingMethod("qlora", 4, "all-linear")),
    )
    output = tmp_path / "finetune.csv"
    failures = measure_setups(
        setups, output, device=CPU, readers=readers, configs={m: narrow(m) for m in PLAN_MODELS}
    )
    assert len(failures) == 1 and "GPT-2 small has 2 blocks; 5 cannot be frozen." in failures[0]
    with output.open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert tuple(reader.fieldnames or ()) == FINETUNE_COLUMNS
    assert [(r["model"], r["method"], r["lora_rank"], r["lora_targets"]) for r in rows] == [
        ("Qwen2.5-0.5B", "lora", "4", "attention"),
        ("Qwen3-0.6B", "qlora", "4", "all-linear"),
    ]
    spec = parse_config(narrow("Qwen3-0.6B"))
    assert int(rows[1]["trainable_params"]) == lora_parameters(spec, 4, "all-linear")
    assert (rows[1]["optim"], rows[1]["prepare_kbit"], rows[1]["freeze_blocks"]) == ("adamw", "no", "0")
