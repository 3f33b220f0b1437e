"""The config.json a learner uses, as the store keeps it: the fields the count reads, the same model back."""

import json

import pytest

from core.client_values import check_record
from core.config_record import CONFIG_RECORD, MAX_STORED_CHARS, check_config_record, kept_config_text
from core.datafiles import DATA_DIR
from core.model_config import load_config_text
from core.questions import load_bank
from core.settings_schema import load_schema

PRESETS = sorted((DATA_DIR / "models").glob("*.json"))


@pytest.mark.parametrize("path", PRESETS, ids=lambda path: path.stem)
def test_every_published_config_is_kept_small_and_reads_back_as_the_same_model(path):
    text = path.read_text(encoding="utf-8")
    kept = kept_config_text(text)
    assert len(kept) <= MAX_STORED_CHARS
    assert load_config_text(kept) == load_config_text(text)
    assert check_record(CONFIG_RECORD, kept, bank=load_bank(), schema=load_schema()) == kept


def test_fields_the_count_never_reads_are_left_out():
    data = json.loads((DATA_DIR / "models" / "llama-3.2-1b.json").read_text(encoding="utf-8"))
    kept = json.loads(
        kept_config_text(json.dumps({**data, "id2label": {str(n): "x" * 50 for n in range(500)}}))
    )
    assert "id2label" not in kept and "bos_token_id" not in kept
    assert kept["hidden_size"] == 2048 and kept["model_type"] == "llama"


def test_a_record_that_is_not_a_config_we_can_read_is_refused():
    assert check_config_record(None) is None  # no config in use
    with pytest.raises(ValueError, match="model_type"):
        check_config_record('{"model_type": "t5"}')
    with pytest.raises(ValueError, match="must be text"):
        check_config_record({"model_type": "llama"})
    with pytest.raises(ValueError, match="longer than"):
        check_config_record(" " * (MAX_STORED_CHARS + 1))
