"""Tables sent as Arrow show exactly what Streamlit's own conversion of the rows shows."""

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from ui import tables
from ui.tables import arrow_rows, shared_table

ROWS = [
    {"Operation": "Linear layer", "FLOP/byte": 15.9, "Tiles": 4, "Done": True, "Note": None},
    {"Operation": "GELU", "FLOP/byte": 0.625, "Tiles": 1, "Done": False, "Note": "memory-bound"},
]


def test_rows_become_an_arrow_table_with_their_columns_in_order():
    table = arrow_rows(iter(ROWS))
    assert isinstance(table, pa.Table)
    assert table.column_names == ["Operation", "FLOP/byte", "Tiles", "Done", "Note"]
    assert table.column("FLOP/byte").to_pylist() == [15.9, 0.625]
    assert table.column("Note").to_pylist() == [None, "memory-bound"]


def test_a_column_that_mixes_numbers_and_text_is_left_to_streamlit():
    rows: list[dict[str, object]] = [{"Value": 4}, {"Value": "none"}]
    assert arrow_rows(rows) == rows


def _both_ways():
    import streamlit as st

    from tests.app.test_tables import ROWS
    from ui.tables import arrow_rows

    st.dataframe(arrow_rows(ROWS), hide_index=True)
    st.dataframe(ROWS, hide_index=True)
    st.table(arrow_rows(ROWS), hide_index=True)
    st.table(ROWS, hide_index=True)


def _cells(frame) -> list[list]:
    return frame.astype(object).where(frame.notna(), None).values.tolist()


def test_the_learner_sees_the_same_table_either_way():
    at = AppTest.from_function(_both_ways).run()
    for element in (at.dataframe, at.table):
        arrow_frame, rows_frame = (shown.value for shown in element)
        assert list(arrow_frame.columns) == list(rows_frame.columns) == list(ROWS[0])
        assert _cells(arrow_frame) == _cells(rows_frame) == [list(row.values()) for row in ROWS]


def _with_notes():
    from ui.tables import table_with_notes

    table_with_notes(
        [
            {"Answer": "Rough rule", "Peak (GB)": "21.47", "Why": "it leaves out the embeddings"},
            {"Answer": "H200", "Peak (GB)": "25.89", "Why": "measured over one step"},
        ],
        notes="Why",
        alt="Two answers.",
    )


def test_a_tables_notes_go_in_a_list_below_it_named_by_each_rows_first_cell():
    at = AppTest.from_function(_with_notes).run()
    assert at.table[0].value.to_dict("records") == [
        {"Answer": "Rough rule", "Peak (GB)": "21.47"},
        {"Answer": "H200", "Peak (GB)": "25.89"},
    ]
    assert at.markdown[0].value == (
        "- **Rough rule:** it leaves out the embeddings\n- **H200:** measured over one step"
    )


def test_a_shared_table_is_built_once_per_key_and_is_the_same_table_after():
    built = []

    def build():
        built.append(1)
        return ROWS

    first = shared_table(("test", "shared once"), build)
    second = shared_table(("test", "shared once"), build)
    assert built == [1]
    assert second is first
    assert isinstance(first, pa.Table) and first.column("Tiles").to_pylist() == [4, 1]


def test_a_shared_table_of_mixed_kinds_is_rebuilt_each_time_so_nobody_can_change_anothers_rows():
    built = []

    def build():
        built.append(1)
        return [{"Value": 4}, {"Value": "none"}]

    first = shared_table(("test", "mixed"), build)
    first.append({"Value": "changed"})
    assert shared_table(("test", "mixed"), build) == [{"Value": 4}, {"Value": "none"}]
    assert built == [1, 1]


def test_the_shared_tables_forget_the_oldest_beyond_their_limit(monkeypatch):
    monkeypatch.setattr(tables, "MAX_SHARED_TABLES", 2)
    monkeypatch.setattr(tables, "_shared", tables.OrderedDict())
    for name in ("a", "b", "c"):
        shared_table(name, lambda: ROWS)
    assert list(tables._shared) == ["b", "c"]
