"""Learner ids and resume codes, and the retention command."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from store import LearnerStore
from store.ids import CODE_ALPHABET, is_learner_id, new_learner_id, new_resume_code, parse_code, show_code
from store.retention import main


def test_a_learner_id_is_128_random_bits_in_hex():
    ids = {new_learner_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and is_learner_id(i) for i in ids)


@pytest.mark.parametrize("value", [None, 7, "", "ABCDEF" * 6, "0" * 31, "0" * 33, "g" * 32, "0" * 32 + "\n"])
def test_anything_else_is_not_a_learner_id(value: object):
    assert not is_learner_id(value)


@given(st.text(max_size=40))
def test_any_typed_text_parses_to_a_code_or_to_nothing(typed: str):
    code = parse_code(typed)
    assert code is None or (len(code) == 16 and set(code) <= set(CODE_ALPHABET))


def test_a_shown_code_reads_back_with_look_alike_letters_forgiven():
    code = new_resume_code()
    shown = show_code(code)
    assert len(shown) == 19 and shown.count("-") == 3
    assert parse_code(shown.lower()) == code
    assert parse_code("O1IL-0000-0000-0000") == "0111000000000000"


def test_retention_prints_what_it_removed(store_url: str, capsys: pytest.CaptureFixture[str]):
    store = LearnerStore.open(store_url)
    idle, active = store.new_learner().id, store.new_learner().id
    store.add_answer(idle, "r1", "mem")
    store.add_answer(active, "r1", "mem")
    with store.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE learners SET updated_at = :t WHERE id = :i"),
            {"t": datetime.now(UTC) - timedelta(days=31), "i": idle},
        )
    assert main(["--days", "30", "--url", store_url]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Removed 1 learner with nothing saved in the last 30 days.")
    assert idle[:8] in printed and idle not in printed and active[:8] not in printed
    assert "1 row of work" in printed
    assert store.load(active)["answers"] == {"r1": "mem"}
    main(["--days", "30", "--url", store_url])
    assert capsys.readouterr().out.startswith("Removed 0 learners")


def test_retention_needs_a_positive_number_of_days(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main(["--days", "0"])
    assert "at least 1" in capsys.readouterr().err
