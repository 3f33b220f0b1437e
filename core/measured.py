"""What PyTorch really allocated for small training runs, read from `data/measured_memory.csv`.

`tools/measure_memory.py` writes the file (one row per configuration and memory term, in bytes);
the app only reads it, so it never needs PyTorch at run time.
"""

from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.datafiles import read_csv_rows, require
from core.models import ModelSpec, check_spec

FILE_NAME = "measured_memory.csv"

COLUMNS = (
    "config_id",
    "family",
    "hidden",
    "layers",
    "heads",
    "kv_heads",
    "intermediate",
    "vocab",
    "seq_len",
    "batch",
    "dtype",
    "optimizer",
    "recompute",
    "attention",
    "term",
    "measured_bytes",
    "torch_version",
    "date",
)
_SPEC_COLUMNS = ("hidden", "layers", "heads", "kv_heads", "intermediate", "vocab")
_SIZE_COLUMNS = _SPEC_COLUMNS + ("seq_len", "batch")

# What each term holds, for a reader of the CSV or the page.
TERMS = {
    "parameters": "weights of the model, each shared tensor once",
    "gradients": "one gradient per weight after backward",
    "optimizer_state": "Adam's two moments or SGD's momentum buffer, one value per weight each",
    "optimizer_step_counters": "Adam's step count, one 4-byte scalar per weight tensor",
    "saved_activations_layers": "tensors the transformer blocks keep for backward, all blocks together",
    "saved_activations_other": "tensors the embedding, final norm, output layer and loss keep for backward",
    "cuda_peak_allocated": (
        "torch.cuda.max_memory_allocated over one whole step (only where a GPU was present)"
    ),
}
REQUIRED_TERMS = tuple(term for term in TERMS if term != "cuda_peak_allocated")

# What the family column stands for: the architecture fields that have no column of their own.
FAMILY_TRAITS: dict[str, dict[str, Any]] = {
    "gpt2": {
        "positions": 128,
        "tied_embeddings": True,
        "gated_mlp": False,
        "norm": "layernorm",
        "biases": True,
        "dropout": True,
    },
    "llama": {
        "positions": 0,
        "tied_embeddings": False,
        "gated_mlp": True,
        "norm": "rmsnorm",
        "biases": False,
        "dropout": False,
    },
}
FAMILIES = tuple(FAMILY_TRAITS)
DTYPES = ("fp32", "bf16")
OPTIMIZERS = ("adam", "sgd_momentum")
RECOMPUTE = ("none", "selective", "full")
# explicit: scores materialised, softmax, dropout; sdpa_*: F.scaled_dot_product_attention and the kernel it
# ran.
ATTENTION = ("explicit", "sdpa_flash", "sdpa_efficient", "sdpa_math")


def family_spec(
    family: str, *, hidden: int, layers: int, heads: int, kv_heads: int, intermediate: int, vocab: int
) -> ModelSpec:
    """The architecture of a measured GPT-2-style or Llama-style model of these sizes."""
    require(family in FAMILY_TRAITS, f"Unknown model family {family!r}: pick one of {', '.join(FAMILIES)}.")
    return check_spec(
        ModelSpec(
            name=family,
            hidden=hidden,
            layers=layers,
            heads=heads,
            kv_heads=kv_heads,
            intermediate=intermediate,
            vocab=vocab,
            published_params=None,
            source=f"a tiny {family}-style model built by tools/measure_memory.py",
            **FAMILY_TRAITS[family],
        )
    )


@dataclass(frozen=True)
class MeasuredRun:
    """One measured configuration and the bytes PyTorch held for each memory term."""

    config_id: str
    spec: ModelSpec  # its name is the family
    seq_len: int
    batch: int
    dtype: str
    optimizer: str
    recompute: str
    attention: str
    torch_version: str
    measured_on: datetime.date
    terms: tuple[tuple[str, int], ...]

    @property
    def terms_bytes(self) -> dict[str, int]:
        """Measured bytes keyed by term, in the order of `TERMS`."""
        return dict(self.terms)

    def term_bytes(self, term: str) -> int:
        """Measured bytes of one term; ValueError if this run did not record it."""
        found = self.terms_bytes
        require(term in found, f"{self.config_id} has no measurement of {term!r}; it has {', '.join(found)}.")
        return found[term]

    @property
    def layer_activation_bytes(self) -> int:
        """Bytes one transformer block keeps for backward (the blocks measured equal)."""
        return self.term_bytes("saved_activations_layers") // self.spec.layers

    @property
    def layer_activation_bytes_per_sbh(self) -> float:
        """One block's saved bytes over seq_len·batch·hidden, the unit Korthikanti et al. count in."""
        return self.layer_activation_bytes / (self.seq_len * self.batch * self.spec.hidden)


