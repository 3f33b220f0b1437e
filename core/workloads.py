"""What single operations cost: FLOPs done and bytes moved, for a linear layer and its neighbours.

Bytes moved are the least traffic one pass needs: every input read once from device memory and
every output written once. Arithmetic intensity is FLOPs per byte of that traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require
from core.gpus import bytes_per_value

# Training a layer costs about three forward passes: the forward itself, then the backward
# pass computes two products of the same size (gradients for the inputs and for the weights).
TRAINING_FLOPS_PER_FORWARD = 3

# GELU in its exact form, 0.5 * x * (1 + erf(x / sqrt 2)), counting erf as one operation:
# scale, erf, add one, multiply by x, halve.
GELU_FLOPS_PER_ELEMENT = 5

# LayerNorm per element: add into the mean, subtract it, square, add into the variance,
# multiply by 1/std, multiply by the gain, add the bias (per-row work is negligible).
LAYER_NORM_FLOPS_PER_ELEMENT = 7

BYTES_PER_MB = 1e6
FLOPS_PER_GFLOP = 1e9


def _size(value: int, what: str) -> int:
    is_whole = isinstance(value, int) and not isinstance(value, bool)
    require(is_whole and value > 0, f"{what} must be a whole number above zero, got {value!r}.")
    return value


@dataclass(frozen=True)
class Workload:
    """One operation as the roofline sees it: the arithmetic it does and the bytes it moves."""

    name: str
    flops: int
    read_bytes: int
    written_bytes: int

    @property
    def moved_bytes(self) -> int:
        """Bytes read plus bytes written."""
        return self.read_bytes + self.written_bytes

    @property
    def flop_per_byte(self) -> float:
        """Arithmetic intensity over all the traffic (the roofline's x axis)."""
        return self.flops / self.moved_bytes

    @property
    def flop_per_byte_read(self) -> float:
        """Arithmetic intensity counting only the inputs read."""
        return self.flops / self.read_bytes

    @property
    def gflop(self) -> float:
        """FLOPs in billions."""
        return self.flops / FLOPS_PER_GFLOP

    @property
    def read_mb(self) -> float:
        """Bytes read, in decimal MB."""
        return self.read_bytes / BYTES_PER_MB

    @property
    def written_mb(self) -> float:
        """Bytes written, in decimal MB."""
        return self.written_bytes / BYTES_PER_MB

    @property
    def moved_mb(self) -> float:
        """Bytes read and written, in decimal MB."""
        return self.moved_bytes / BYTES_PER_MB


@dataclass(frozen=True)
class LinearLayerCost:
    """What one `nn.Linear(n_in, m_out)` costs on a batch: arithmetic, parameters, memory traffic."""

    n_in: int
    m_out: int
    batch: int
    macs: int
    parameters: int
    value_bytes: int  # bytes a value takes in the number format the layer is costed in
    forward: Workload

    @property
    def flops(self) -> int:
        """Forward FLOPs: a multiply and an add per MAC."""
        return self.forward.flops

    @property
    def training_flops(self) -> int:
        """Forward plus backward FLOPs, by the three-forwards rule of thumb."""
        return TRAINING_FLOPS_PER_FORWARD * self.flops

    @property
    def gflop(self) -> float:
        """Forward FLOPs in billions."""
        return self.forward.gflop

    @property
    def training_gflop(self) -> float:
        """Training FLOPs in billions."""
        return self.training_flops / FLOPS_PER_GFLOP

    @property
    def parameters_millions(self) -> float:
        """Parameters in millions."""
        return self.parameters / 1e6

    def weight_mb(self, value_bytes: int) -> float:
        """Weights and biases at `value_bytes` bytes a value, in decimal MB."""
        return value_bytes * self.parameters / BYTES_PER_MB

    @property
    def weight_mb_chosen(self) -> float:
        """Weights and biases in the number format the layer was costed in, in decimal MB."""
        return self.weight_mb(self.value_bytes)

    @property
    def other_value_bytes(self) -> int:
        """The other size a weight is commonly kept in: 2 bytes beside FP32, 4 beside a 2-byte format."""
        return 2 if self.value_bytes == 4 else 4


def linear_layer(*, n_in: int, m_out: int, batch: int, dtype: str) -> LinearLayerCost:
    """Cost of a linear layer's forward pass on `batch` rows; traffic counted in `dtype`."""
    n_in, m_out, batch = _size(n_in, "Inputs (n)"), _size(m_out, "Outputs (m)"), _size(batch, "Batch (B)")
    size = bytes_per_value(dtype)
    macs = batch * m_out * n_in
    parameters = m_out * n_in + m_out  # a weight per input per output, and one bias per output
    forward = Workload(
        name="Your linear layer",
        flops=2 * macs,
        read_bytes=(batch * n_in + parameters) * size,
        written_bytes=batch * m_out * size,
    )
    return LinearLayerCost(
        n_in=n_in,
        m_out=m_out,
        batch=batch,
        macs=macs,
        parameters=parameters,
        value_bytes=size,
        forward=forward,
    )


def square_matmul(*, size: int, dtype: str) -> Workload:
    """An N x N by N x N matrix multiply: 2·N³ FLOPs, two matrices read, one written."""
    n = _size(size, "Matrix size (N)")
    matrix_bytes = n * n * bytes_per_value(dtype)
    return Workload(
        name=f"{n}×{n} matmul", flops=2 * n**3, read_bytes=2 * matrix_bytes, written_bytes=matrix_bytes
    )


def _elementwise(name: str, *, elements: int, flops_per_element: int, dtype: str) -> Workload:
    tensor_bytes = _size(elements, "Number of elements") * bytes_per_value(dtype)
    return Workload(
        name=name, flops=flops_per_element * elements, read_bytes=tensor_bytes, written_bytes=tensor_bytes
    )


def gelu(*, elements: int, dtype: str) -> Workload:
    """GELU applied to every element of a tensor: read it once, write the result once."""
    return _elementwise("GELU", elements=elements, flops_per_element=GELU_FLOPS_PER_ELEMENT, dtype=dtype)


def layer_norm(*, rows: int, width: int, dtype: str) -> Workload:
    """LayerNorm over the last dimension of a rows × width tensor, with a gain and bias per column."""
    rows, width = _size(rows, "Rows"), _size(width, "Width")
    size = bytes_per_value(dtype)
    tensor_bytes = rows * width * size
    return Workload(
        name="LayerNorm",
        flops=LAYER_NORM_FLOPS_PER_ELEMENT * rows * width,
        read_bytes=tensor_bytes + 2 * width * size,
        written_bytes=tensor_bytes,
    )


@dataclass(frozen=True)
class Fusion:
    """A chain of elementwise ops run as separate kernels, and the same chain fused into one."""

    ops: int
    separate: Workload
    fused: Workload

    @property
    def traffic_ratio(self) -> float:
        """Fused bytes as a fraction of separate bytes (1/ops)."""
        return self.fused.moved_bytes / self.separate.moved_bytes

    @property
    def traffic_percent(self) -> float:
        """Fused bytes as a percentage of separate bytes."""
        return 100 * self.traffic_ratio


def fused_elementwise(*, ops: int, elements: int, dtype: str) -> Fusion:
    """`ops` one-FLOP elementwise ops on a tensor: each kernel reads and writes it, or one kernel does."""
    ops = _size(ops, "Number of operations")
    one = _elementwise("one op", elements=elements, flops_per_element=1, dtype=dtype)
    separate = Workload(
        f"{ops} separate kernels", ops * one.flops, ops * one.read_bytes, ops * one.written_bytes
    )
    fused = Workload(f"{ops} ops, one kernel", ops * one.flops, one.read_bytes, one.written_bytes)
    return Fusion(ops=ops, separate=separate, fused=fused)


@dataclass(frozen=True)
class AttentionScores:
    """The S × S score matrix of one attention head, which plain attention stores in device memory."""

    seq_len: int
    matrix_bytes: int

    @property
    def matrix_mb(self) -> float:
        """Size of one head's score matrix, in decimal MB."""
        return self.matrix_bytes / BYTES_PER_MB

    @property
    def round_trip_mb(self) -> float:
        """Written out, then read back for the softmax: twice the matrix, in decimal MB."""
        return 2 * self.matrix_mb


def attention_scores(*, seq_len: int, dtype: str) -> AttentionScores:
    """One head's score matrix at sequence length `seq_len`: the traffic FlashAttention avoids."""
    seq_len = _size(seq_len, "Sequence length (S)")
    return AttentionScores(seq_len=seq_len, matrix_bytes=seq_len * seq_len * bytes_per_value(dtype))
