"""PyTorch's CUDA caching allocator, as far as a step's memory needs it (c10/cuda/CUDACachingAllocator.cpp
and its constants in c10/core/AllocatorConfig.h and CachingDeviceAllocator.h).

- Every request is rounded up to a multiple of 512 bytes (`round_size`, kMinBlockSize).
- Requests of up to 1 MiB come from the small pool, the rest from the large pool (`get_pool`).
- When no cached block fits, the allocator asks CUDA for a new segment (`get_allocation_size`): 2 MiB
  for a small request, 20 MiB for one under 10 MiB (to be split for the next ones), otherwise the
  request rounded up to 2 MiB. This segment is the "Tried to allocate" of the out-of-memory message,
  so a tensor of 294.47 MiB is reported as 296.00 MiB.
- A per-process cap (`torch.cuda.set_per_process_memory_fraction`) is checked in `alloc_block` against
  what the allocator has RESERVED from CUDA plus the new segment, never against what tensors hold;
  before raising, the allocator frees every cached segment nothing lives in and tries once more. What
  stays "reserved but unallocated" after that is the free part of segments that still hold a live block:
  fragmentation, which depends on the order of allocations and is allowed for, not counted
  (`core.memory.verdict.ALLOCATOR_RESERVE_BYTES`).
- The CUDA context, cuBLAS's handles and workspaces live outside the allocator: `nvidia-smi` and the
  message's "this process has … memory in use" count them, `memory_reserved()` does not, and the cap
  does not limit them.

`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` changes the segments, not the arithmetic of a step:
each stream gets one segment that grows by mapping 2 MiB (small pool) or 20 MiB (large pool) pages, and
an out-of-memory unmaps the pages nothing lives in. Slivers at the ends of many segments stop adding up,
so "reserved but unallocated" shrinks and a run near the line may pass; the tensors a step holds at its
peak, and so where a run far over the line dies, stay the same.
"""

from __future__ import annotations

MIN_BLOCK_BYTES = 512  # kMinBlockSize: every block is a multiple of this
SMALL_REQUEST_BYTES = 2**20  # kSmallSize: up to this, the small pool
SMALL_SEGMENT_BYTES = 2 * 2**20  # kSmallBuffer: the small pool's segments
LARGE_SEGMENT_BYTES = 20 * 2**20  # kLargeBuffer: the segment split for requests under MIN_LARGE_ALLOC_BYTES
MIN_LARGE_ALLOC_BYTES = 10 * 2**20  # kMinLargeAlloc
ROUND_LARGE_BYTES = 2 * 2**20  # kRoundLarge: larger requests get a segment of their size rounded to this


def block_bytes(request_bytes: int) -> int:
    """The block a request of `request_bytes` gets: rounded up to 512 bytes (at least 512)."""
    if request_bytes < 0:
        raise ValueError(f"A request cannot be negative, got {request_bytes} bytes.")
    return max(MIN_BLOCK_BYTES, -(-request_bytes // MIN_BLOCK_BYTES) * MIN_BLOCK_BYTES)


def pool_of(request_bytes: int) -> str:
    """ "small" or "large": the pool a request's block comes from."""
    return "small" if block_bytes(request_bytes) <= SMALL_REQUEST_BYTES else "large"


def segment_bytes(request_bytes: int) -> int:
    """The segment the allocator asks CUDA for when nothing cached fits a request: what "Tried to allocate"
    reports."""
    size = block_bytes(request_bytes)
    if size <= SMALL_REQUEST_BYTES:
        return SMALL_SEGMENT_BYTES
    if size < MIN_LARGE_ALLOC_BYTES:
        return LARGE_SEGMENT_BYTES
    return -(-size // ROUND_LARGE_BYTES) * ROUND_LARGE_BYTES


def over_the_cap(reserved_bytes: float, request_bytes: int, allowed_bytes: float) -> bool:
    """Whether a new segment for `request_bytes` takes what the allocator reserves past its cap."""
    return reserved_bytes + segment_bytes(request_bytes) > allowed_bytes