def _choice(row: dict[str, str], column: str, allowed: tuple[str, ...]) -> str:
    value = row[column]
    require(value in allowed, f"{row['config_id']}: {column} {value!r} is not one of {', '.join(allowed)}.")
    return value


def _whole_number(text: str, what: str, *, minimum: int) -> int:
    # Digits only: a unit suffix, a sign, a decimal point or an exponent is refused, not guessed.
    require(
        text.isascii() and text.isdigit(), f"{what} must be a whole number of bytes or items, got {text!r}."
    )
    require(int(text) >= minimum, f"{what} must be at least {minimum}, got {text}.")
    return int(text)


def _iso_date(text: str, what: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} must be an ISO date like 2025-01-31, got {text!r}.") from None


def _check_row(row: dict[str, str], line: int) -> None:
    require(
        None not in row and None not in row.values(),
        f"Data row {line} of {FILE_NAME} does not have exactly the {len(COLUMNS)} columns of the header.",
    )
    require(tuple(row) == COLUMNS, f"{FILE_NAME} must have the columns {', '.join(COLUMNS)}.")
    require(bool(row["config_id"]), f"Data row {line} of {FILE_NAME} has no config_id.")
    require(
        row["term"] in TERMS,
        f"{row['config_id']}: unknown term {row['term']!r}; known terms are {', '.join(TERMS)}.",
    )


def _terms(rows: list[dict[str, str]], name: str) -> dict[str, int]:
    counts = Counter(row["term"] for row in rows)
    repeated = sorted(term for term, count in counts.items() if count > 1)
    require(not repeated, f"{name} lists these terms more than once: {', '.join(repeated)}.")
    missing = [term for term in REQUIRED_TERMS if term not in counts]
    require(not missing, f"{name} is missing the terms {', '.join(missing)}.")
    return {
        row["term"]: _whole_number(row["measured_bytes"], f"{name} {row['term']}", minimum=0) for row in rows
    }


def _config(rows: list[dict[str, str]]) -> MeasuredRun:
    first = rows[0]
    name = first["config_id"]
    settings = [column for column in COLUMNS if column not in ("term", "measured_bytes")]
    for row in rows[1:]:
        differing = [column for column in settings if row[column] != first[column]]
        require(not differing, f"{name}: rows disagree on {', '.join(differing)}.")
    sizes = {column: _whole_number(first[column], f"{name} {column}", minimum=1) for column in _SIZE_COLUMNS}
    spec = family_spec(
        _choice(first, "family", FAMILIES), **{column: sizes[column] for column in _SPEC_COLUMNS}
    )
    measured = _terms(rows, name)
    require(
        measured["saved_activations_layers"] % spec.layers == 0,
        f"{name}: saved_activations_layers does not split evenly over {spec.layers} layers.",
    )
    require(bool(first["torch_version"]), f"{name} does not say which PyTorch measured it.")
    return MeasuredRun(
        config_id=name,
        spec=spec,
        seq_len=sizes["seq_len"],
        batch=sizes["batch"],
        dtype=_choice(first, "dtype", DTYPES),
        optimizer=_choice(first, "optimizer", OPTIMIZERS),
        recompute=_choice(first, "recompute", RECOMPUTE),
        attention=_choice(first, "attention", ATTENTION),
        torch_version=first["torch_version"],
        measured_on=_iso_date(first["date"], f"{name} date"),
        terms=tuple((term, measured[term]) for term in TERMS if term in measured),
    )


def parse_measured_rows(rows: list[dict[str, str]]) -> tuple[MeasuredRun, ...]:
    """Validated runs from CSV rows (schema, whole byte counts, known terms), in file order."""
    require(bool(rows), f"{FILE_NAME} holds no measurements.")
    by_config: dict[str, list[dict[str, str]]] = {}
    for line, row in enumerate(rows, start=1):
        _check_row(row, line)
        by_config.setdefault(row["config_id"], []).append(row)
    return tuple(_config(group) for group in by_config.values())


@lru_cache(maxsize=1)
def load_measured() -> tuple[MeasuredRun, ...]:
    """Every measured run in the committed CSV, read and validated once per process."""
    return parse_measured_rows(read_csv_rows(FILE_NAME))


def measured_ids() -> tuple[str, ...]:
    """The configuration ids in file order (the choices of a picker)."""
    return tuple(run.config_id for run in load_measured())


def measured_run(config_id: str) -> MeasuredRun:
    """The run called `config_id`; ValueError if the CSV has none."""
    for run in load_measured():
        if run.config_id == config_id:
            return run
    raise ValueError(f"No measured configuration is called {config_id!r}.")
