"""The detailed estimate against PyTorch's measured bytes: exact model state, activations within 10%, gaps
explained."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import lessons
from core.estimate_check.causes import PLATFORM_CAUSES
from core.estimate_check.compare import (
    ACTIVATION_TERMS,
    ACTIVATION_TOLERANCE,
    COMPARED_TERMS,
    STATE_TERMS,
    all_checks,
    check_run,
    check_summary,
    estimate_check,
    worst_gaps,
)
from core.estimate_check.setups import ATTENTION_OF_KIND, PRECISION_OF_DTYPE, weight_tensor_count
from core.estimate_check.view import (
    cause_words,
    chart_description,
    check_view,
    config_label,
    gap_sentence,
    setup_sentence,
    summary_sentence,
    table_rows,
    worst_gap_rows,
)
from core.measured import ATTENTION, DTYPES, load_measured, measured_ids, measured_run
from core.memory.settings import ALL_DETAILED_PRECISIONS, AttentionKind, precision_label

GPT2_BF16 = "gpt2-h64-l2-s64-b2-bf16-adam-none-explicit"
LLAMA_BF16 = "llama-h64-l2-s64-b2-bf16-adam-none-explicit"


def is_documented_exception(config_id: str, term: str) -> bool:
    """Where the 10% target is knowingly missed: Llama-style rows whose CPU RMSNorm keeps FP32 copies.

    The estimate counts a fused GPU RMSNorm (input only). On the CPU, PyTorch runs RMSNorm op by op
    and keeps FP32 copies of input and output: 8 bytes per value per norm instead of 2 (bf16) or 4
    (fp32). That is more than 10% of a block whenever the norms are kept (no full recomputation)
    except for fp32 with the scores kept, and more than 10% of the output side in bf16.
    """
    run = measured_run(config_id)
    if run.spec.name != "llama":
        return False
    if term == "saved_activations_other":
        return run.dtype == "bf16"
    if run.recompute == "full":
        return False
    return run.dtype == "bf16" or not (run.recompute == "none" and run.attention == "explicit")


def test_names_are_mapped_in_one_place_for_every_measured_kind():
    assert set(ATTENTION_OF_KIND) == set(ATTENTION) and set(ATTENTION_OF_KIND.values()) <= set(
        AttentionKind.ids()
    )
    assert set(PRECISION_OF_DTYPE) == set(DTYPES) and set(PRECISION_OF_DTYPE.values()) <= set(
        ALL_DETAILED_PRECISIONS
    )


def test_every_run_is_checked_on_every_term():
    checks = all_checks()
    assert [c.run.config_id for c in checks] == list(measured_ids())
    assert all(tuple(row.term for row in c.rows) == COMPARED_TERMS for c in checks)


def test_parameters_gradients_and_optimizer_state_are_exact_for_every_run():
    for check in all_checks():
        for term in STATE_TERMS:
            row = check.row(term)
            assert row.estimate_bytes == row.measured_bytes > 0, (check.run.config_id, term)


def test_pure_bf16_state_by_hand():
    # Llama style: 158,016 weights (see test_measured). Pure BF16: 2-byte weights and gradients, and Adam's
    # two moments also in 2 bytes: 4 bytes per weight = 632,064 bytes. FP32 doubles each: 8 bytes per weight.
    bf16, fp32 = estimate_check(LLAMA_BF16), estimate_check("llama-h64-l2-s64-b2-fp32-adam-none-explicit")
    assert bf16.row("parameters").estimate_bytes == 158_016 * 2 == bf16.row("gradients").estimate_bytes
    assert bf16.row("optimizer_state").estimate_bytes == 158_016 * 2 * 2 == 632_064
    assert fp32.row("optimizer_state").estimate_bytes == 158_016 * 4 * 2
    sgd = estimate_check("llama-h64-l2-s64-b2-bf16-sgd_momentum-none-explicit")
    assert sgd.row("optimizer_state").estimate_bytes == 158_016 * 2  # one 2-byte momentum value per weight


def test_gpt2_blocks_are_korthikanti_and_the_rest_is_layernorm_statistics():
    check = estimate_check(GPT2_BF16)
    s, b, h, a, layers = 64, 2, 64, 4, 2
    row = check.row("saved_activations_layers")
    # Korthikanti et al. 2022: s·b·h·(34 + 5·a·s/h) bytes per block = 8,192 · (34 + 20) = 442,368; two blocks.
    assert row.estimate_bytes == layers * s * b * h * (34 + 5 * a * s // h) == 884_736
    # PyTorch also keeps each LayerNorm's mean and 1/σ: 2 norms · 2 values · 2 bytes per token, 128 tokens, 2
    # blocks.
    assert [(c.key, c.explained_bytes) for c in row.causes] == [("norm_statistics", 2 * 2 * 2 * 128 * layers)]
    assert row.gap_bytes == 2_048 and row.unexplained_bytes == 0


def test_llama_block_by_hand_and_the_cpu_rmsnorm_gap():
    row = estimate_check(LLAMA_BF16).row("saved_activations_layers")
    # Per token, 2-byte values: norm output, Q, K and V copied out to all 4 heads, context, MLP input (6·64),
    # four 176-wide SwiGLU tensors (704), two norm inputs (128): 1,216 values = 2,432 bytes; scores 4 heads ·
    # 64 keys · 2 bytes = 512. 128 tokens · 2,944 bytes · 2 blocks = 753,664.
    assert row.estimate_bytes == 2 * 128 * (1_216 * 2 + 4 * 64 * 2) == 753_664
    # The CPU's RMSNorm keeps FP32 input and output copies (8 bytes a value) where the estimate counts the
    # 2-byte input, plus a 4-byte 1/rms per token: 2 norms · (6·64 + 4) = 776 bytes per token, 2 blocks.
    assert [(c.key, c.explained_bytes) for c in row.causes] == [("cpu_rmsnorm", 2 * 128 * 776)]
    assert row.measured_bytes == row.estimate_bytes + 198_656
    assert row.error_percent == pytest.approx(-20.86, abs=0.01)


def test_every_block_byte_pytorch_kept_is_accounted_for():
    for check in all_checks():
        assert check.row("saved_activations_layers").unexplained_bytes == 0, check.run.config_id
        assert check.row("optimizer_step_counters").unexplained_bytes == 0, check.run.config_id
        outside = check.row("saved_activations_other")
        # Left over: a few loss scalars and the token buffer's extra column, well under 0.1%.
        assert 0 <= outside.unexplained_bytes <= 0.001 * outside.measured_bytes, check.run.config_id


def test_activations_within_tolerance_except_the_documented_cpu_rmsnorm_rows():
    missed = {
        (c.run.config_id, term)
        for c in all_checks()
        for term in ACTIVATION_TERMS
        if not c.row(term).within_tolerance()
    }
    documented = {
        (i, term) for i in measured_ids() for term in ACTIVATION_TERMS if is_documented_exception(i, term)
    }
    assert missed == documented
    # 13 bf16 blocks (5 keeping scores, 4 selective, 4 SDPA) + 8 fp32 blocks (selective, SDPA) + 17 bf16
    # output sides.
    assert len(missed) == 38
    for config_id, term in missed:
        row = estimate_check(config_id).row(term)
        assert [c.key for c in row.causes][0] in PLATFORM_CAUSES
        assert abs(row.error_with(PLATFORM_CAUSES)) <= ACTIVATION_TOLERANCE


def test_full_recomputation_matches_to_the_byte():
    for check in all_checks():
        if check.run.recompute == "full":
            assert check.row("saved_activations_layers").gap_bytes == 0


def test_weight_tensors_as_the_tool_builds_them():
    # GPT-2 style: token and position tables, per block 2 LayerNorms (4) + QKV and projection with biases (4)
    # + MLP up and down with biases (4) = 12, final LayerNorm 2: 2 + 24 + 2 = 28 (Adam's 112 bytes of steps).
    assert weight_tensor_count(measured_run(GPT2_BF16).spec) == 28
    # Llama style: tokens, untied output, per block 2 RMSNorms + QKV + projection + 3 MLP matrices = 7, final
    # norm.
    assert weight_tensor_count(measured_run(LLAMA_BF16).spec) == 17
    assert estimate_check(GPT2_BF16).row("optimizer_step_counters").causes[0].explained_bytes == 112


def test_the_summary_and_the_worst_gaps():
    summary = check_summary()
    assert summary.runs == len(load_measured()) and summary.state_exact
    assert abs(summary.worst_activation_error_percent["gpt2"]) < 2
    assert -30 < summary.worst_activation_error_percent["llama"] < -20
    assert abs(summary.worst_gpu_error_percent) <= 100 * ACTIVATION_TOLERANCE
    assert abs(summary.worst_explained_error_percent) < 0.1
    text = summary_sentence(summary)
    assert f"{summary.runs} measured runs" in text
    assert lessons.sentence("memory", "summary_state_exact") in text  # state_exact, as asserted above
    for error in (*summary.worst_activation_error_percent.values(), summary.worst_gpu_error_percent):
        assert f"{abs(error):.1f}%" in text
    worst = {gap.term: gap for gap in worst_gaps()}
    assert worst["parameters"].error_percent == 0 and worst["parameters"].main_cause is None
    assert (
        worst["saved_activations_layers"].config_id.startswith("llama-")
        and "bf16" in worst["saved_activations_layers"].config_id
    )
    assert worst["saved_activations_layers"].main_cause == "cpu_rmsnorm"
    rows = worst_gap_rows(worst_gaps())
    assert [row["Term"] for row in rows][:3] == ["Parameters", "Gradients", "Optimizer state"]
    assert {row["Relative error"] for row in rows[:3]} == {"exact"}
    assert rows[4]["Main cause"] == cause_words("cpu_rmsnorm")
    assert rows[4]["Relative error"] == f"{worst['saved_activations_layers'].error_percent:+.1f}%" == "-29.9%"


def test_the_sentence_names_the_largest_gaps_and_their_causes():
    check = estimate_check(LLAMA_BF16)
    text = gap_sentence(check)
    assert text.startswith(lessons.sentence("memory", "state_exact"))
    # Saved activations in the blocks: 753,664 estimated, 952,320 kept, 198,656 bytes (20.9%) short.
    blocks = {"term": "saved activations in the blocks", "percent": 20.88, "gap_bytes": 198_656}
    assert lessons.sentence("memory", "gap_under", **blocks) in text and "20.9%" in text
    assert f"{cause_words('cpu_rmsnorm')} (" in text
    table = table_rows(check)
    assert table[4] == {
        "Term": "Saved activations in the blocks",
        "Estimate (bytes)": "753,664",
        "PyTorch (bytes)": "952,320",
        "Relative error": "-20.9%",
    }
    widest = {"term": "saved activations outside the blocks", "percent": 24.0}
    assert lessons.sentence("memory", "widest_under", **widest) in chart_description(check)
    setup = setup_sentence(check)
    assert precision_label("bf16") in setup and "64 × 64 tokens" not in setup and "2 × 64 tokens" in setup


def test_a_run_measured_exactly_as_estimated_reads_as_exact():
    check = estimate_check("gpt2-h64-l2-s64-b2-fp32-sgd_momentum-none-explicit")
    perfect = replace(check.run, terms=tuple((row.term, row.estimate_bytes) for row in check.rows))
    rows = check_run(perfect).rows
    assert all(row.gap_bytes == 0 for row in rows)
    assert gap_sentence(check_run(perfect)).endswith(lessons.sentence("memory", "no_other_gap"))
    assert [row.error_text for row in rows][3] == "exact (none kept)"


def test_labels_name_every_run_apart():
    labels = [config_label(i) for i in measured_ids()]
    assert len(set(labels)) == len(labels)
    assert (
        config_label(LLAMA_BF16)
        == "Llama-style · BF16 · 64 tokens × 2 · Adam · no recomputation · attention written out"
    )


@settings(max_examples=40, deadline=None)
@given(config_id=st.sampled_from(measured_ids()), batch=st.integers(1, 16), seq_len=st.integers(1, 128))
def test_estimates_and_causes_grow_with_the_batch_and_never_go_negative(config_id, batch, seq_len):
    run = replace(measured_run(config_id), batch=batch, seq_len=seq_len)
    doubled = check_run(replace(run, batch=2 * batch))
    check = check_run(run)
    for term in COMPARED_TERMS:
        row, twice = check.row(term), doubled.row(term)
        assert row.estimate_bytes >= 0 and all(c.explained_bytes >= 0 for c in row.causes)
        if term == "saved_activations_layers":
            assert (
                twice.estimate_bytes == 2 * row.estimate_bytes
                and twice.explained_bytes == 2 * row.explained_bytes
            )
        if term in STATE_TERMS:
            assert twice.estimate_bytes == row.estimate_bytes


def test_bad_requests_are_refused_readably():
    with pytest.raises(ValueError, match="No measured configuration"):
        estimate_check("gpt5-huge")
    with pytest.raises(ValueError, match="Unknown compared term"):
        estimate_check(GPT2_BF16).row("workspace")
    with pytest.raises(ValueError, match="kept nothing"):
        estimate_check("gpt2-h64-l2-s64-b2-bf16-sgd_momentum-none-explicit").row(
            "optimizer_step_counters"
        ).error_with(())


def test_the_view_of_a_measured_run_is_worked_out_once_and_an_unknown_run_is_still_refused():
    assert check_view(LLAMA_BF16) is check_view(LLAMA_BF16)
    assert check_view(LLAMA_BF16).check == estimate_check(LLAMA_BF16)
    with pytest.raises(ValueError):
        check_view("no-such-run")
