"""One way to write a duration: the largest unit that keeps it at 1 or more, three significant figures."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.units import (
    capacity_label,
    count_label,
    duration_label,
    duration_unit,
    fixed_label,
    indefinite_article,
)


@pytest.mark.parametrize(
    ("seconds", "label"),
    [
        (7.048e-3, "7.05 ms"),
        (6.5825e-5, "65.8 µs"),
        (1.2, "1.20 s"),
        (999.6e-6, "1.00 ms"),  # rounds up into the next unit
        (3e-9, "3.00 ns"),
        (6.25 * 3_600, "6.25 h"),
        (100 * 3_600, "4.17 days"),  # 100 / 24 = 4.1667
        (0.5 * 3_600, "30.0 min"),
        (3.2917, "3.29 s"),
        (0.7435, "744 ms"),
        (2_000 * 86_400, "2,000 days"),
        (0, "0 s"),
    ],
)
def test_duration_labels(seconds, label):
    assert duration_label(seconds) == label


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), True, "3 s"])
def test_a_duration_that_is_not_a_time_is_refused(bad):
    with pytest.raises(ValueError, match="duration"):
        duration_label(bad)


def test_a_duration_can_take_the_unit_of_another_so_one_sentence_shares_a_unit():
    # 0.27 ms of a 2.29 ms step: both in ms, 0.27 to three significant figures.
    assert duration_label(0.27e-3, unit_of=2.29e-3) == "0.270 ms"
    assert duration_label(0.27e-3) == "270 µs"
    assert duration_label(0, unit_of=2.29e-3) == "0 ms"


def test_a_chart_axis_gets_the_unit_and_its_length_that_the_label_would_use():
    assert duration_unit(20.6 * 3_600) == ("h", 3_600.0)
    assert duration_unit(0.625 * 3_600) == ("min", 60.0)  # 37.5 min
    assert duration_unit(5.0) == ("s", 1.0)
    assert duration_unit(999.6e-6) == ("ms", 1e-3)  # the same carry as the label's
    with pytest.raises(ValueError, match="negative"):
        duration_unit(-1.0)


@pytest.mark.parametrize(
    ("total_bytes", "label"),
    [
        (25_769_803_776, "24 GiB (25.77 GB)"),  # an RTX 4090 or an L4
        (85_899_345_920, "80 GiB (85.90 GB)"),  # an "80GB" A100
        (150_109_880_320, "139.8 GiB (150.11 GB)"),  # the H200 as torch reported it
    ],
)
def test_a_capacity_is_written_as_the_device_reports_it_then_in_gb(total_bytes, label):
    assert capacity_label(total_bytes) == label


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "24"])
def test_a_capacity_must_be_a_positive_whole_number_of_bytes(bad):
    with pytest.raises(ValueError, match="whole number of bytes"):
        capacity_label(bad)


@pytest.mark.parametrize(
    ("number", "article"),
    [(8192, "an"), (8, "an"), (80, "an"), (11, "an"), (18_000, "an"), (1024, "a"), (256, "a"), (118, "a")],
)
def test_the_article_follows_the_number_as_it_is_read(number, article):
    assert indefinite_article(number) == article


@pytest.mark.parametrize(
    ("value", "label"),
    [(32.0, "32"), (2400, "2,400"), (34_875.0, "34,875"), (0, "0"), (0.5, "0.500"), (10 + 2 / 3, "10.7")],
)
def test_a_count_is_whole_with_thousands_separators_and_a_part_of_one_has_three_figures(value, label):
    assert count_label(value) == label


@given(st.integers(min_value=0, max_value=10**12))
def test_a_whole_count_reads_back_as_itself_whatever_type_it_arrives_in(count):
    assert int(count_label(count).replace(",", "")) == count
    assert count_label(float(count)) == count_label(count) == f"{count:,}"


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), True, "32"])
def test_what_is_not_a_count_is_refused(bad):
    with pytest.raises(ValueError, match="count"):
        count_label(bad)


def test_a_fixed_figure_keeps_its_decimals_and_separates_thousands():
    assert [fixed_label(2577.0, 1), fixed_label(0.4666, 3), fixed_label(85.9, 0)] == [
        "2,577.0",
        "0.467",
        "86",
    ]
