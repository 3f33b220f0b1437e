"""QLoRA's frozen base weights as bitsandbytes stores them: NF4 with double quantization.

transformers' bitsandbytes integration (`load_in_4bit`, `bnb_4bit_quant_type="nf4"`,
`bnb_4bit_use_double_quant=True`) replaces every linear layer but the output layer with a
`Linear4bit`, whose weight `bitsandbytes.functional.quantize_4bit` (blocksize 64,
compress_statistics) turns into:

- the 4-bit codes, two to a byte: (n + 1) // 2 bytes for n values;
- one absmax per block of 64 values, itself quantized to one byte (`quantize_blockwise`, blocksize
  256) after subtracting their mean (`offset`, one FP32 value);
- one FP32 absmax per block of 256 of those bytes, and the 256-entry FP32 code of that second
  quantization;
- the 16-entry FP32 NF4 code.

The embeddings, the output layer, the norms, biases, routers and routed experts (parameters of
their own modules, not linear layers) stay in BF16, and so does a subclass of nn.Linear (Falcon's
FalconLinear), which transformers does not replace. The counts here are what quantize_4bit
allocates on the CPU, and the layers it picks are the ones transformers 5.17 replaces
(`replace_with_bnb_linear`); tests/core/test_qlora_torch.py checks both.
"""

from __future__ import annotations

import math

from core.model_spec import ModelSpec
from core.model_tensors import Tensor, model_tensors

BLOCK = 64  # values per absmax
SECOND_BLOCK = 256  # absmax bytes per FP32 scale of the double quantization
FP32_BYTES = 4
BF16_BYTES = 2
NF4_CODE_VALUES = 16
SECOND_CODE_VALUES = 256  # bitsandbytes' dynamic 8-bit map


def nf4_bytes(values: int) -> int:
    """Bytes bitsandbytes keeps for one NF4 weight of `values` values, double quantization included."""
    blocks = math.ceil(values / BLOCK)
    codes = (values + 1) // 2
    absmax = blocks + FP32_BYTES * math.ceil(blocks / SECOND_BLOCK)
    tables = FP32_BYTES * (SECOND_CODE_VALUES + NF4_CODE_VALUES + 1)  # two codes and the offset
    return codes + absmax + tables


# replace_with_bnb_linear swaps a module only if it is a Conv1D or exactly an nn.Linear (`type(module) is
# nn.Linear`): a subclass such as Falcon's FalconLinear keeps its BF16 weight.
REPLACED_LAYERS = ("linear", "conv1d")


def quantized(tensor: Tensor) -> bool:
    """Whether QLoRA stores `tensor` in NF4: an nn.Linear's or Conv1D's weight, not the output layer's."""
    return tensor.layer in REPLACED_LAYERS and tensor.part != "output_layer"


def stored_bytes(tensor: Tensor) -> int:
    """Bytes QLoRA keeps for `tensor`: NF4 for a linear layer's weight, BF16 for the rest."""
    return nf4_bytes(tensor.numel) if quantized(tensor) else BF16_BYTES * tensor.numel


def qlora_base_weight_bytes(spec: ModelSpec) -> int:
    """Bytes of the whole frozen base model as QLoRA stores it."""
    return sum(stored_bytes(t) for t in model_tensors(spec))
