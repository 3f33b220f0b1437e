"""Share links: good values are taken, bad ones are skipped or adjusted with a note."""

from hypothesis import given
from hypothesis import strategies as st

from core.settings_schema import parse_section
from core.share_links import link_setup, read_link

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


def test_a_link_that_names_a_setting_gives_the_whole_setup_with_the_rest_at_defaults():
    reading = link_setup(LINEAR, {"dtype": ["bf16"], "utm_source": ["mail"]})
    assert reading.values == {"n_in": 4096, "dtype": "bf16", "fused": False}


def test_a_link_whose_one_value_is_unusable_still_sets_the_defaults_and_says_why():
    reading = link_setup(LINEAR, {"n_in": ["lots"]})
    assert reading.values == {"n_in": 4096, "dtype": "fp32", "fused": False}
    assert "must be a number" in reading.notes[0]


def test_a_plain_visit_gives_no_setup():
    assert link_setup(LINEAR, {"utm_source": ["mail"]}).values == {}


@given(
    st.dictionaries(
        st.sampled_from(["n_in", "dtype", "fused", "other"]), st.lists(st.text(max_size=80), max_size=3)
    )
)
def test_whatever_a_link_holds_the_values_taken_pass_the_strict_check(params):
    reading = read_link(LINEAR, params)
    assert LINEAR.check(reading.values) == reading.values


@given(
    st.dictionaries(
        st.sampled_from(["n_in", "dtype", "fused", "other"]), st.lists(st.text(max_size=80), max_size=3)
    )
)
def test_a_links_setup_is_all_or_nothing_and_agrees_with_what_it_reads(params):
    reading = link_setup(LINEAR, params)
    taken = read_link(LINEAR, params)
    named = any(name in params for name in ("n_in", "dtype", "fused"))
    assert set(reading.values) == ({"n_in", "dtype", "fused"} if named else set())
    assert reading.values == ({**LINEAR.defaults(), **taken.values} if named else {})
    assert reading.notes == taken.notes
