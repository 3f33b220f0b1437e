"""The command-line estimate's fine-tuning and many-GPU flags: model state per GPU in the JSON, and the
phases and first failure of every method and sharding scheme."""

from __future__ import annotations

import json

import pytest

from core.datafiles import data_path
from core.estimate import main

LLAMA_1B = str(data_path("configs/llama-3.2-1b.json"))
RUN = ("--config", LLAMA_1B, "--batch", "1", "--seq", "512")
STATE_TERMS = ("weights", "gradients", "master_weights", "optimizer_state")
# Llama 3.2 1B: 1,235,814,400 parameters; hidden 2,048, 16 blocks, 32 query heads and 8 KV heads of 64.
PARAMETERS = 1_235_814_400


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict | str, str]:
    try:
        code = main([*RUN, *args])
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out and "--json" in args else out), err


def test_full_training_keeps_every_field_and_its_state_matches_the_optimizer_step(capsys) -> None:
    code, result, _ = _run(capsys, "--json")
    assert code == 0 and isinstance(result, dict)
    assert {"parameters", "peak_bytes", "phases", "terms", "moments"} <= set(result)
    assert result["trainable_parameters"] == result["parameters"] == PARAMETERS
    assert result["base_weight_bytes"] == 0
    step = result["terms"]["optimizer_step"]
    assert result["model_state_per_gpu"] == {t: step[t] for t in STATE_TERMS}
    assert "active_parameters" not in result


def test_lora_rank_16_on_attention(capsys) -> None:
    # Each block: q and o 16 × (2,048 + 2,048), k and v 16 × (2,048 + 512); 16 blocks: 3,407,872.
    code, result, _ = _run(capsys, "--method", "lora", "--lora-rank", "16", "--json")
    assert code == 0 and isinstance(result, dict)
    adapters = 16 * (2 * 16 * 4096 + 2 * 16 * 2560)
    assert result["trainable_parameters"] == adapters == 3_407_872
    assert result["base_weight_bytes"] == 2 * PARAMETERS  # BF16, the default precision
    assert result["model_state_per_gpu"] == {
        "weights": 2 * PARAMETERS + 4 * adapters,
        "gradients": 4 * adapters,
        "master_weights": 0,
        "optimizer_state": 8 * adapters,
    }
    assert {t: result["terms"]["optimizer_step"][t] for t in STATE_TERMS} == result["model_state_per_gpu"]


def test_fsdp_over_8_gpus_shards_everything_and_gathers_two_blocks(capsys) -> None:
    code, result, _ = _run(capsys, "--precision", "mixed16", "--gpus", "8", "--sharding", "fsdp", "--json")
    assert code == 0 and isinstance(result, dict)
    assert result["model_state_per_gpu"]["optimizer_state"] == 8 * PARAMETERS // 8
    block = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192 + 2 * 2048
    assert result["model_state_transients_per_gpu"] == {
        "gradient_buckets": 0,
        "gathered_block": 2 * 2 * block,
    }


def test_an_moe_config_gives_its_active_parameters(tmp_path, capsys) -> None:
    config = {
        "model_type": "mixtral",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 96,
        "vocab_size": 100,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code = main(["--config", str(path), "--batch", "1", "--seq", "8", "--json"])
    result = json.loads(capsys.readouterr().out)
    # Two of four experts' three 64 × 96 matrices in each of 2 blocks sit idle for a token.
    assert code == 0 and result["active_parameters"] == result["parameters"] - 2 * 2 * 3 * 64 * 96


def test_the_table_shows_the_state_per_gpu(capsys) -> None:
    code, out, _ = _run(capsys, "--method", "lora", "--gpus", "4", "--sharding", "ddp")
    assert code == 0 and "DDP gradient buckets" in str(out) and "4 GPU(s)" in str(out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--lora-rank", "8"), "--lora-rank and --lora-targets need --method lora or qlora"),
        (("--method", "lora", "--lora-rank", "0"), "LoRA rank must be a whole number"),
        (("--gpus", "8"), "8 GPUs need a sharding scheme"),
        (("--sharding", "zero4"), "invalid choice"),
        (
            ("--method", "lora", "--tensor-parallel", "2", "--gpus", "2"),
            "Tensor parallelism is counted for full training",
        ),
        (("--tensor-parallel", "3", "--gpus", "3"), "do not split over 3 tensor-parallel GPUs"),
        (("--method", "lora", "--freeze-blocks", "2"), "Freezing blocks is a choice for full training"),
        (("--method", "qlora", "--precision", "amp"), "QLoRA under autocast is not counted"),
    ],
)
def test_bad_input_is_one_line_and_status_2(capsys, args, message) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_qlora_stores_the_base_in_nf4_and_holds_less_than_lora_and_full(capsys) -> None:
    totals = {}
    for method in ("full", "lora", "qlora"):
        code, result, _ = _run(capsys, "--method", method, "--json")
        assert code == 0 and isinstance(result, dict)
        totals[method] = sum(result["model_state_per_gpu"].values())
    _, qlora, _ = _run(capsys, "--method", "qlora", "--json")
    assert isinstance(qlora, dict)
    # 973 M values of linear layers in a little over half a byte each; 262 M of embedding in BF16.
    assert 1.0e9 < qlora["base_weight_bytes"] < 1.05e9
    assert totals["qlora"] < totals["lora"] < totals["full"]


