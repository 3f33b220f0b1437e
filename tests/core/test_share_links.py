"""Share links: good values are taken, bad ones are skipped or adjusted with a note."""

from hypothesis import given
from hypothesis import strategies as st

from core.settings_schema import parse_section
from core.share_links import read_link

LINEAR = parse_section(
    "linear",
    [
        {"name": "n_in", "kind": "int", "default": 4096, "min": 256, "max": 8192, "step": 256},
        {"name": "dtype", "kind": "choice", "default": "fp32", "choices": ["fp32", "bf16"]},
        {"name": "fused", "kind": "bool", "default": False},
    ],
)


def test_exact_values_are_taken_without_notes():
    reading = read_link(LINEAR, {"n_in": ["1024"], "dtype": ["bf16"], "fused": ["true"]})
    assert reading.values == {"n_in": 1024, "dtype": "bf16", "fused": True}
    assert reading.notes == ()


def test_out_of_range_numbers_are_clamped_and_said_so():
    reading = read_link(LINEAR, {"n_in": ["100000"]})
    assert reading.values == {"n_in": 8192}
    assert "adjusted to 8192" in reading.notes[0]


def test_unusable_values_are_skipped_each_with_a_note():
    reading = read_link(LINEAR, {"n_in": ["lots"], "dtype": ["fp4"], "fused": ["x" * 500]})
    assert reading.values == {}
    assert len(reading.notes) == 3
    assert "must be a number" in reading.notes[0]
    assert "'dtype' is not one of this page's options" in reading.notes[1]
    assert "fp4" not in reading.notes[1]  # a link's own text is never repeated back
    assert "too long" in reading.notes[2]


def test_repeated_keys_are_ignored():
    reading = read_link(LINEAR, {"n_in": ["512", "1024"]})
    assert reading.values == {} and "2 times" in reading.notes[0]


def test_names_that_are_not_settings_are_left_alone():
    assert read_link(LINEAR, {"answers": ["r1:mem"], "utm_source": ["mail"]}) == read_link(LINEAR, {})


@given(
    st.dictionaries(
        st.sampled_from(["n_in", "dtype", "fused", "other"]), st.lists(st.text(max_size=80), max_size=3)
    )
)
def test_whatever_a_link_holds_the_values_taken_pass_the_strict_check(params):
    reading = read_link(LINEAR, params)
    assert LINEAR.check(reading.values) == reading.values
