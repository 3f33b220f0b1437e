"""PyTorch's committed measurements: the loader's checks, and figures worked by hand from the shapes."""

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.datafiles import read_csv_rows
from core.measured import (
    COLUMNS,
    FAMILY_TRAITS,
    FILE_NAME,
    REQUIRED_TERMS,
    load_measured,
    measured_ids,
    measured_run,
    parse_measured_rows,
)
from core.models import parameter_count

GPT2_FP32 = "gpt2-h64-l2-s32-b2-fp32-adam-none-explicit"


def _rows_of(config_id: str) -> list[dict[str, str]]:
    return [row for row in read_csv_rows(FILE_NAME) if row["config_id"] == config_id]


def _with(rows: list[dict[str, str]], on_term: str, changes: dict[str, str]) -> list[dict[str, str]]:
    changed = copy.deepcopy(rows)
    for row in changed:
        if row["term"] == on_term:
            row.update(changes)
    return changed


def test_the_committed_file_loads_once_with_every_required_term():
    runs = load_measured()
    assert load_measured() is runs
    assert len(runs) == len(set(measured_ids())) >= 60
    for run in runs:
        assert set(REQUIRED_TERMS) <= set(run.terms_bytes)


def test_gpt2_parameter_bytes_match_a_count_by_hand():
    # h 64, 2 layers, MLP 256, vocab 512, 128 learned positions, output layer tied to the tokens:
    # tokens 512·64 = 32,768; positions 128·64 = 8,192; final LayerNorm 2·64 = 128.
    # One block: 2 LayerNorms 256 + QKV 64·192+192 = 12,480 + projection 64·64+64 = 4,160
    #            + MLP in 64·256+256 = 16,640 + MLP out 256·64+64 = 16,448 -> 49,984.
    # Total 32,768 + 8,192 + 2·49,984 + 128 = 141,056 values, 4 bytes each in fp32.
    run = measured_run(GPT2_FP32)
    assert run.term_bytes("parameters") == 141_056 * 4 == run.term_bytes("gradients")
    # 28 weight tensors (2 embeddings, 12 per block, 2 in the final norm), one 4-byte step count each.
    assert run.term_bytes("optimizer_step_counters") == 28 * 4


def test_llama_parameter_bytes_match_a_count_by_hand():
    # h 64, 4 heads of 16, 2 KV heads, SwiGLU 176, vocab 512, untied output layer, no biases:
    # tokens and output layer 2·512·64 = 65,536; final RMSNorm 64.
    # One block: 2 RMSNorms 128 + QKV 64·(64+32+32) = 8,192 + projection 4,096 + 3·64·176 = 33,792 -> 46,208.
    # Total 65,536 + 2·46,208 + 64 = 158,016 values, 2 bytes each in bf16.
    run = measured_run("llama-h64-l2-s32-b2-bf16-adam-none-explicit")
    assert run.term_bytes("parameters") == 158_016 * 2
    # 17 weight tensors (2 embeddings, 7 per block, the final norm).
    assert run.term_bytes("optimizer_step_counters") == 17 * 4


def test_every_run_holds_exactly_the_parameters_core_models_counts():
    bytes_per_value = {"fp32": 4, "bf16": 2}
    for run in load_measured():
        assert run.term_bytes("parameters") == parameter_count(run.spec) * bytes_per_value[run.dtype]


def test_the_family_column_fills_in_the_rest_of_the_architecture():
    run = measured_run(GPT2_FP32)
    assert (run.spec.name, run.spec.hidden, run.spec.heads, run.spec.positions) == (
        "gpt2",
        64,
        4,
        FAMILY_TRAITS["gpt2"]["positions"],
    )
    assert run.spec.tied_embeddings and not run.spec.gated_mlp


def test_optimizer_state_is_two_values_per_weight_for_adam_and_one_for_momentum():
    extra_values = {"adam": 2, "sgd_momentum": 1}
    for run in load_measured():
        assert run.term_bytes("optimizer_state") == extra_values[run.optimizer] * run.term_bytes("parameters")


