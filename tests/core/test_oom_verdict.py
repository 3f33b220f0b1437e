"""A pasted out-of-memory error against the named run: Run A's own message, the block it tried, a
traceback's phase, the line met, and the changes ranked."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.gpus import gpu
from core.memory.reference import cuda_context_bytes, run_a_measurements
from core.memory.verdict import GIB, capped
from core.oom import parse_oom_message
from core.oom_verdict import (
    blocks,
    capacity_of,
    card_for,
    changes,
    matching_blocks,
    size_words,
    traceback_phase,
    verdict,
)
from core.run_a.scenario import load_content

MIB = 2**20
CONTEXT = cuda_context_bytes()


def _row(batch: int, seq: int, attn: str = "eager", optim: str = "adam", cap: float = 24.0):
    return next(
        r
        for r in run_a_measurements()
        if (r.batch, r.seq, r.attn, r.optim, r.cap_gib, r.layers) == (batch, seq, attn, optim, cap, 16)
    )


def _run_a(**changed):
    return replace(load_content().scenario.setup, **changed)


def test_run_a_died_in_backward_of_step_1_and_the_estimate_agrees():
    row = _row(1, 1536)
    message = parse_oom_message(row.message)
    card = card_for(message)
    assert card is not None and card.name == "H200"  # 139.80 GiB is the H200 as torch reports it
    capacity = capacity_of(message, card, 24.0, context_bytes=CONTEXT)
    found = verdict(row.message, message, _run_a(), capacity, context_bytes=CONTEXT)
    assert found.where == "loss.backward() of step 1" and found.agrees and found.evidence == "block"
    # 296.00 MiB is the FP32 logits' size: 1 × 1,536 × 50,257 × 4 = 308,779,008 B = 294.47 MiB, to 2 MiB
    assert [b.tensor_bytes for b in found.candidates] == [1 * 1536 * 50257 * 4]
    held = next(r for r in found.rows if r.term.startswith("Allocated"))
    assert held.message_bytes == pytest.approx(23.64 * GIB + 296 * MIB, abs=0.01 * GIB)
    assert held.estimate_bytes == pytest.approx(held.message_bytes, rel=0.01)  # the estimate is within 1%
    # 23.64 GiB allocated + 77.23 MiB unallocated = 23.72 GiB reserved; + 296 MiB = 24.01 GiB > 24.00 GiB
    assert found.over_the_line and found.reserved_after_bytes == pytest.approx(24.01 * GIB, abs=0.01 * GIB)


def test_half_the_tokens_moves_the_failure_into_the_optimizer_step_as_measured():
    setup, capacity = _run_a(), capped(24)
    halved = changes(setup, capacity, context_bytes=CONTEXT)
    half = next(c for c in halved if c.name.startswith("Half the tokens"))
    assert half.setup.seq_len == 768 and half.failure is not None
    assert (half.failure.step, half.failure.phase) == (1, "optimizer_step")
    assert _row(1, 768).outcome == "step 1 optimizer.step"  # what the H200 did


def test_changes_are_ranked_those_that_fit_first():
    setup, capacity = _run_a(), capped(24)
    ranked = changes(setup, capacity, context_bytes=CONTEXT)
    assert {c.name for c in ranked} >= {
        "Recompute each block in backward",
        "SDPA attention",
        "BF16 autocast",
        "Fused AdamW",
    }
    fits = [c.fits for c in ranked]
    assert fits == sorted(fits, reverse=True)
    card = next(c for c in ranked if c.card)
    assert card.fits and card.card == "A100 40GB SXM"  # the smallest preset that runs it: the lesson's 40 GiB


def test_a_batch_of_two_halves_the_micro_batch_with_accumulation():
    ranked = changes(_run_a(batch=2, seq_len=512), capped(24), context_bytes=CONTEXT)
    assert (
        ranked[[c.name for c in ranked].index("Micro-batch 1, accumulating gradients over 2")].setup.batch
        == 1
    )


def test_optimizer_step_failures_try_a_state_tensor():
    row = _row(1, 1024)  # 144.00 MiB in optimizer.step(): one MLP matrix's moment, 3,072 × 12,288 × 4 bytes
    message = parse_oom_message(row.message)
    found = verdict(row.message, message, _run_a(seq_len=1024), capped(24), context_bytes=CONTEXT)
    assert found.where == "optimizer.step() of step 1" and found.agrees
    assert all(b.phases == ("optimizer_step",) for b in found.candidates)
    assert any("3,072 × 12,288" in b.name for b in found.candidates)


def test_every_run_a_message_passes_its_cap_in_reserved_memory():
    for row in (r for r in run_a_measurements() if r.message):
        found = verdict(
            row.message, parse_oom_message(row.message), _run_a(), capped(row.cap_gib), context_bytes=CONTEXT
        )
        assert found.over_the_line, row  # reserved + the new segment > allowed, every time


def test_every_failed_run_a_row_is_placed_where_the_h200_died():
    placed, by_block = 0, 0
    failed = [r for r in run_a_measurements() if r.outcome != "ok"]
    for row in failed:
        base = load_content().scenario.setup
        model = replace(base.model, layers=row.layers, positions=max(base.model.positions, row.seq))
        setup = replace(
            base, model=model, batch=row.batch, seq_len=row.seq, attention=row.attn, optimizer=row.optim
        )
        message = parse_oom_message(row.message)
        found = verdict(row.message, message, setup, capped(row.cap_gib), context_bytes=CONTEXT)
        phase = {"forward": "forward", "backward": "backward", "optimizer.step": "optimizer_step"}[
            row.outcome.split(" ", 2)[2]
        ]
        placed += (found.died_step, found.died_phase) == (int(row.outcome.split()[1]), phase)
        by_block += found.evidence == "block"
    assert placed == len(failed) == 59
    # and in every one the block it tried is a tensor that phase makes (1 × 2,304 eager's 82.00 MiB is the
    # Q, K, V projection: 1 × 2,304 × 9,216 × 4 bytes = 81.00 MiB, rounded to 2 MiB)
    assert by_block == 59


def test_a_traceback_names_the_phase():
    text = 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    loss.backward()\n'
    assert traceback_phase(text) == "backward"
    assert (
        traceback_phase('Traceback:\n  File "/x/torch/optim/adam.py", line 3, in step\n') == "optimizer_step"
    )
    assert traceback_phase("CUDA out of memory. Tried to allocate 2.00 MiB.") is None


def test_a_whole_card_loses_the_context_and_other_processes():
    message = parse_oom_message(
        "CUDA out of memory. Tried to allocate 876.00 MiB. GPU 0 has a total capacity of 23.68 GiB of which "
        "251.06 MiB is free. Process 2612630 has 458.00 MiB memory in use. Including non-PyTorch memory, "
        "this process has 22.98 GiB memory in use. Of the allocated memory 22.65 GiB is allocated by "
        "PyTorch, and 77.68 MiB is reserved by PyTorch but unallocated."
    )
    capacity = capacity_of(message, gpu("L4"), 0, context_bytes=CONTEXT)
    found = verdict("", message, _run_a(), capacity, context_bytes=CONTEXT)
    assert found.over_the_line  # 876 MiB asked of a card with 251.06 MiB free
    assert capacity.total_bytes == message.capacity_bytes
    outside = message.outside_pytorch_bytes
    assert outside is not None and capacity.context_bytes == outside + 458 * MIB


def test_blocks_and_sizes():
    names = [b.name for b in blocks(_run_a())]
    assert "the attention scores" in names and "the logits" in names
    assert "the attention scores" not in [b.name for b in blocks(_run_a(attention="sdpa"))]
    assert matching_blocks(_run_a(), 7 * MIB) == ()
    assert size_words(296 * MIB) == "296.00 MiB" and size_words(3 * GIB) == "3.00 GiB"


def test_an_8bit_optimizers_state_tensor_is_a_byte_a_value():
    # Run A's largest tensor, the 50,257 × 3,072 embedding: Adam's FP32 moment is 4 bytes a value,
    # bitsandbytes' AdamW8bit's a byte (its absmax per 256 values is a tensor of its own).
    embedding = 50_257 * 3_072
    adam = {b.name: b for b in blocks(_run_a())}
    eight = {b.name: b for b in blocks(_run_a(optimizer="adamw8bit"))}
    name = next(n for n in adam if n.startswith("the optimizer's state for") and "wte" in n)
    assert adam[name].tensor_bytes == 4 * embedding and eight[name].tensor_bytes == embedding
