"""hf_count against what autograd really keeps: transformers 5.17 models built from real configs at their
real widths (two blocks, a 512-entry vocabulary) as tools/measure_gpu.py builds them (`use_cache = False`),
measured block by block with saved-tensor hooks on the CPU, at batch 2 and at batch 1 (where some reshapes
are views that are copies at larger batches), both at sequences that are not powers of two. The weights
are zeros: what autograd keeps depends on shapes, not values, and transformers' random init of these
widths would take most of the test's time.

Only runs where the CPU keeps what a CUDA GPU keeps are compared. Eager attention is plain PyTorch on
both. With SDPA in BF16 and no mask, CUDA's flash kernel and the CPU's flash kernel both keep Q, K, V,
the output and an FP32 log-sum-exp per head and token. FP32 SDPA is left out: with grouped KV heads CUDA
falls back to the math kernel (the score matrix) while the CPU still runs its flash kernel; so is GPT-2
with SDPA (its dropout makes the CPU leave its flash kernel for the math one, while CUDA's flash kernel
drops out inside). Autocast ("amp") runs on the CPU's autocast: for these models it lowers what CUDA's
does (linear layers, matmuls, SDPA), and the ops CUDA's keeps in FP32 already run in FP32 (the norms'
arithmetic, the softmax, the loss); GPT-2 is left out, as CUDA's autocast runs its gelu_new `pow` in FP32
and the CPU's does not.

GPT-2 keeps two things differently on the CPU, added to the count as `_cpu_extra_bytes` says: the CPU's
dropout is `input * noise` and keeps its noise in the input's dtype where CUDA's fused dropout keeps a
1-byte mask, and the CPU's LayerNorm in BF16 keeps BF16 statistics where CUDA's keeps FP32 ones.

What the count leaves out on purpose, and the test adds back: RoPE's cos and sin tables (one pair of
seq × head_dim values for the whole forward, first kept by block 0), and the loss's FP32 scalar
normaliser (4 bytes).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.datafiles import DATA_DIR
from core.memory.hf_stack import hf_count
from core.memory.setup import StepSetup
from core.model_config import parse_config

torch = pytest.importorskip("torch", reason="PyTorch is a test-only dependency (requirements-torch.txt).")
transformers = pytest.importorskip("transformers", reason="transformers is a test-only dependency.")

from transformers.initialization import no_init_weights  # noqa: E402 (after the transformers skip)

from tests.harness.saved_tensors import OUTSIDE, one_thread, saved_bytes  # noqa: E402 (after the torch skip)
from tools.finetune_model import hf_config  # noqa: E402 (imports torch)

pytestmark = pytest.mark.torch

VOCAB, LAYERS = 512, 2
# (batch, sequence): the same 24 tokens as two sequences and as one
SHAPES = [(2, 12), (1, 24)]
SHAPE_IDS = [f"b{batch}s{seq}" for batch, seq in SHAPES]
LOSS_SCALAR_BYTES = 4  # the FP32 count of labels the loss divides by
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "amp": torch.float32}  # amp: FP32 model, autocast

RUNS = [
    ("qwen3-0.6b", "bf16", "sdpa"),
    ("qwen3-0.6b", "bf16", "eager"),
    ("qwen3-0.6b", "fp32", "eager"),
    ("qwen3-0.6b", "amp", "sdpa"),
    ("qwen3-0.6b", "amp", "eager"),
    ("gemma-2-2b", "bf16", "sdpa"),
    ("gemma-2-2b", "bf16", "eager"),
    ("gemma-2-2b", "fp32", "eager"),
    ("gemma-2-2b", "amp", "sdpa"),
    ("gemma-2-2b", "amp", "eager"),
    ("gemma-3-1b-pt", "bf16", "sdpa"),
    ("gemma-3-1b-pt", "bf16", "eager"),
    ("gemma-3-1b-pt", "fp32", "eager"),
    ("gemma-3-1b-pt", "amp", "sdpa"),
    ("gemma-2b", "bf16", "sdpa"),
    ("gemma-2b", "fp32", "eager"),
    ("llama-3.2-1b", "bf16", "sdpa"),
    ("llama-3.2-1b", "fp32", "eager"),
    ("llama-3.2-1b", "amp", "sdpa"),
    ("qwen2.5-0.5b", "amp", "eager"),  # biased q, k and v: no node keeps a bias's BF16 copy
    ("gpt2", "fp32", "eager"),
    ("gpt2", "bf16", "eager"),
]


def _config(file_name: str, **change: object) -> dict[str, object]:
    raw = json.loads((DATA_DIR / "models" / f"{file_name}.json").read_text())
    raw.pop("_preset")
    return {**raw, "num_hidden_layers": LAYERS, "n_layer": LAYERS, "vocab_size": VOCAB, **change}


def _measure(raw: dict[str, object], precision: str, attention: str, batch: int, seq: int):
    torch.manual_seed(0)
    with no_init_weights():
        model = transformers.AutoModelForCausalLM.from_config(
            hf_config(raw), dtype=DTYPES[precision], attn_implementation=attention
        )
    for parameter in model.parameters():
        parameter.detach().zero_()
    model.train()
    ids = torch.randint(0, VOCAB, (batch, seq))
    body = model.model if hasattr(model, "model") else model.transformer
    blocks = body.layers if hasattr(body, "layers") else body.h

    def loss():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "amp"):
            return model(input_ids=ids, labels=ids).loss

    return saved_bytes(model, blocks, loss)


def _rope_table_bytes(raw: dict[str, object], precision: str, seq: int) -> int:
    """cos and sin, one position row per token of the sequence (position ids have batch 1)."""
    if raw["model_type"] == "gpt2":
        return 0
    head_dim = int(raw.get("head_dim") or raw["hidden_size"] // raw["num_attention_heads"])  # type: ignore[operator, arg-type]
    return 2 * seq * head_dim * DTYPES[precision].itemsize


def _cpu_extra_bytes(raw: dict[str, object], precision: str, batch: int, seq: int, *, block: bool) -> int:
    """What the CPU keeps beyond CUDA, per block (`block`) or outside the blocks: GPT-2's dropout noise in
    its input's dtype rather than 1-byte masks, and in BF16 two-byte LayerNorm statistics (mean, 1/σ)."""
    if raw["model_type"] != "gpt2":
        return 0
    size = DTYPES[precision].itemsize
    hidden, heads = int(raw["n_embd"]), int(raw["n_head"])  # type: ignore[call-overload]
    # per token: a block drops out the attention output, the MLP output and every score; the
    # embeddings drop out once. Each block has two LayerNorms, the model one more.
    dropped = 2 * hidden + heads * seq if block else hidden
    stats_bytes = 2 * (4 - size) * (2 if block else 1) if precision == "bf16" else 0
    return batch * seq * ((size - 1) * dropped - stats_bytes)


