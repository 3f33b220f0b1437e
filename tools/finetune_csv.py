"""The fine-tuning measurement's CSV (tools/measure_gpu.py writes it, tools/compare_finetune.py reads it):
memory.csv's columns, then what the row trains, and a row's label. Kept free of torch, so the comparison
runs anywhere."""

from __future__ import annotations

from collections.abc import Mapping

from core.memory.reference import COLUMNS, CONFIG_FILES

# The reference's models, and Qwen3 (QK-norm) among the families people fine-tune.
MODEL_CONFIGS = {**CONFIG_FILES, "Qwen3-0.6B": "models/qwen3-0.6b.json"}
# method: full, lora or qlora; lora_rank and lora_targets are blank for full training; freeze_blocks: the
# first K blocks frozen (full training); optim: adamw or adamw8bit, named as run_a.csv names its optimizer
# (memory.csv's `optimizer` is the bytes of its state); prepare_kbit: yes when peft's
# prepare_model_for_kbit_training ran (QLoRA).
TRAINING_COLUMNS = ("method", "lora_rank", "lora_targets", "freeze_blocks", "optim", "prepare_kbit")
FINETUNE_COLUMNS = (*COLUMNS, *TRAINING_COLUMNS, "trainable_params")


def row_label(row: Mapping[str, str]) -> str:
    """The row's setup in a few words, e.g. 'Llama-3.2-1B 2×2048 bf16 sdpa qlora r16 all-linear'."""
    words = [row["model"], f"{row['batch']}×{row['seq']}", row["mode"], row["attn"], row["method"]]
    if row["recompute"] != "none":
        words.append(f"recompute {row['recompute']}")
    if row["lora_rank"]:
        words += [f"r{row['lora_rank']}", row["lora_targets"]]
    if row["freeze_blocks"] not in ("", "0"):
        words.append(f"first {row['freeze_blocks']} blocks frozen")
    if row["optim"] != "adamw":
        words.append(row["optim"])
    if row["prepare_kbit"] == "yes":
        words.append("prepare_model_for_kbit_training")
    return " ".join(words)
