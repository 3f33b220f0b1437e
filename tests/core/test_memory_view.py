"""The memory page's settings turned into what it shows: defaults, both estimates, schema agreement."""

from dataclasses import astuple

import pytest

from core.gpus import gpu_names
from core.memory import BudgetOptimizer, SweepAxis
from core.memory.settings import DETAILED_PRECISIONS, AttentionKind, LessonDtype, Recomputation
from core.memory.view import (
    ESTIMATES,
    SECTION,
    Line,
    budget_view,
    bytes_per_parameter,
    lesson_outcomes,
    page_settings,
    said,
    sweep_values,
)
from core.models import model_names
from core.settings_schema import section


def test_the_schema_offers_exactly_what_core_knows():
    schema = section(SECTION)
    expected = {
        "dtype": LessonDtype.ids(),
        "optimizer": BudgetOptimizer.ids(),
        "estimate": ESTIMATES,
        "precision": tuple(DETAILED_PRECISIONS),
        "recompute": Recomputation.ids(),
        "attention": AttentionKind.ids(),
        "sweep_axis": SweepAxis.ids(),
        "model": model_names(),
        "gpu": gpu_names(),
    }
    for name, choices in expected.items():
        assert schema.field(name).choices == tuple(choices), name


def test_the_default_view_is_the_lessons_budget():
    view = budget_view({})
    assert (view.estimate, view.parameter_count, view.device_label) == (
        "lesson",
        805_306_368,
        "24 GiB (25.77 GB) device",
    )
    assert view.verdict.total_gb == pytest.approx(16.032385536)
    assert view.assumptions[0] == Line(
        "lesson_parameters", {"hidden": 2048, "layers": 16, "parameters": 805_306_368}
    )  # 12 × 2,048² × 16
    activations = view.assumptions[3].figures
    assert (
        activations["batch"],
        activations["seq_len"],
        activations["tensors"],
        activations["value_bytes"],
    ) == (
        4,
        1024,
        4,
        4,
    )
    assert activations["activations_gb"] == pytest.approx(4 * 1024 * 2048 * 16 * 4 * 4 / 1e9)  # 2.15 GB
    assert view.sweep.values == tuple(range(512, 8193, 512))
    assert view.effective_batch == 4


def test_the_detailed_view_follows_the_preset_gpu_and_sharding():
    view = budget_view(
        {
            "estimate": "detailed",
            "model": "Llama-2-7B",
            "precision": "mixed16",
            "zero_stage": 3,
            "gpus": 8,
            "gpu": "H100 SXM",
            "accumulation": 4,
            "recompute": "selective",
        }
    )
    assert (view.parameter_count, view.device_label, view.effective_batch) == (
        6_738_415_616,
        "H100 SXM, 80 GiB (85.90 GB)",
        4 * 4 * 8,
    )
    assert view.terms.parameters_bytes == 2 * 6_738_415_616 / 8
    assert view.verdict.device_gb == pytest.approx(80 * 2**30 / 1e9)  # 80 GiB
    lines = {line.key: line.figures for line in view.assumptions}
    assert lines["model_published"]["published"] == 6_738_415_616
    assert (lines["zero_sharded"]["zero_stage"], lines["zero_sharded"]["gpus"]) == (3, 8)
    assert lines["activations"]["kept"] == Line("kept_selective")
    assert lines["accumulation"]["effective_batch"] == 128  # micro-batch 4 × 4 steps × 8 GPUs


def test_custom_detailed_view_compares_with_the_lessons_rule():
    view = budget_view({"estimate": "detailed", "hidden": 1024, "layers": 4})
    assert view.assumptions[0].key == "model_custom"
    assert view.assumptions[0].figures["lesson_parameters"] == 12 * 1024**2 * 4  # 50,331,648
    assert view.device_label == "RTX 4090, 24 GiB (25.77 GB)"


def test_stored_settings_are_checked_against_the_schema():
    assert page_settings({"batch": 8})["batch"] == 8
    with pytest.raises(ValueError, match="'batch' must be between 1 and 32"):
        budget_view({"batch": 64})
    with pytest.raises(ValueError, match="Unknown memory settings: colour"):
        budget_view({"colour": "red"})
    assert sweep_values("batch") == tuple(range(1, 33))


def test_the_predictions_are_scored_against_the_careful_count_not_the_rough_rule():
    # The rough rule says Adam's state is largest and 6,144 tokens break a 24 GiB card; the careful count of
    # the same step (tests/core/test_memory_graded.py) says saved activations, and 1,536 tokens.
    assert lesson_outcomes({}) == ("activations", "1536")
    # A small model on long sequences: activations dominate (12·1024²·4 = 50M parameters, 8,192 tokens).
    assert lesson_outcomes({"hidden": 1024, "layers": 4, "seq_len": 8192, "batch": 32})[0] == "activations"
    # One sequence a step on 80 GiB: every length fits, and Adam's state outweighs one sequence's tensors.
    assert lesson_outcomes({"device_gb": "80", "batch": 1}) == ("optimizer_state", "never")


def test_the_bytes_per_parameter_card_and_the_lessons_two_byte_adam_case():
    card = bytes_per_parameter()
    assert astuple(card)[:6] == (4, 8, 12, 16, 18, 20)
    assert card.lesson_two_byte_adam == 12  # 2 weight + 2 gradient + 2 × 4 Adam, no master copy


@pytest.mark.parametrize("model", ["GPT-2 small", "Llama-2-7B", "Mixtral-8x7B", "Pythia-160M", "custom"])
@pytest.mark.parametrize(
    ("recompute", "attention", "zero_stage"),
    [
        ("none", "standard", 0),
        ("none", "memory_efficient", 1),
        ("selective", "standard", 2),
        ("full", "standard", 3),
    ],
)
def test_every_line_of_the_sums_fills_its_template(model, recompute, attention, zero_stage):
    settings = {"model": model, "recompute": recompute, "attention": attention, "zero_stage": zero_stage}
    for estimate in ESTIMATES:
        view = budget_view({**settings, "estimate": estimate, "gpus": 4})
        assert all(said(line) for line in view.assumptions)


def test_a_line_reads_its_figures_with_their_formats():
    shown = said(Line("lesson_parameters", {"hidden": 2048, "layers": 16, "parameters": 805_306_368}))
    assert "2,048" in shown and "805,306,368" in shown
    kept = said(Line("kept_full"))
    line = Line(
        "activations",
        {
            "kv_heads": 8,
            "mlp": Line("mlp_gated"),
            "intermediate": 14_336,
            "dropout": Line("dropout_off"),
            "value_bytes": 2,
            "kept": Line("kept_full"),
        },
    )
    assert "14,336" in said(line) and said(line).endswith(f"{kept}.")