def test_gpt2_bf16_block_matches_korthikanti_plus_the_layernorm_statistics():
    # Korthikanti et al. 2022, 2-byte activations, no recomputation: s·b·h·(34 + 5·a·s/h) bytes.
    # On top, each of the 2 LayerNorms keeps a mean and a 1/std per token in bf16: 2·2·2 = 8 bytes per token.
    # e.g. s 64, b 2, h 64, a 4: 8,192·(34 + 20) + 8·128 = 443,392 bytes.
    runs = [
        r
        for r in load_measured()
        if r.spec.name == "gpt2" and r.dtype == "bf16" and r.attention == "explicit" and r.recompute == "none"
    ]
    assert len(runs) == 5  # four shapes with Adam, one with SGD
    for run in runs:
        s, b, h, a = run.seq_len, run.batch, run.spec.hidden, run.spec.heads
        assert run.layer_activation_bytes == s * b * h * (34 + 5 * a * s // h) + 8 * s * b
    assert measured_run("gpt2-h64-l2-s64-b2-bf16-adam-none-explicit").layer_activation_bytes == 443_392


def test_full_recomputation_keeps_only_each_block_input():
    # Korthikanti's 2·s·b·h bytes with 2-byte activations; fp32 doubles it.
    for run in load_measured():
        if run.recompute == "full":
            assert run.layer_activation_bytes_per_sbh == (2.0 if run.dtype == "bf16" else 4.0)


def test_unknown_configuration_is_a_readable_error():
    with pytest.raises(ValueError, match="No measured configuration"):
        measured_run("gpt5-huge")


@pytest.mark.parametrize(
    ("term", "changes", "message"),
    [
        ("parameters", {"measured_bytes": "12 GB"}, "whole number"),
        ("parameters", {"measured_bytes": "1.5e3"}, "whole number"),
        ("parameters", {"measured_bytes": "-4"}, "whole number"),
        ("parameters", {"term": "weights"}, "unknown term 'weights'"),
        ("gradients", {"term": "parameters"}, "more than once: parameters"),
        ("gradients", {"dtype": "fp16"}, "rows disagree on dtype"),
        ("saved_activations_layers", {"measured_bytes": "3"}, "split evenly over 2 layers"),
        ("parameters", {"config_id": ""}, "no config_id"),
    ],
)
def test_bad_rows_are_refused_with_a_reason(term, changes, message):
    with pytest.raises(ValueError, match=message):
        parse_measured_rows(_with(_rows_of(GPT2_FP32), term, changes))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("dtype", "fp8", "dtype 'fp8' is not one of"),
        ("attention", "ring", "attention 'ring' is not one of"),
        ("family", "bert", "family 'bert' is not one of"),
        ("heads", "5", "split evenly into the attention heads"),
        ("kv_heads", "3", "split evenly into the KV heads"),
        ("layers", "0", "at least 1"),
        ("date", "30/11/2026", "ISO date"),
        ("torch_version", "", "which PyTorch"),
    ],
)
def test_bad_settings_are_refused_with_a_reason(column, value, message):
    rows = copy.deepcopy(_rows_of(GPT2_FP32))
    for row in rows:
        row[column] = value
    with pytest.raises(ValueError, match=message):
        parse_measured_rows(rows)


def test_a_missing_term_or_column_is_refused():
    rows = _rows_of(GPT2_FP32)
    with pytest.raises(ValueError, match="missing the terms gradients"):
        parse_measured_rows([row for row in rows if row["term"] != "gradients"])
    without_date = [{k: v for k, v in row.items() if k != "date"} for row in rows]
    with pytest.raises(ValueError, match="must have the columns"):
        parse_measured_rows(without_date)
    short_row: list[dict[str, Any]] = [{**rows[0], "date": None}]  # what csv.DictReader gives a short row
    with pytest.raises(ValueError, match=f"exactly the {len(COLUMNS)} columns"):
        parse_measured_rows(short_row)
    with pytest.raises(ValueError, match="no measurements"):
        parse_measured_rows([])


@given(st.integers(min_value=0, max_value=10**15))
def test_any_whole_byte_count_reads_back_unchanged(count):
    (run,) = parse_measured_rows(_with(_rows_of(GPT2_FP32), "parameters", {"measured_bytes": str(count)}))
    assert run.term_bytes("parameters") == count


@given(st.text(min_size=1, max_size=12).filter(lambda text: not (text.isascii() and text.isdigit())))
def test_byte_counts_that_are_not_plain_digits_are_refused(text):
    with pytest.raises(ValueError, match="whole number"):
        parse_measured_rows(_with(_rows_of(GPT2_FP32), "parameters", {"measured_bytes": text}))