_one_thread = pytest.fixture(scope="module", autouse=True)(one_thread)


@pytest.mark.parametrize(("batch", "seq"), SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize(("file_name", "precision", "attention"), RUNS, ids=["-".join(run) for run in RUNS])
def test_the_count_is_what_autograd_keeps(
    file_name: str, precision: str, attention: str, batch: int, seq: int
) -> None:
    raw = _config(file_name)
    spec = parse_config(raw, name=file_name)
    count = hf_count(
        StepSetup(model=spec, batch=batch, seq_len=seq, precision=precision, attention=attention)
    )
    measured = _measure(raw, precision, attention, batch, seq)
    block = count.block_bytes + _cpu_extra_bytes(raw, precision, batch, seq, block=True)
    outside = count.outside_bytes + _cpu_extra_bytes(raw, precision, batch, seq, block=False)
    assert measured.block_bytes(1) == block
    assert measured.block_bytes(0) == block + _rope_table_bytes(raw, precision, seq)
    assert measured.block_bytes(OUTSIDE) == outside + LOSS_SCALAR_BYTES


@pytest.mark.parametrize(("batch", "seq"), SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("file_name", ["gemma-2-2b", "gemma-3-1b-pt"])
@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_sliding_window_layers_keep_their_mask_and_repeated_heads(
    file_name: str, attention: str, batch: int, seq: int
) -> None:
    # A window shorter than the sequence makes transformers build the mask. Under SDPA, Gemma 2's first
    # layer slides and its second does not, and it has 4 KV heads (repeated: copied); both of Gemma 3's
    # layers slide, and its one KV head repeats as a view. The count spreads the sliding layers' share
    # over every block. Eager attention adds the mask to the scores and keeps nothing more.
    raw = _config(file_name, sliding_window=seq // 2)
    spec = parse_config(raw, name=file_name)
    setup = StepSetup(model=spec, batch=batch, seq_len=seq, precision="bf16", attention=attention)
    count, causal = hf_count(setup), hf_count(replace(setup, model=replace(spec, sliding_layers=0)))
    assert (count.block_bytes > causal.block_bytes) == (attention == "sdpa")
    measured = _measure(raw, "bf16", attention, batch, seq)
    blocks = sum(measured.block_bytes(block) for block in range(LAYERS))
    assert blocks == LAYERS * count.block_bytes + _rope_table_bytes(raw, "bf16", seq)
    assert measured.block_bytes(OUTSIDE) == count.outside_bytes + LOSS_SCALAR_BYTES


@pytest.mark.parametrize(("batch", "seq"), SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("file_name", ["gemma-2-2b", "gemma-3-1b-pt", "llama-3.2-1b"])
@pytest.mark.parametrize(("precision", "attention"), [("bf16", "eager"), ("fp32", "eager"), ("bf16", "sdpa")])
def test_the_masks_held_through_the_forward_are_the_ones_transformers_builds(
    file_name: str, precision: str, attention: str, batch: int, seq: int
) -> None:
    # Gemma 2 and 3 build a causal and a sliding-window mask for every forward (Llama only the causal
    # one): eager ones in the model's dtype; under SDPA none while causal is enough, and a boolean
    # sliding-window mask once the sequence reaches the window.
    from transformers.masking_utils import create_causal_mask, create_sliding_window_causal_mask

    raw = _config(file_name, sliding_window=seq // 2)
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = attention
    arguments = {
        "config": config,
        "inputs_embeds": torch.zeros(batch, seq, 1, dtype=DTYPES[precision]),
        "attention_mask": None,
        "past_key_values": None,
        "position_ids": torch.arange(seq)[None],
    }
    builders = [create_causal_mask]
    if raw["model_type"] != "llama":
        builders.append(create_sliding_window_causal_mask)
    masks = [build(**arguments) for build in builders]
    built = sum(mask.untyped_storage().nbytes() for mask in masks if isinstance(mask, torch.Tensor))
    setup = StepSetup(
        model=parse_config(raw, name=file_name),
        batch=batch,
        seq_len=seq,
        precision=precision,
        attention=attention,
    )
    assert hf_count(setup).forward_shared_bytes == built
