"""hf_count for the families with layouts of their own, worked by hand and across every setting.

The exact bytes are checked against saved-tensor hooks in test_hf_stack_families_torch.py; here the
arithmetic is shown once and the structure (which kernel, which mask) is checked without torch.
"""

from dataclasses import replace
from itertools import product

import pytest

from core.memory.hf_stack import OWN_LAYOUTS, hf_count, own_kernel
from core.memory.phases import step_phases
from core.memory.settings import PRECISIONS
from core.memory.setup import StepSetup
from core.models import preset

OWN_PRESETS = ("Falcon-RW-1B", "BLOOM-560M", "OPT-125M", "StarCoder2-3B", "StarCoderBase-1B")


def test_falcon_rw_block_by_hand():
    # FP32, eager, 2 × 16 tokens; hidden 2048, 32 heads, MLP 8192, two LayerNorms in sequence.
    # Per token, in bytes: the norms keep their inputs (2 · 4 · 2048) and two FP32 statistics each (16);
    # the fused projection's input (4 · 2048), Q, K and V copied to every head (3 · 4 · 2048) and the
    # dense layer's input (4 · 2048); the FP32 softmax (4 · 32 heads · 16); the MLP's input (4 · 2048),
    # GELU's input and the next layer's input (2 · 4 · 8192).
    per_token = (
        (2 * 4 * 2048 + 16) + (4 * 2048 + 3 * 4 * 2048 + 4 * 2048) + 4 * 32 * 16 + (4 * 2048 + 8 * 8192)
    )
    assert per_token == 133_136
    setup = StepSetup(model=preset("Falcon-RW-1B"), batch=2, seq_len=16, precision="fp32", attention="eager")
    assert hf_count(setup).block_bytes == 32 * per_token


def test_bloom_builds_its_scores_whatever_attention_is_asked_for():
    sdpa, eager = (
        hf_count(StepSetup(model=preset("BLOOM-560M"), batch=1, seq_len=512, attention=a))
        for a in ("sdpa", "eager")
    )
    assert sdpa == eager and sdpa.block["scores"] > 0
    assert sdpa.forward_shared_bytes == 512 * 512 * 2  # one BF16 causal mask; its ALiBi is added apart


def test_falcon_alibi_under_sdpa_keeps_one_mask_for_every_layer():
    # The ALiBi bias, folded into the causal mask per head, is SDPA's attn_mask in every block: one
    # batch × heads × s × s tensor (FP32 here), kept until backward, outside the blocks.
    setup = StepSetup(model=preset("Falcon-RW-1B"), batch=2, seq_len=256, precision="fp32", attention="sdpa")
    count = hf_count(setup)
    assert own_kernel(setup) == "efficient"
    assert count.outside["scores"] == 2 * 32 * 256 * 256 * 4
    assert count.block["scores"] == 0 and count.forward_shared_bytes == 0


def test_falcon_7b_multi_query_under_sdpa_builds_its_scores():
    # One KV head broadcast to 32 query heads: only SDPA's math kernel accepts it, and it keeps the scores.
    falcon_7b = replace(
        preset("Falcon-RW-1B"), kv_heads=1, parallel_attn=True, norms_per_block=1, alibi=False
    )
    setup = StepSetup(model=falcon_7b, batch=1, seq_len=256, precision="bf16", attention="sdpa")
    assert own_kernel(setup) == "math"
    assert hf_count(setup).block["scores"] == 2 * 32 * 256 * 256


def test_opt_drops_out_the_residual_stream_but_not_the_attention_probabilities():
    opt = preset("OPT-125M")
    assert opt.dropout and not opt.attention_dropped
    count = hf_count(StepSetup(model=opt, batch=1, seq_len=64, precision="fp32", attention="eager"))
    assert count.block["scores"] == 64 * 12 * 64 * 4  # the FP32 softmax alone, no dropout mask


@pytest.mark.parametrize(
    ("name", "precision", "attention"), list(product(OWN_PRESETS, PRECISIONS, ("sdpa", "eager")))
)
def test_every_setting_of_every_own_layout_has_phases(name, precision, attention):
    setup = StepSetup(model=preset(name), batch=2, seq_len=512, precision=precision, attention=attention)
    assert setup.model.model_type in OWN_LAYOUTS
    count = hf_count(setup)
    assert all(v >= 0 for v in count.block.values()) and count.block_bytes > 0
    assert step_phases(setup).peak_bytes > count.block_bytes * setup.model.layers