# One Llama 3.2 1B block: q and o 2,048², k and v 512 × 2,048, three MLP matrices 2,048 × 8,192, two norms.
BLOCK = 2 * 2048 * 2048 + 2 * 512 * 2048 + 3 * 2048 * 8192 + 2 * 2048
EMBEDDING = 128_256 * 2048  # tied to the output layer


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
def test_every_method_gets_phases_and_a_first_failure(capsys, method) -> None:
    _, fits, _ = _run(capsys, "--method", method, "--capacity-gib", "1000", "--json")
    _, fails, _ = _run(capsys, "--method", method, "--capacity-gib", "0.5", "--json")
    assert isinstance(fits, dict) and isinstance(fails, dict)
    assert fits["first_oom"] is None
    # Half a GiB holds no base model of 1.2 B parameters: step 1 fails before its forward gets going.
    assert fails["first_oom"] == {"step": 1, "phase": "forward"}
    assert fits["peak_bytes"] == fits["phases"]["optimizer_step"] == fails["peak_bytes"]


def test_freezing_four_blocks_freezes_the_tied_embedding_too(capsys) -> None:
    code, result, _ = _run(capsys, "--freeze-blocks", "4", "--json")
    assert code == 0 and isinstance(result, dict)
    frozen = EMBEDDING + 4 * BLOCK
    assert result["trainable_parameters"] == PARAMETERS - frozen == 729_860_096
    assert result["base_weight_bytes"] == 2 * frozen
    assert result["terms"]["optimizer_step"]["optimizer_state"] == 2 * 2 * (PARAMETERS - frozen)


def test_adamw8bit_keeps_a_byte_per_moment_and_an_absmax_per_256_values(capsys) -> None:
    code, result, _ = _run(capsys, "--optimizer", "adamw8bit", "--json")
    assert code == 0 and isinstance(result, dict)
    norms = 16 * 2 * 2048 + 2048  # under 4,096 values: two FP32 moments
    large = PARAMETERS - norms  # every matrix's size is a multiple of 256
    state = 2 * (large + 4 * large // 256) + 2 * 4 * norms + 2 * 4 * 256  # and the two shared maps
    assert result["terms"]["optimizer_step"]["optimizer_state"] == state == 2_510_653_440
    assert result["terms"]["optimizer_step"]["optimizer_transient"] == 0  # updated in place


def test_fsdp_and_ddp_terms_are_per_gpu(capsys) -> None:
    _, fsdp, _ = _run(capsys, "--gpus", "8", "--sharding", "fsdp", "--json")
    assert isinstance(fsdp, dict)
    # The forward's peak is in the loss, where no block is gathered; in the blocks it is.
    assert "gathered_block" not in fsdp["terms"]["forward"]
    assert fsdp["terms"]["optimizer_step"]["weights"] == 2 * PARAMETERS / 8
    _, ddp, _ = _run(capsys, "--gpus", "2", "--sharding", "ddp", "--json")
    assert isinstance(ddp, dict)
    assert all(ddp["terms"][p]["gradient_buckets"] == 2 * PARAMETERS for p in ddp["terms"])


def test_tensor_parallel_over_8_gpus_gives_each_gpu_an_eighth(capsys) -> None:
    # One tensor-parallel group of 8: each GPU keeps 1/8 of every matrix and of the (tied) embedding's
    # 128,256 rows, and the norms whole: 16 blocks × 2 + 1 norms of 2,048.
    code, result, _ = _run(capsys, "--gpus", "8", "--tensor-parallel", "8", "--json")
    assert code == 0 and isinstance(result, dict)
    norms = 33 * 2048
    assert result["tensor_parallel"] == 8 and result["data_parallel"] == 1
    assert result["model_state_per_gpu"]["weights"] == 2 * ((PARAMETERS - norms) // 8 + norms)
    assert result["trainable_parameters"] == PARAMETERS
    _, whole, _ = _run(capsys, "--json")
    assert isinstance(whole, dict)
    assert result["peak_bytes"] < whole["peak_bytes"] / 4
