"""The caching allocator's rounding, worked from its constants, against the sizes Run A's messages report."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.allocator import block_bytes, over_the_cap, pool_of, segment_bytes

MIB = 2**20


def test_blocks_round_up_to_512_bytes():
    assert block_bytes(0) == 512 and block_bytes(1) == 512 and block_bytes(512) == 512
    assert block_bytes(513) == 1024
    with pytest.raises(ValueError):
        block_bytes(-1)


def test_pools_and_segments():
    assert pool_of(MIB) == "small" and pool_of(MIB + 1) == "large"
    assert segment_bytes(4) == 2 * MIB  # a small request: a 2 MiB segment
    assert segment_bytes(3 * MIB) == 20 * MIB  # 1 to 10 MiB: a 20 MiB segment to split
    assert segment_bytes(10 * MIB) == 10 * MIB
    assert segment_bytes(10 * MIB + 1) == 12 * MIB


def test_run_a_backward_block_is_the_logits_gradient_rounded_to_2_mib():
    # 1 × 1536 tokens × 50,257 vocabulary × 4 bytes = 308,779,008 B = 294.47 MiB; the message says 296.00 MiB
    assert segment_bytes(1 * 1536 * 50257 * 4) == 296 * MIB
    # Adam's state for one MLP matrix (3072 × 12288 FP32): the 144.00 MiB of every optimizer.step() failure
    assert segment_bytes(3072 * 12288 * 4) == 144 * MIB


def test_the_cap_counts_reserved_memory_and_the_new_segment():
    cap = 24 * 2**30
    assert over_the_cap(cap - 100 * MIB, 99 * MIB, cap) is False
    assert over_the_cap(cap - 100 * MIB, 100 * MIB + 1, cap) is True  # 100 MiB + 1 B gets a 102 MiB segment


@given(st.integers(0, 2**40))
def test_a_segment_holds_its_block_and_is_whole_2_mib(size):
    segment = segment_bytes(size)
    assert segment >= block_bytes(size) >= size
    assert segment % (2 * MIB) == 0
