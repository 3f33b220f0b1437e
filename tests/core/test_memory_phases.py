"""The phase model against the H200 reference, and figures worked from the Hugging Face code by hand."""

from __future__ import annotations

import dataclasses

import pytest

from core.memory.phases import PHASES, step_phases
from core.memory.reference import measured_steps, reference_model, setup_of
from core.memory.setup import StepSetup

ROWS = measured_steps()


def _id(row) -> str:
    return f"{row.model}-{row.batch}x{row.seq}-{row.mode}-{row.attn}-{row.recompute}-{row.optimizer_impl}"


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_every_reference_row_within_tolerance(row) -> None:
    phases = step_phases(setup_of(row))
    assert phases.parameters == row.n_params
    estimated = phases.reported_bytes
    assert estimated["optimizer_step"] == pytest.approx(row.peak_step, rel=0.10)
    for phase in PHASES:
        assert estimated[phase] == pytest.approx(row.phases[phase], rel=0.15), phase


def test_reference_covers_the_models_and_choices() -> None:
    assert len(ROWS) == 19
    assert {r.model for r in ROWS} == {"GPT-2 small", "Llama-3.2-1B", "Qwen2.5-0.5B"}
    assert {r.mode for r in ROWS} == {"fp32", "bf16", "amp"}


def test_gpt2_eager_fp32_block_worked_by_hand() -> None:
    # 4 × 1024 tokens, h = 768, 12 heads. Bytes per token: two LayerNorm inputs 2·4h and their statistics
    # 16, c_attn input 4h, the Q, K, V copies matmul makes 12h, the context copy 4h, c_fc input 4h,
    # gelu_new's four tensors 64h, c_proj input 16h, two 1-byte dropout masks 2h: 114h + 16.
    # Each score keeps 9 bytes: FP32 softmax, 1-byte dropout mask, FP32 dropout output.
    count = step_phases(setup_of(ROWS[0])).count
    linear = 4096 * (114 * 768 + 16)
    scores = 4 * 12 * 1024 * 1024 * 9
    # The reference timeline's forward grows 811,663,360 bytes a block: exactly this count.
    assert count.block_bytes == linear + scores == 811_663_360


def test_llama_bf16_sdpa_block_matches_the_timeline_step() -> None:
    # Per token: two RMSNorms (FP32 copy 4h, 1/rms 4, BF16 normalised 2h) and their outputs (2h),
    # Q 2h, K and V 2·kv each, flash output 2h and log-sum-exp 4·heads, SwiGLU 4 tensors of 2·I.
    row = next(r for r in ROWS if r.model == "Llama-3.2-1B" and r.mode == "bf16" and r.attn == "sdpa")
    count = step_phases(setup_of(row)).count
    per_token = 2 * (8 * 2048 + 4) + 2 * 2048 + 2 * 512 * 2 + 2 * 2048 + 4 * 32 + 8 * 8192
    assert count.block_bytes == 4096 * per_token == 445_153_280  # the timeline: 445,154,304 a block


def test_foreach_adamw_adds_a_copy_of_the_state_and_fused_nothing() -> None:
    mistral = reference_model("Mistral-7B")
    foreach = step_phases(StepSetup(model=mistral, batch=1, seq_len=1024, precision="bf16"))
    fused = step_phases(dataclasses.replace(foreach.setup, optimizer_impl="fused"))
    assert foreach.optimizer_step.terms["optimizer_transient"] == 2 * 7_241_732_096  # 14.5 GB
    assert fused.optimizer_step.terms["optimizer_transient"] == 0
    assert foreach.peak_phase == "optimizer_step"


def test_sgd_keeps_no_state_and_no_temporaries() -> None:
    setup = StepSetup(model=reference_model("GPT-2 small"), batch=1, seq_len=128, optimizer="sgd")
    step = step_phases(setup).optimizer_step
    assert step.terms["optimizer_state"] == 0 and step.terms["optimizer_transient"] == 0


def test_full_recompute_keeps_block_inputs_only() -> None:
    row = next(r for r in ROWS if r.model == "Llama-3.2-1B" and r.recompute == "full")
    phases = step_phases(setup_of(row))
    assert phases.count.block_input_bytes == 4096 * 2048 * 2


@pytest.mark.parametrize(
    ("field", "value"),
    [("batch", 0), ("seq_len", -1), ("precision", "fp8"), ("attention", "flash"), ("optimizer_impl", "x")],
)
def test_bad_settings_are_refused(field: str, value: object) -> None:
    good = StepSetup(model=reference_model("GPT-2 small"), batch=1, seq_len=128)
    with pytest.raises(ValueError):
        dataclasses.replace(good, **{field: value})  # type: ignore[arg-type]  # wrong types on purpose


def test_a_sequence_longer_than_learned_positions_is_refused() -> None:
    with pytest.raises(ValueError, match="learned positions"):
        StepSetup(model=reference_model("GPT-2 small"), batch=1, seq_len=2048)
