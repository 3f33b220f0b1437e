"""A measured run read as the detailed estimate's setup: the one place measured names meet the estimate's."""

from __future__ import annotations

from core.measured import MeasuredRun
from core.memory.setup import TrainingSetup
from core.models import ModelSpec

# Every measured run keeps all its copies in one dtype (fp32, or a model cast to bf16); the math SDPA
# kernel materialises the scores as written-out attention does.
PRECISION_OF_DTYPE = {"fp32": "fp32", "bf16": "bf16"}
ATTENTION_OF_KIND = {
    "explicit": "standard",
    "sdpa_math": "standard",
    "sdpa_flash": "memory_efficient",
    "sdpa_efficient": "memory_efficient",
}
FUSED_ATTENTION_KINDS = ("sdpa_flash", "sdpa_efficient")


def setup_for(run: MeasuredRun) -> TrainingSetup:
    """The detailed estimate's setup for a measured run: same shape, number format, optimizer and settings."""
    return TrainingSetup(
        model=run.spec,
        precision=PRECISION_OF_DTYPE[run.dtype],
        optimizer=run.optimizer,
        micro_batch=run.batch,
        seq_len=run.seq_len,
        recompute=run.recompute,
        attention=ATTENTION_OF_KIND[run.attention],
        runtime_overhead_gb=0.0,
    )


def weight_tensor_count(spec: ModelSpec) -> int:
    """Weight tensors of the model as the measuring tool builds it (one fused QKV projection)."""
    per_norm = 2 if spec.norm == "layernorm" else 1
    linears = 2 + (3 if spec.gated_mlp else 2)  # QKV and output projection, then the MLP's matrices
    biases = (2 + 2) if spec.biases else 0  # QKV, projection, MLP up and down
    per_block = 2 * per_norm + linears + biases
    embeddings = 1 + (1 if spec.positions else 0) + (0 if spec.tied_embeddings else 1)
    return embeddings + spec.layers * per_block + per_norm
