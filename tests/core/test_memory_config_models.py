"""The detailed memory estimate for models read from a config.json: head widths, norms and experts."""

from dataclasses import replace

from core.memory.detailed import layer_activation_bytes
from core.memory.setup import TrainingSetup
from core.memory.view import budget_view
from core.models import parameter_count, preset


def block_bytes(model, **setup):
    """Bytes one block keeps for a micro-batch of 1 and 1,024 tokens in pure BF16."""
    chosen = TrainingSetup(
        model=model, precision="bf16", optimizer="adam", micro_batch=1, seq_len=1024, **setup
    )
    return layer_activation_bytes(chosen, micro_batch=1, seq_len=1024)


def test_moe_activations_follow_the_routed_experts_not_all_of_them():
    mixtral = preset("Mixtral-8x7B")
    # Each token runs 2 experts 14,336 wide: as much as one dense gated MLP 28,672 wide keeps.
    dense_twice_as_wide = replace(mixtral, experts=0, active_experts=0, intermediate=2 * 14336)
    assert block_bytes(mixtral) == block_bytes(dense_twice_as_wide)
    assert block_bytes(replace(mixtral, experts=64)) == block_bytes(mixtral)


def test_queries_wider_than_the_hidden_size_keep_wider_tensors():
    gemma = preset("Gemma-7B")  # 16 heads of 256 (16 KV heads): Q, K, V 4,096 wide on a 3,072 hidden size
    assert (gemma.hidden, gemma.q_width, gemma.kv_width) == (3072, 4096, 4096)
    narrow = replace(gemma, explicit_head_dim=192)  # 16 × 192 = 3,072: head width hidden / heads
    # Q, K, V and the attention output are each 1,024 values wider per token; 2 bytes a value, 1,024 tokens.
    wider = block_bytes(gemma, attention="memory_efficient") - block_bytes(
        narrow, attention="memory_efficient"
    )
    assert wider == 4 * 1024 * 2 * 1024


def test_each_norm_of_a_block_keeps_its_input():
    gemma2 = preset("Gemma-2-2B")  # four norms a block
    two_norms = replace(gemma2, norms_per_block=2)
    assert block_bytes(gemma2) - block_bytes(two_norms) == 1024 * 2 * 2304 * 2


def test_a_pasted_model_replaces_the_picked_one_in_the_detailed_estimate():
    qwen = preset("Qwen3-30B-A3B")
    view = budget_view({"estimate": "detailed", "model": "GPT-2 small"}, model=qwen)
    assert view.parameter_count == parameter_count(qwen) == 30_532_122_624
    assert view.assumptions[0].key == "model_moe"
    assert (
        view.assumptions[0].figures["active_parameters"],
        view.assumptions[0].figures["active_experts"],
    ) == (
        3_353_032_704,
        8,
    )
    lesson = budget_view({"estimate": "lesson"}, model=qwen)
    assert lesson.parameter_count == 805_306_368  # the lesson's estimate sizes the sliders' shape only
