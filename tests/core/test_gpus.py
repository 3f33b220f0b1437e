"""GPU presets: the datasheet figures, validation on load, and peak rates per number format."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.gpus import (
    DTYPES,
    bytes_per_value,
    gpu,
    gpu_names,
    load_gpus,
    parse_gpus,
    peak_tflops,
    uses_tensor_cores,
)

REQUIRED = (
    "A100 40GB SXM",
    "A100 80GB SXM",
    "H100 SXM",
    "H100 PCIe",
    "H200",
    "L4",
    "T4",
    "A10",
    "RTX 4090",
    "RTX 3090",
    "V100 SXM2 32GB",
)

GOOD_ROW = {
    "name": "Card",
    "memory_bytes": "17179869184",
    "bandwidth_tb_per_s": "0.5",
    "bf16_tflops": "100",
    "fp32_tflops": "10",
    "has_bf16": "true",
    "source": "a datasheet",
}


def test_every_card_the_lesson_needs_is_there():
    assert set(REQUIRED) <= set(gpu_names())
    assert len(gpu_names()) == len(set(gpu_names()))


def test_load_is_cached():
    assert load_gpus() is load_gpus()


@pytest.mark.parametrize(
    ("name", "memory_gib", "bandwidth_tb_per_s", "bf16_tflops", "fp32_tflops"),
    [
        # NVIDIA A100 datasheet: 624 TFLOPS BF16 with sparsity, so 312 dense; HBM2e 2,039 GB/s.
        ("A100 80GB SXM", 80, 2.039, 312, 19.5),
        # NVIDIA H100 datasheet, SXM: 1,979 with sparsity, so 989 dense; 3.35 TB/s.
        ("H100 SXM", 80, 3.35, 989, 67),
        # NVIDIA H100 PCIe product brief: 1,513 with sparsity, so 756 dense; 2,000 GB/s.
        ("H100 PCIe", 80, 2.0, 756, 51),
        # NVIDIA L4 datasheet: 242 FP16/BF16 with sparsity, so 121 dense; 300 GB/s.
        ("L4", 24, 0.3, 121, 30.3),
    ],
)
def test_datasheet_figures_are_dense(name, memory_gib, bandwidth_tb_per_s, bf16_tflops, fp32_tflops):
    card = gpu(name)
    assert (card.memory_gib, card.bandwidth_tb_per_s, card.bf16_tflops, card.fp32_tflops) == (
        memory_gib,
        bandwidth_tb_per_s,
        bf16_tflops,
        fp32_tflops,
    )
    assert "sparsity" in card.source


def test_only_t4_and_v100_lack_bf16():
    assert sorted(c.name for c in load_gpus() if not c.has_bf16) == ["T4", "V100 SXM2 32GB"]


def test_peak_rates_per_format():
    a100 = gpu("A100 80GB SXM")
    assert peak_tflops(a100, "bf16") == peak_tflops(a100, "fp16") == 312
    assert peak_tflops(a100, "fp32") == 19.5
    v100 = gpu("V100 SXM2 32GB")
    assert peak_tflops(v100, "fp16") == 125  # FP16 tensor cores
    assert peak_tflops(v100, "bf16") == 15.7  # no BF16 units: the plain FP32 rate
    assert not uses_tensor_cores(v100, "bf16") and uses_tensor_cores(v100, "fp16")


def test_value_sizes():
    assert [bytes_per_value(d) for d in DTYPES] == [4, 2, 2]


def test_unknown_names_and_formats_are_refused_readably():
    with pytest.raises(ValueError, match="Known GPUs"):
        gpu("GTX 480")
    with pytest.raises(ValueError, match="fp32, bf16, fp16"):
        peak_tflops(gpu("H200"), "int8")
    with pytest.raises(ValueError, match="number format"):
        bytes_per_value("fp8")


@pytest.mark.parametrize("column", ["memory_bytes", "bandwidth_tb_per_s", "bf16_tflops", "fp32_tflops"])
@pytest.mark.parametrize("bad", ["0", "-3", "", "fast", "nan", "inf"])
def test_rows_with_bad_numbers_are_refused(column, bad):
    with pytest.raises(ValueError, match=column):
        parse_gpus([{**GOOD_ROW, column: bad}])


def test_repeated_names_missing_sources_and_bad_flags_are_refused():
    with pytest.raises(ValueError, match="more than once: Card"):
        parse_gpus([GOOD_ROW, GOOD_ROW])
    with pytest.raises(ValueError, match="source"):
        parse_gpus([{**GOOD_ROW, "source": " "}])
    with pytest.raises(ValueError, match="true or false"):
        parse_gpus([{**GOOD_ROW, "has_bf16": "maybe"}])
    with pytest.raises(ValueError, match="no GPUs"):
        parse_gpus([])


@given(st.sampled_from(REQUIRED), st.sampled_from(DTYPES))
def test_every_card_has_a_positive_peak_no_faster_than_its_tensor_rate(name, dtype):
    card = gpu(name)
    assert 0 < peak_tflops(card, dtype) <= card.bf16_tflops


def test_the_linear_page_settings_offer_what_core_knows():
    from core.settings_schema import section

    fields = section("linear")
    assert fields.field("dtype").choices == DTYPES
    assert fields.field("gpu").choices == gpu_names() and fields.field("gpu").default == "A100 80GB SXM"


def test_capacities_are_bytes_as_devices_report_them():
    # An "80GB" A100 reports 80 GiB; the H200 what torch reported in the H200 reference.
    assert gpu("A100 80GB SXM").memory_bytes == 85_899_345_920
    assert gpu("H200").memory_bytes == 150_109_880_320
    assert gpu("A100 80GB SXM").memory_gb == pytest.approx(85.899345920)
