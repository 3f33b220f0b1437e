"""QLoRA's stored base weights against bitsandbytes itself: quantize_4bit on the CPU, tensor by tensor.

Linear4bit quantizes its weight with `bitsandbytes.functional.quantize_4bit` (NF4, blocksize 64,
compress_statistics for double quantization); we quantize tensors of each layer's real shape the
same way and add up every tensor its QuantState holds.
"""

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is a test-only dependency (pip install -r requirements-torch.txt)."
)
bnb_functional = pytest.importorskip(
    "bitsandbytes.functional", reason="bitsandbytes is a test-only dependency (requirements-torch.txt)."
)

bnb = pytest.importorskip("bitsandbytes")
transformers = pytest.importorskip(
    "transformers", reason="transformers is a test-only dependency (pip install -r requirements-torch.txt)."
)

from transformers.integrations.bitsandbytes import replace_with_bnb_linear  # noqa: E402
from transformers.quantizers.base import get_keys_to_not_convert  # noqa: E402

from core.datafiles import read_json  # noqa: E402
from core.memory.qlora import BF16_BYTES, nf4_bytes, qlora_base_weight_bytes, quantized  # noqa: E402
from core.model_config import parse_config  # noqa: E402
from core.model_tensors import model_tensors  # noqa: E402
from core.models import parameter_count  # noqa: E402
from tests.core.test_model_tensors_torch import SMALL, hf_model, small_config  # noqa: E402

pytestmark = pytest.mark.torch


def bnb_bytes(shape: tuple[int, ...]) -> int:
    """Every byte quantize_4bit keeps for a BF16 weight of `shape`, as Linear4bit calls it."""
    weight = torch.randn(shape, dtype=torch.bfloat16)
    codes, state = bnb_functional.quantize_4bit(
        weight, blocksize=64, compress_statistics=True, quant_type="nf4"
    )
    held = [codes, state.absmax, state.code, state.offset, state.state2.absmax, state.state2.code]
    return sum(t.numel() * t.element_size() for t in held)


@pytest.mark.parametrize("shape", [(7, 9), (96, 48), (64, 64), (2048, 512), (8192, 2048)])
def test_one_weight_matches_quantize_4bit(shape):
    assert nf4_bytes(shape[0] * shape[1]) == bnb_bytes(shape)


def test_llama_3_2_1b_block_and_model():
    spec = parse_config(read_json("configs/llama-3.2-1b.json"))
    tensors = list(model_tensors(spec))
    # Every shape of a block is quantized once (shapes repeat across its layers and the 16 blocks).
    shapes = {t.shape for t in tensors if quantized(t)}
    assert shapes == {(2048, 2048), (512, 2048), (8192, 2048), (2048, 8192)}
    by_shape = {shape: bnb_bytes(shape) for shape in shapes}
    expected = sum(by_shape[t.shape] if quantized(t) else BF16_BYTES * t.numel for t in tensors)
    assert qlora_base_weight_bytes(spec) == expected
    # Tied embeddings stay in BF16 (262 M values, 0.53 GB); the 973 M values of the blocks' linear
    # layers take a little over half a byte each: 4 bits, plus 1 byte of absmax per 64 values.
    linear = sum(t.numel for t in tensors if quantized(t))
    assert linear == 16 * (2 * 2048 * 2048 + 2 * 512 * 2048 + 3 * 8192 * 2048)
    blocks_bytes = qlora_base_weight_bytes(spec) - BF16_BYTES * (parameter_count(spec) - linear)
    assert blocks_bytes == pytest.approx(linear * (0.5 + 1 / 64), rel=0.001)


@pytest.mark.parametrize("model_type", list(SMALL))
def test_each_family_quantizes_the_layers_transformers_replaces(model_type):
    # transformers' own replacement: every nn.Linear or Conv1D becomes a Linear4bit except the output
    # layer, tied weights and the last parameter (get_keys_to_not_convert); experts and routers stay.
    config = small_config(model_type)
    model = hf_model(config)
    keep = get_keys_to_not_convert(model)
    quantization = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
    replace_with_bnb_linear(model, modules_to_not_convert=keep, quantization_config=quantization)
    replaced = {f"{name}.weight" for name, m in model.named_modules() if isinstance(m, bnb.nn.Linear4bit)}
    assert replaced == {t.name for t in model_tensors(parse_config(config)) if quantized(t)}
