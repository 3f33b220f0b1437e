"""Whether a step fits a device: capacity as the device reports it, minus what PyTorch's tensors cannot use.

Two things sit between a card's memory and the tensors of a step: the CUDA context (≈ 0.65 GB on the
H200 reference, outside PyTorch's allocator: `nvidia-smi` counts it, `memory_allocated()` does not),
and the caching allocator's reserve, memory it holds but cannot hand out because freed blocks do not
fit the next request (`memory_reserved()` minus `memory_allocated()`). A per-process cap
(`torch.cuda.set_per_process_memory_fraction`) limits only what the allocator reserves, so there the
context is outside the cap.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.datafiles import require
from core.memory.budget import check_whole

GIB = 2**30
# An allowance, not a count: fragmentation depends on the order of allocations. PyTorch's own
# out-of-memory messages in the Run A runs report 19 MiB to 797 MiB "reserved but unallocated".
ALLOCATOR_RESERVE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Capacity:
    """Memory a step may use on one device: its total, less the CUDA context and the allocator reserve."""

    label: str
    total_bytes: int
    context_bytes: int
    reserve_bytes: int = ALLOCATOR_RESERVE_BYTES

    def __post_init__(self) -> None:
        check_whole(self.total_bytes, "Device memory in bytes")
        require(self.context_bytes >= 0 and self.reserve_bytes >= 0, "Overheads cannot be negative.")
        require(self.usable_bytes > 0, f"{self.label}: the overheads leave no memory for tensors.")

    @property
    def overhead_bytes(self) -> int:
        """The context and the allocator reserve together."""
        return self.context_bytes + self.reserve_bytes

    @property
    def usable_bytes(self) -> int:
        """What tensors may be allocated before the allocator raises out of memory."""
        return self.total_bytes - self.overhead_bytes

    @property
    def total_gb(self) -> float:
        """The total in decimal GB (1e9 bytes)."""
        return self.total_bytes / 1e9

    @property
    def total_gib(self) -> float:
        """The total in GiB (2^30 bytes), the unit PyTorch's messages use."""
        return self.total_bytes / GIB


def capped(gib: float, *, reserve_bytes: int = ALLOCATOR_RESERVE_BYTES) -> Capacity:
    """A process capped at `gib` GiB by `set_per_process_memory_fraction` (the context is outside it)."""
    require(gib > 0, f"A memory cap must be positive, got {gib!r} GiB.")
    return Capacity(
        label=f"{gib:g} GiB cap", total_bytes=int(gib * GIB), context_bytes=0, reserve_bytes=reserve_bytes
    )


def whole_card(label: str, total_bytes: int, *, context_bytes: int) -> Capacity:
    """A whole card: the CUDA context comes out of its memory as well."""
    return Capacity(label=label, total_bytes=total_bytes, context_bytes=context_bytes)
