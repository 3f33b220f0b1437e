"""Will it fit's chart: one bar per method and number of GPUs, its value written beside it, titled, the
axis in tokens, and a description that names every bar's figure."""

from __future__ import annotations

from charts.fit import FitRow, fit_chart, fit_description, fit_frame

ROWS = (
    FitRow(method="Full training", gpus="1 GPU", tokens=0),
    FitRow(method="LoRA", gpus="1 GPU", tokens=3_584),
    FitRow(method="QLoRA", gpus="1 GPU", tokens=12_288),
    FitRow(method="Full training", gpus="8 GPUs, FSDP", tokens=2_048),
    FitRow(method="LoRA", gpus="8 GPUs, FSDP", tokens=16_001),
    FitRow(method="QLoRA", gpus="8 GPUs, FSDP", tokens=131_072),
)


def test_every_bar_carries_its_value_as_a_label():
    frame = fit_frame(ROWS)
    assert list(frame["tokens"]) == [0, 3_584, 12_288, 2_048, 16_001, 131_072]
    assert list(frame["label"]) == ["0", "3,584", "12,288", "2,048", "16,001", "131,072"]


def test_the_chart_is_titled_its_axis_in_tokens_methods_in_order():
    spec = fit_chart(ROWS, title="Longest sequence").to_dict()
    assert spec["title"] == "Longest sequence"
    bars, labels = spec["layer"]
    assert (bars["mark"]["type"], labels["mark"]["type"]) == ("bar", "text")
    assert bars["encoding"]["x"]["title"] == "Longest sequence that fits (tokens)"
    assert bars["encoding"]["x"]["scale"]["domainMax"] > 131_072  # room for the longest bar's label
    assert bars["encoding"]["y"]["sort"] == ["Full training", "LoRA", "QLoRA"]
    assert bars["encoding"]["color"]["scale"]["domain"] == ["1 GPU", "8 GPUs, FSDP"]
    assert labels["encoding"]["text"]["field"] == "label"
    assert {t["field"] for t in bars["encoding"]["tooltip"]} == {"method", "gpus", "tokens"}


def test_the_description_names_the_card_and_every_bar():
    said = fit_description(ROWS, device="RTX 4090")
    assert "RTX 4090" in said
    for row in ROWS:
        assert f"{row.tokens:,}" in said
    assert said.count("8 GPUs, FSDP") == 3 and said.count("QLoRA") == 2
